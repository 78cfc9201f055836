/** GET /clubs/{tag}. */
import { Club } from '../../upstream/schemas.ts';
import { tagParam } from '../params.ts';
import { cached, defineRoute, routeGroup } from '../route.ts';

export default routeGroup('clubs', [
  defineRoute({
    method: 'GET',
    url: '/clubs/:tag',
    operationId: 'getClub',
    summary: 'Club profile',
    description: 'The club with its members, as the game API describes it.',
    tags: ['Clubs'],
    params: { tag: tagParam },
    cacheable: true,
    response: Club,
    notFound: 'Club not found',
    handler: async ({ core, params }) => cached(await core.stats.club(params.tag)),
  }),
]);
