/**
 * /ranking type [country] [brawler]: the players, clubs or one brawler's ranking, paged; global
 * by default, or the server's default country.
 */
import { z } from 'zod';
import { ApplicationCommandOptionType } from 'discord-api-types/v10';
import { parseRegion } from '../src/http/countries.ts';
import { defineCommand, type CommandContext } from '../src/bot/command.ts';
import { UserError, staleNote } from '../src/bot/errors.ts';
import { choice, described } from '../src/bot/localize.ts';
import { pager } from '../src/bot/embeds/common.ts';
import { titleCase } from '../src/bot/embeds/names.ts';
import { rankingEmbed, type RankingKind } from '../src/bot/embeds/ranking.ts';
import { brawlerChoices, countryChoices, findBrawler, regionLabel } from '../src/bot/lookup.ts';
import { Colour, type ReplyView } from '../src/bot/view.ts';

const Args = z.object({
  type: z.enum(['players', 'clubs', 'brawler']),
  country: z.string().optional(),
  brawler: z.string().optional(),
  page: z.number().int().min(1).max(100).optional(),
});
type Args = z.infer<typeof Args>;

async function run(a: Args, ctx: CommandContext): Promise<ReplyView> {
  const raw = a.country ?? ctx.guild?.country ?? 'global';
  const region = parseRegion(raw);
  if (!region) {
    throw new UserError('error.unknownCountry', { input: raw.slice(0, 40) });
  }
  const { fmt } = ctx;
  let kind: RankingKind = a.type;
  let brawlerName: string | undefined;
  let fetched;
  if (kind === 'brawler') {
    if (!a.brawler) throw new UserError('error.whichBrawler', {}, Colour.info);
    const list = (await ctx.core.stats.brawlers()).data.items;
    const b = findBrawler(list, a.brawler);
    if (!b) throw new UserError('error.unknownBrawler', { name: a.brawler.slice(0, 40) });
    brawlerName = titleCase(b.name);
    fetched = await ctx.core.stats.brawlerRankings(region, b.id);
    a = { ...a, brawler: String(b.id) };
  } else if (kind === 'clubs') {
    fetched = await ctx.core.stats.clubRankings(region);
  } else {
    kind = 'players';
    fetched = await ctx.core.stats.playerRankings(region);
  }
  const { embed, page, pages } = rankingEmbed(kind, fetched.data, fmt, {
    regionName: regionLabel(region, fmt),
    brawlerName,
    page: a.page,
    fetchedAt: fetched.fetchedAt,
  });
  const note = staleNote(fetched, fmt);
  const base = { type: a.type, country: region, ...(a.brawler ? { brawler: a.brawler } : {}) };
  return { embeds: [embed], rows: [pager('ranking', base, page, pages, fmt)], ...(note ? { content: note } : {}) };
}

export default defineCommand({
  definition: {
    name: 'ranking',
    ...described('command.ranking'),
    contexts: [0, 1],
    options: [
      {
        type: ApplicationCommandOptionType.String,
        name: 'type',
        ...described('command.ranking.type'),
        required: true,
        choices: [choice('choice.ranking.players', 'players'), choice('choice.ranking.clubs', 'clubs'), choice('choice.ranking.brawler', 'brawler')],
      },
      { type: ApplicationCommandOptionType.String, name: 'country', ...described('command.ranking.country'), autocomplete: true, max_length: 60 },
      { type: ApplicationCommandOptionType.String, name: 'brawler', ...described('command.ranking.brawler'), autocomplete: true, max_length: 60 },
    ],
  },
  args: Args,
  cooldownSeconds: 3,
  run,
  autocomplete: async (focused, ctx) => {
    if (focused.name === 'brawler') return brawlerChoices(ctx, focused.value);
    if (focused.name === 'country') return countryChoices(focused.value, ctx.fmt);
    return [];
  },
});

