/** GET /players/search, GET /clubs/search: names of every player and club Starr Stats has seen. */
import { z } from 'zod';
import type { HistoryService } from '../../core/history.ts';
import { ClubSearchPage, PlayerSearchPage } from '../../core/history-schemas.ts';
import { cached, defineRoute, HttpError, routeGroup, type HttpCore } from '../route.ts';

/** The history service of the core; 503 in a deployment composed without one. */
export function historyOf(core: HttpCore): HistoryService {
  if (!core.history) throw new HttpError(503, 'Recorded history is not available on this server', { 'retry-after': '60' });
  return core.history as HistoryService;
}

const searchQuery = {
  name: z.string().min(2).meta({
    description:
      'Name or part of it (at least 2 characters), in any case and with or without accents. A valid tag finds that player or club; written with # it finds only that.',
    examples: ['mortis', '#2PP0GQ9LU'],
  }),
  limit: z.int().min(1).max(250).default(50).meta({ description: 'Results per page' }),
  offset: z.int().min(0).max(1000).default(0).meta({ description: 'Results to skip' }),
};

const ranking =
  'Exact name matches first, then names starting with the query, then names with a word starting with it, then names containing it (3 characters or more); within each, most trophies first. Matching ignores case and accents.';

export default routeGroup('search', [
  defineRoute({
    method: 'GET',
    url: '/players/search',
    operationId: 'searchPlayers',
    summary: 'Search players by name or tag',
    description: `Every player seen in rankings, club member lists and battle logs. ${ranking}`,
    tags: ['Players'],
    query: searchQuery,
    cacheable: true,
    response: PlayerSearchPage,
    handler: async ({ core, query }) => cached(await historyOf(core).searchPlayers(query.name, query.limit, query.offset)),
  }),
  defineRoute({
    method: 'GET',
    url: '/clubs/search',
    operationId: 'searchClubs',
    summary: 'Search clubs by name or tag',
    description: `Every club seen in rankings, player profiles and lookups. ${ranking}`,
    tags: ['Clubs'],
    query: searchQuery,
    cacheable: true,
    response: ClubSearchPage,
    handler: async ({ core, query }) => cached(await historyOf(core).searchClubs(query.name, query.limit, query.offset)),
  }),
]);
