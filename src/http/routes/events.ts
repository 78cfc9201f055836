/** GET /events, GET /maps, GET /maps/{mapId}: the rotation with predictions, and map statistics. */
import { Events, MapDetail, MapList } from '../../core/history-schemas.ts';
import { idParam } from '../params.ts';
import { cached, defineRoute, routeGroup } from '../route.ts';

export default routeGroup('events', [
  defineRoute({
    method: 'GET',
    url: '/events',
    operationId: 'getEvents',
    summary: 'Active and upcoming events',
    description:
      'Active events from the official rotation; upcoming ones predicted per slot from the recorded rotation (what followed the current map, or mode, last time), marked predicted, starting when the current event ends.',
    tags: ['Events and maps'],
    cacheable: true,
    response: Events,
    handler: async ({ core }) => cached(await core.history.events()),
  }),
  defineRoute({
    method: 'GET',
    url: '/maps',
    operationId: 'listMaps',
    summary: 'All maps',
    description: 'Every map seen in the rotation or in a recorded battle, with its mode and when it was last active.',
    tags: ['Events and maps'],
    cacheable: true,
    response: MapList,
    handler: async ({ core }) => cached(await core.history.maps()),
  }),
  defineRoute({
    method: 'GET',
    url: '/maps/:mapId',
    operationId: 'getMap',
    summary: 'One map with brawler statistics',
    description:
      'Per-brawler use rate, win rate and star-player rate from recorded matchmade battles on this map, with sample sizes; rates of small samples are shrunk toward the map mean (empirical Bayes) and flagged.',
    tags: ['Events and maps'],
    params: { mapId: idParam('Map id (15000000 and up)', 15000026) },
    cacheable: true,
    response: MapDetail,
    notFound: 'Map not found',
    handler: async ({ core, params }) => cached(await core.history.map(params.mapId)),
  }),
]);
