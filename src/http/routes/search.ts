/** GET /players/search, GET /clubs/search: names of every player and club Starr Stats has seen. */
import { z } from 'zod';
import { ClubSearchPage, PlayerSearchPage } from '../../core/history-schemas.ts';
import { cached, defineRoute, routeGroup } from '../route.ts';

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
    handler: async ({ core, query }) => cached(await core.history.searchPlayers(query.name, query.limit, query.offset)),
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
    handler: async ({ core, query }) => cached(await core.history.searchClubs(query.name, query.limit, query.offset)),
  }),
]);
