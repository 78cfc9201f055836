/**
 * /player [tag] [view] [member]: a player's profile with its card, brawlers (paged, with brawler
 * images), battle log, ranks, season progress, charts, and the premium log and push views.
 */
import { z } from 'zod';
import { ApplicationCommandOptionType } from 'discord-api-types/v10';
import { PLAYER_CHART_OPTIONS, PLAYER_IMAGE_OPTIONS } from '../src/render/catalogue.ts';
import { defineCommand, type CommandContext } from '../src/bot/command.ts';
import { orNotFound, staleNote } from '../src/bot/errors.ts';
import { pager, viewChoices, viewMenu, type ViewTable } from '../src/bot/embeds/common.ts';
import { battleLogEmbed, brawlersEmbed, imageEmbed, profileEmbed, ranksEmbed, type BrawlerSort } from '../src/bot/embeds/player.ts';
import { logEmbed, pushEmbed } from '../src/bot/history-views.ts';
import { linkedTagChoices, playerTagFor, requirePremium } from '../src/bot/lookup.ts';
import type { ReplyView, ViewComponent, ViewFile } from '../src/bot/view.ts';

const VIEWS = {
  profile: { label: 'Profile', emoji: '🪪', premium: false },
  brawlers: { label: 'Brawlers', emoji: '🧩', premium: false },
  battlelog: { label: 'Battle log', emoji: '⚔️', premium: false },
  ranks: { label: 'Ranks', emoji: '🎖️', premium: false },
  season: { label: 'Season progress', emoji: '📅', premium: false },
  charts: { label: 'Charts', emoji: '📈', premium: false },
  log: { label: 'Log (premium)', emoji: '📜', premium: true },
  push: { label: 'Trophy push (premium)', emoji: '🚀', premium: true },
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
  if (VIEWS[a.view].premium) requirePremium(ctx, VIEWS[a.view].label);
  const fetched = await orNotFound('player', tag, () => ctx.core.stats.player(tag));
  const p = fetched.data;
  const { fmt } = ctx;
  const note = staleNote(fetched, fmt);
  const rows: ViewComponent[][] = [[viewMenu('player', p.tag, VIEWS, a.view)]];
  const view: ReplyView = { rows, ...(note ? { content: note } : {}) };

  switch (a.view) {
    case 'profile': {
      const [card, brawlers] = await Promise.all([
        picture('player.png', () => ctx.core.images.playerImage(p.tag, 1)),
        ctx.core.stats.brawlers().catch(() => undefined),
      ]);
      view.embeds = [profileEmbed(p, fmt, { brawlerTotal: brawlers?.data.items.length, image: card.name, fetchedAt: fetched.fetchedAt })];
      view.files = [card];
      break;
    }
    case 'brawlers': {
      const sort: BrawlerSort = a.sort ?? 'trophies';
      const option = a.image !== undefined && (BRAWLER_IMAGES as readonly number[]).includes(a.image) ? a.image : undefined;
      const img = option ? await picture(`brawlers-${option}.png`, () => ctx.core.images.playerImage(p.tag, option)) : undefined;
      const { embed, page, pages } = brawlersEmbed(p, fmt, { page: a.page, sort, image: img?.name, fetchedAt: fetched.fetchedAt });
      view.embeds = [embed];
      if (img) view.files = [img];
      const base = { tag: p.tag, view: 'brawlers', sort, ...(option ? { image: option } : {}) };
      rows.push([
        {
          type: 'select',
          placeholder: 'Show a brawler image',
          options: BRAWLER_IMAGES.map((o) => ({
            label: PLAYER_IMAGE_OPTIONS[o].title,
            description: PLAYER_IMAGE_OPTIONS[o].description,
            selected: o === option,
            action: { command: 'player', args: { ...base, image: o, page } },
          })),
        },
      ]);
      rows.push([
        {
          type: 'select',
          placeholder: 'Sort brawlers',
          options: (['trophies', 'power', 'rank', 'name'] as const).map((s) => ({
            label: `Sort by ${s}`,
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
      const img = await picture('ranks.png', () => ctx.core.images.playerImage(p.tag, 4));
      view.embeds = [ranksEmbed(p, fmt, { image: img.name, fetchedAt: fetched.fetchedAt })];
      view.files = [img];
      break;
    }
    case 'season': {
      const img = await picture('season.png', () => ctx.core.images.playerImage(p.tag, 10));
      view.embeds = [imageEmbed(p, PLAYER_IMAGE_OPTIONS[10].title, img.name, PLAYER_IMAGE_OPTIONS[10].description, fetched.fetchedAt)];
      view.files = [img];
      break;
    }
    case 'charts': {
      const option = a.chart !== undefined && a.chart in PLAYER_CHART_OPTIONS ? (a.chart as keyof typeof PLAYER_CHART_OPTIONS) : 1;
      const spec = PLAYER_CHART_OPTIONS[option];
      const img = await picture(`chart-${option}.png`, () => ctx.core.images.playerChart(p.tag, option));
      view.embeds = [imageEmbed(p, spec.title, img.name, spec.description, fetched.fetchedAt)];
      view.files = [img];
      rows.push([
        {
          type: 'select',
          placeholder: 'Choose a chart',
          options: (Object.keys(PLAYER_CHART_OPTIONS).map(Number) as (keyof typeof PLAYER_CHART_OPTIONS)[]).map((o) => ({
            label: PLAYER_CHART_OPTIONS[o].title,
            description: PLAYER_CHART_OPTIONS[o].description,
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
    description: "A player's profile, brawlers, battle log, ranks and charts",
    contexts: [0, 1],
    options: [
      {
        type: ApplicationCommandOptionType.String,
        name: 'tag',
        description: 'Player tag like #2PP0GQ9LU (default: your linked account)',
        autocomplete: true,
        max_length: 20,
      },
      {
        type: ApplicationCommandOptionType.String,
        name: 'view',
        description: 'What to show (default: profile)',
        choices: viewChoices(VIEWS),
      },
      { type: ApplicationCommandOptionType.User, name: 'member', description: "Another member's linked account" },
    ],
  },
  args: Args,
  cooldownSeconds: 3,
  run,
  autocomplete: async (focused, ctx) => (focused.name === 'tag' ? linkedTagChoices(ctx, focused.value) : []),
});
