/** GET /players/{tag}, GET /players/{tag}/battlelog. */
import { z } from 'zod';
import { BattleLog, Player } from '../../upstream/schemas.ts';
import { tagParam } from '../params.ts';
import { cached, defineRoute, routeGroup } from '../route.ts';

/** The first `limit` items; the interface gives no bounds, so zero or less is an empty page. */
export const firstItems = <T extends { items: unknown[] }>(page: T, limit: number): T => ({
  ...page,
  items: page.items.slice(0, Math.max(0, limit)),
});

export default routeGroup('players', [
  defineRoute({
    method: 'GET',
    url: '/players/:tag',
    operationId: 'getPlayer',
    summary: 'Player profile',
    description: 'The player as the game API describes them: trophies, victories, club, every brawler.',
    tags: ['Players'],
    params: { tag: tagParam },
    cacheable: true,
    response: Player,
    notFound: 'Player not found',
    handler: async ({ core, params }) => cached(await core.stats.player(params.tag)),
  }),
  defineRoute({
    method: 'GET',
    url: '/players/:tag/battlelog',
    operationId: 'getPlayerBattlelog',
    summary: "Player's recent battles",
    description: 'The most recent battles first (the game keeps the last 25).',
    tags: ['Players'],
    params: { tag: tagParam },
    query: { limit: z.int().default(25).meta({ description: 'Battles to return, most recent first' }) },
    cacheable: true,
    response: BattleLog,
    notFound: 'Player not found',
    handler: async ({ core, params, query }) => cached(await core.stats.battlelog(params.tag), (log) => firstItems(log, query.limit)),
  }),
]);
