/**
 * GET /rankings/{countryCode}/players|clubs|brawlers/{brawlerId}, all in the club ranking's
 * envelope {region, timestamp, items}.
 */
import { z } from 'zod';
import type { RankingResponse } from '../../core/types.ts';
import { countryCodeParam, idParam } from '../params.ts';
import { cached, defineRoute, routeGroup } from '../route.ts';
import { BrawlerRankingResponse, ClubRankingResponse, PlayerRankingResponse } from '../schemas.ts';

const limit = z.int().optional().meta({ description: 'Entries to return from rank 1 (the game ranks 200 at most)' });

/** The first `limit` entries (all when absent; none for zero or less: the interface sets no bounds). */
export const topOf = <T>(r: RankingResponse<T>, n: number | undefined): RankingResponse<T> =>
  n === undefined ? r : { ...r, items: r.items.slice(0, Math.max(0, n)) };

export default routeGroup('rankings', [
  defineRoute({
    method: 'GET',
    url: '/rankings/:countryCode/clubs',
    operationId: 'getClubRankings',
    summary: 'Club ranking',
    tags: ['Rankings'],
    params: { countryCode: countryCodeParam },
    query: { limit },
    cacheable: true,
    response: ClubRankingResponse,
    handler: async ({ core, params, query }) => cached(await core.stats.clubRankings(params.countryCode), (r) => topOf(r, query.limit)),
  }),
  defineRoute({
    method: 'GET',
    url: '/rankings/:countryCode/players',
    operationId: 'getPlayerRankings',
    summary: 'Player ranking',
    tags: ['Rankings'],
    params: { countryCode: countryCodeParam },
    query: { limit },
    cacheable: true,
    response: PlayerRankingResponse,
    handler: async ({ core, params, query }) => cached(await core.stats.playerRankings(params.countryCode), (r) => topOf(r, query.limit)),
  }),
  defineRoute({
    method: 'GET',
    url: '/rankings/:countryCode/brawlers/:brawlerId',
    operationId: 'getBrawlerRankings',
    summary: 'Brawler ranking',
    description: "Players ranked by their trophies with one brawler.",
    tags: ['Rankings'],
    params: { countryCode: countryCodeParam, brawlerId: idParam('Brawler id (16000000 and up)', 16000000) },
    query: { limit },
    cacheable: true,
    response: BrawlerRankingResponse,
    notFound: 'Brawler not found',
    handler: async ({ core, params, query }) =>
      cached(await core.stats.brawlerRankings(params.countryCode, params.brawlerId), (r) => topOf(r, query.limit)),
  }),
]);
