/**
 * /player [tag] [view] [member]: a player's profile with its card, brawlers (paged, with brawler
 * images), battle log, ranks, season progress, charts, and the premium log and push views.
 */
import { z } from 'zod';
import { ApplicationCommandOptionType } from 'discord-api-types/v10';
import { PLAYER_CHART_OPTIONS } from '../src/render/catalogue.ts';
import { defineCommand, type CommandContext } from '../src/bot/command.ts';
import { orNotFound, staleNote } from '../src/bot/errors.ts';
import { pager, viewChoices, viewKey, viewMenu, type ViewTable } from '../src/bot/embeds/common.ts';
import { described } from '../src/bot/localize.ts';
import { battleLogEmbed, brawlersEmbed, imageEmbed, profileEmbed, ranksEmbed, type BrawlerSort } from '../src/bot/embeds/player.ts';
import { logEmbed, pushEmbed } from '../src/bot/history-views.ts';
import { linkedTagChoices, playerTagFor, requirePremium } from '../src/bot/lookup.ts';
import type { ReplyView, ViewComponent, ViewFile } from '../src/bot/view.ts';

const VIEWS = {
  profile: { emoji: '🪪', premium: false },
  brawlers: { emoji: '🧩', premium: false },
  battlelog: { emoji: '⚔️', premium: false },
  ranks: { emoji: '🎖️', premium: false },
  season: { emoji: '📅', premium: false },
  charts: { emoji: '📈', premium: false },
  log: { emoji: '📜', premium: true },
  push: { emoji: '🚀', premium: true },
} as const satisfies ViewTable;
type View = keyof typeof VIEWS;

/** Brawler images offered on the brawlers view (the profile card and season image have views). */
const BRAWLER_IMAGES = [3, 8, 9, 4, 41, 6, 13, 14] as const;

const Args = z.object({
  tag: z.string().optional(),
  member: z.string().optional(),
  view: z.enum(Object.keys(VIEWS) as [View, ...View[]]).default('profile'),
  page: z.number().int().min(1).max(1000).optional(),
  sort: z.enum(['trophies', 'power', 'rank', 'name']).optional(),
  image: z.number().int().optional(),
  chart: z.number().int().optional(),
});
type Args = z.infer<typeof Args>;


async function picture(name: string, make: () => Promise<{ png: Buffer }>): Promise<ViewFile> {
  return { name, data: (await make()).png };
}

