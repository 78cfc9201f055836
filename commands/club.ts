/**
 * /club [tag] [view]: a club's overview with its card, members (paged), trophy and member charts,
 * and the premium log. Without a tag: the club of the member's linked account.
 */
import { z } from 'zod';
import { ApplicationCommandOptionType } from 'discord-api-types/v10';
import type { CLUB_CHART_OPTIONS } from '../src/render/catalogue.ts';
import { defineCommand, type CommandContext } from '../src/bot/command.ts';
import { orNotFound, staleNote } from '../src/bot/errors.ts';
import { pager, viewChoices, viewKey, viewMenu, type ViewTable } from '../src/bot/embeds/common.ts';
import { described } from '../src/bot/localize.ts';
import { clubEmbed, clubImageEmbed, membersEmbed } from '../src/bot/embeds/club.ts';
import { logEmbed } from '../src/bot/history-views.ts';
import { clubTagFor, requirePremium } from '../src/bot/lookup.ts';
import type { ReplyView, ViewComponent } from '../src/bot/view.ts';

const VIEWS = {
  overview: { emoji: '🛡️', premium: false },
  members: { emoji: '👥', premium: false },
  trophies: { emoji: '📈', premium: false },
  membership: { emoji: '📊', premium: false },
  log: { emoji: '📜', premium: true },
} as const satisfies ViewTable;
type View = keyof typeof VIEWS;

/** Which club chart option each chart view draws. */
const CHART_OF: Partial<Record<View, keyof typeof CLUB_CHART_OPTIONS>> = { trophies: 1, membership: 2 };

const Args = z.object({
  tag: z.string().optional(),
  member: z.string().optional(),
  view: z.enum(Object.keys(VIEWS) as [View, ...View[]]).default('overview'),
  page: z.number().int().min(1).max(100).optional(),
  portrait: z.boolean().optional(),
});
type Args = z.infer<typeof Args>;


async function run(a: Args, ctx: CommandContext): Promise<ReplyView> {
  const tag = await clubTagFor(ctx, a.tag, a.member);
  if (VIEWS[a.view].premium) requirePremium(ctx, viewKey('club', a.view));
  const fetched = await orNotFound('club', tag, () => ctx.core.stats.club(tag));
  const c = fetched.data;
  const { fmt } = ctx;
  const note = staleNote(fetched, fmt);
  const rows: ViewComponent[][] = [[viewMenu('club', c.tag, VIEWS, a.view, fmt)]];
  const view: ReplyView = { rows, ...(note ? { content: note } : {}) };
  const images = ctx.core.images;

  switch (a.view) {
    case 'overview': {
      const option = a.portrait ? 200 : 2;
      const png = (await images.clubImage(c.tag, option, 'high', {}, fmt.lang)).png;
      view.embeds = [clubEmbed(c, fmt, { image: 'club.png', fetchedAt: fetched.fetchedAt })];
      view.files = [{ name: 'club.png', data: png, description: fmt.t(`picture.club.${option}`) }];
      rows.push([
        {
          type: 'button',
          label: fmt.t(a.portrait ? 'club.landscape' : 'club.portrait'),
          emoji: '🔄',
          action: { command: 'club', args: { tag: c.tag, view: 'overview', portrait: !a.portrait } },
        },
      ]);
      break;
    }
    case 'members': {
      const { embed, page, pages } = membersEmbed(c, fmt, { page: a.page, fetchedAt: fetched.fetchedAt });
      view.embeds = [embed];
      rows.push(pager('club', { tag: c.tag, view: 'members' }, page, pages, fmt));
      break;
    }
    case 'trophies':
    case 'membership': {
      const option = CHART_OF[a.view]!;
      const png = (await images.clubChart(c.tag, option, {}, 'high', {}, fmt.lang)).png;
      view.embeds = [
        clubImageEmbed(c, fmt, { heading: fmt.t(`chart.club.${option}`), image: 'chart.png', note: fmt.t(`chart.club.${option}.hint`), fetchedAt: fetched.fetchedAt }),
      ];
      view.files = [{ name: 'chart.png', data: png }];
      break;
    }
    case 'log':
      view.embeds = [await logEmbed(ctx, 'club', c.tag, c.name)];
      break;
  }
  return view;
}

export default defineCommand({
  definition: {
    name: 'club',
    ...described('command.club'),
    contexts: [0, 1],
    options: [
      { type: ApplicationCommandOptionType.String, name: 'tag', ...described('command.club.tag'), max_length: 20 },
      {
        type: ApplicationCommandOptionType.String,
        name: 'view',
        ...described('command.club.view'),
        choices: viewChoices('club', VIEWS),
      },
      { type: ApplicationCommandOptionType.User, name: 'member', ...described('command.club.member') },
    ],
  },
  args: Args,
  cooldownSeconds: 3,
  run,
});
