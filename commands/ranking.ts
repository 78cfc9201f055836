/**
 * /ranking type [country] [brawler]: the players, clubs or one brawler's ranking, paged; global
 * by default, or the server's default country.
 */
import { z } from 'zod';
import { ApplicationCommandOptionType } from 'discord-api-types/v10';
import { parseRegion } from '../src/http/countries.ts';
import { defineCommand, type CommandContext } from '../src/bot/command.ts';
import { UserError, staleNote } from '../src/bot/errors.ts';
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
    throw new UserError('Unknown country', `**${raw.slice(0, 40)}** is not a country code. Use a two-letter code like \`US\` or \`DE\`, or \`global\`.`);
  }
  const { fmt } = ctx;
  let kind: RankingKind = a.type;
  let brawlerName: string | undefined;
  let fetched;
  if (kind === 'brawler') {
    if (!a.brawler) throw new UserError('Which brawler?', 'Pick a brawler in the `brawler` option for a brawler ranking.', Colour.info);
    const list = (await ctx.core.stats.brawlers()).data.items;
    const b = findBrawler(list, a.brawler);
    if (!b) throw new UserError('Unknown brawler', `No brawler is called **${a.brawler.slice(0, 40)}**. Pick one from the list while typing.`);
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
    regionName: regionLabel(region),
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
    description: 'Top players, clubs or players of one brawler, globally or in a country',
    contexts: [0, 1],
    options: [
      {
        type: ApplicationCommandOptionType.String,
        name: 'type',
        description: 'Which ranking',
        required: true,
        choices: [
          { name: 'Players', value: 'players' },
          { name: 'Clubs', value: 'clubs' },
          { name: 'Brawler', value: 'brawler' },
        ],
      },
      { type: ApplicationCommandOptionType.String, name: 'country', description: 'Country (default: the server\'s, else global)', autocomplete: true, max_length: 60 },
      { type: ApplicationCommandOptionType.String, name: 'brawler', description: 'The brawler, for a brawler ranking', autocomplete: true, max_length: 60 },
    ],
  },
  args: Args,
  cooldownSeconds: 3,
  run,
  autocomplete: async (focused, ctx) => {
    if (focused.name === 'brawler') return brawlerChoices(ctx, focused.value);
    if (focused.name === 'country') return countryChoices(focused.value);
    return [];
  },
});