async function run(a: Args, ctx: CommandContext): Promise<ReplyView> {
  const tag = await playerTagFor(ctx, a.tag, a.member);
  if (VIEWS[a.view].premium) requirePremium(ctx, viewKey('player', a.view));
  const fetched = await orNotFound('player', tag, () => ctx.core.stats.player(tag));
  const p = fetched.data;
  const { fmt } = ctx;
  const note = staleNote(fetched, fmt);
  const rows: ViewComponent[][] = [[viewMenu('player', p.tag, VIEWS, a.view, fmt)]];
  const view: ReplyView = { rows, ...(note ? { content: note } : {}) };

  switch (a.view) {
    case 'profile': {
      const [card, brawlers] = await Promise.all([
        picture('player.png', () => ctx.core.images.playerImage(p.tag, 1, 'high', {}, fmt.lang)),
        ctx.core.stats.brawlers().catch(() => undefined),
      ]);
      view.embeds = [profileEmbed(p, fmt, { brawlerTotal: brawlers?.data.items.length, image: card.name, fetchedAt: fetched.fetchedAt })];
      view.files = [card];
      break;
    }
    case 'brawlers': {
      const sort: BrawlerSort = a.sort ?? 'trophies';
      const option = a.image !== undefined && (BRAWLER_IMAGES as readonly number[]).includes(a.image) ? a.image : undefined;
      const img = option ? await picture(`brawlers-${option}.png`, () => ctx.core.images.playerImage(p.tag, option, 'high', {}, fmt.lang)) : undefined;
      const { embed, page, pages } = brawlersEmbed(p, fmt, { page: a.page, sort, image: img?.name, fetchedAt: fetched.fetchedAt });
      view.embeds = [embed];
      if (img) view.files = [img];
      const base = { tag: p.tag, view: 'brawlers', sort, ...(option ? { image: option } : {}) };
      rows.push([
        {
          type: 'select',
          placeholder: fmt.t('player.imageMenu'),
          options: BRAWLER_IMAGES.map((o) => ({
            label: fmt.t(`picture.player.${o}`),
            description: fmt.t(`picture.player.${o}.hint`),
            selected: o === option,
            action: { command: 'player', args: { ...base, image: o, page } },
          })),
        },
      ]);
      rows.push([
        {
          type: 'select',
          placeholder: fmt.t('player.sortMenu'),
          options: (['trophies', 'power', 'rank', 'name'] as const).map((s) => ({
            label: fmt.t('sort.by', { what: fmt.t(`sort.${s}`) }),
            selected: s === sort,
            action: { command: 'player', args: { ...base, sort: s } },
          })),
        },
      ]);
      rows.push(pager('player', base, page, pages, fmt));
      break;
    }
    case 'battlelog': {
      const log = await orNotFound('player', p.tag, () => ctx.core.stats.battlelog(p.tag));
      const { embed, page, pages } = battleLogEmbed(p, log.data, fmt, { page: a.page, fetchedAt: log.fetchedAt });
      view.embeds = [embed];
      rows.push(pager('player', { tag: p.tag, view: 'battlelog' }, page, pages, fmt));
      break;
    }
    case 'ranks': {
      const img = await picture('ranks.png', () => ctx.core.images.playerImage(p.tag, 4, 'high', {}, fmt.lang));
      view.embeds = [ranksEmbed(p, fmt, { image: img.name, fetchedAt: fetched.fetchedAt })];
      view.files = [img];
      break;
    }
    case 'season': {
      const img = await picture('season.png', () => ctx.core.images.playerImage(p.tag, 10, 'high', {}, fmt.lang));
      view.embeds = [imageEmbed(p, fmt, { heading: fmt.t('view.player.season'), image: img.name, note: fmt.t('picture.player.10.hint'), fetchedAt: fetched.fetchedAt })];
      view.files = [img];
      break;
    }
    case 'charts': {
      const option = a.chart !== undefined && a.chart in PLAYER_CHART_OPTIONS ? (a.chart as keyof typeof PLAYER_CHART_OPTIONS) : 1;
      const img = await picture(`chart-${option}.png`, () => ctx.core.images.playerChart(p.tag, option, {}, 'high', {}, fmt.lang));
      view.embeds = [
        imageEmbed(p, fmt, { heading: fmt.t(`chart.player.${option}`), image: img.name, note: fmt.t(`chart.player.${option}.hint`), fetchedAt: fetched.fetchedAt }),
      ];
      view.files = [img];
      rows.push([
        {
          type: 'select',
          placeholder: fmt.t('player.chartMenu'),
          options: (Object.keys(PLAYER_CHART_OPTIONS).map(Number) as (keyof typeof PLAYER_CHART_OPTIONS)[]).map((o) => ({
            label: fmt.t(`chart.player.${o}`),
            description: fmt.t(`chart.player.${o}.hint`),
            selected: o === option,
            action: { command: 'player', args: { tag: p.tag, view: 'charts', chart: o } },
          })),
        },
      ]);
      break;
    }
    case 'log':
    case 'push': {
      view.embeds = [a.view === 'log' ? await logEmbed(ctx, 'player', p.tag, p.name) : await pushEmbed(ctx, p)];
      break;
    }
  }
  return view;
}

export default defineCommand({
  definition: {
    name: 'player',
    ...described('command.player'),
    contexts: [0, 1],
    options: [
      {
        type: ApplicationCommandOptionType.String,
        name: 'tag',
        ...described('command.player.tag'),
        autocomplete: true,
        max_length: 20,
      },
      {
        type: ApplicationCommandOptionType.String,
        name: 'view',
        ...described('command.player.view'),
        choices: viewChoices('player', VIEWS),
      },
      { type: ApplicationCommandOptionType.User, name: 'member', ...described('command.player.member') },
    ],
  },
  args: Args,
  cooldownSeconds: 3,
  run,
  autocomplete: async (focused, ctx) => (focused.name === 'tag' ? linkedTagChoices(ctx, focused.value) : []),
});
