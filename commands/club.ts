/**
 * /club show [tag] [view]: a club's overview with its card, members (paged), trophy and member
 * charts, and the premium log. /club activity [tag] [days]: each member's gain, battles, days since
 * play and joined date (premium), sortable by buttons, with the whole table as CSV. Without a tag:
 * the club of the member's linked account.
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
import { activityCsv, activityEmbed, activityFileName } from '../src/bot/embeds/club-activity.ts';
import { ACTIVITY_DAYS } from '../src/core/club-activity.ts';
import { ACTIVITY_SORTS } from '../src/core/history-schemas.ts';
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
  /** component actions of the overview's buttons and menus predate the subcommands: they mean `show` */
  sub: z.enum(['show', 'activity']).default('show'),
  tag: z.string().optional(),
  days: z.number().int().min(ACTIVITY_DAYS.min).max(ACTIVITY_DAYS.max).optional(),
  sort: z.enum(ACTIVITY_SORTS).optional(),
  member: z.string().optional(),
  view: z.enum(Object.keys(VIEWS) as [View, ...View[]]).default('overview'),
  page: z.number().int().min(1).max(100).optional(),
  portrait: z.boolean().optional(),
});
type Args = z.infer<typeof Args>;


const SORT_EMOJI = { inactivity: '💤', gain: '🏆', battles: '⚔️' } as const;

async function activity(a: Args, ctx: CommandContext): Promise<ReplyView> {
  const tag = await clubTagFor(ctx, a.tag, a.member);
  requirePremium(ctx, 'activity.name');
  const days = a.days ?? ACTIVITY_DAYS.default;
  const sort = a.sort ?? 'inactivity';
  const thresholds = ctx.guild?.activity ?? {};
  // The club as the game's API has it now first: recorded, so the table, the picture and the
  // current roster agree (the history alone may be one poll behind).
  const live = await orNotFound('club', tag, () => ctx.core.stats.club(tag));
  const fetched = await ctx.core.history.clubActivity(live.data.tag, { days, sort, thresholds });
  const data = fetched.data;
  const { fmt } = ctx;
  const note = staleNote(live, fmt);
  const png = (await ctx.core.images.clubImage(data.tag, 3, 'high', {}, fmt.lang)).png;
  return {
    ...(note ? { content: note } : {}),
    embeds: [activityEmbed(data, fmt, { fetchedAt: live.fetchedAt, image: 'activity.png' })],
    files: [
      { name: 'activity.png', data: png, description: fmt.t('picture.club.3') },
      { name: activityFileName(data), data: activityCsv(data), description: fmt.t('activity.csv') },
    ],
    rows: [
      ACTIVITY_SORTS.map((s) => ({
        type: 'button' as const,
        label: fmt.t(`activity.sort.${s}`),
        emoji: SORT_EMOJI[s],
        style: s === sort ? ('primary' as const) : ('secondary' as const),
        disabled: s === sort,
        action: { command: 'club', args: { sub: 'activity', tag: data.tag, days, sort: s } },
      })),
    ],
  };
}

async function run(a: Args, ctx: CommandContext): Promise<ReplyView> {
  if (a.sub === 'activity') return activity(a, ctx);
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
      {
        type: ApplicationCommandOptionType.Subcommand,
        name: 'show',
        ...described('command.club.show'),
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
      {
        type: ApplicationCommandOptionType.Subcommand,
        name: 'activity',
        ...described('command.club.activity'),
        options: [
          { type: ApplicationCommandOptionType.String, name: 'tag', ...described('command.club.tag'), max_length: 20 },
          {
            type: ApplicationCommandOptionType.Integer,
            name: 'days',
            ...described('command.club.activity.days'),
            min_value: ACTIVITY_DAYS.min,
            max_value: ACTIVITY_DAYS.max,
          },
          { type: ApplicationCommandOptionType.User, name: 'member', ...described('command.club.member') },
        ],
      },
    ],
  },
  args: Args,
  cooldownSeconds: 3,
  run,
});
