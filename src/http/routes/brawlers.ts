/** GET /brawlers, GET /brawlers/{brawlerId}: the official catalogue, as the game API shapes it. */
import { Brawler, BrawlerList } from '../../upstream/schemas.ts';
import { idParam } from '../params.ts';
import { cached, defineRoute, routeGroup } from '../route.ts';

export default routeGroup('brawlers', [
  defineRoute({
    method: 'GET',
    url: '/brawlers',
    operationId: 'listBrawlers',
    summary: 'All brawlers',
    description: 'Every brawler with its star powers, gadgets, hypercharges and gears, in id order.',
    tags: ['Brawlers'],
    cacheable: true,
    response: BrawlerList,
    handler: async ({ core }) => cached(await core.stats.brawlers()),
  }),
  defineRoute({
    method: 'GET',
    url: '/brawlers/:brawlerId',
    operationId: 'getBrawler',
    summary: 'One brawler',
    tags: ['Brawlers'],
    params: { brawlerId: idParam('Brawler id (16000000 and up)', 16000000) },
    cacheable: true,
    response: Brawler,
    notFound: 'Brawler not found',
    handler: async ({ core, params }) => cached(await core.stats.brawler(params.brawlerId)),
  }),
]);
