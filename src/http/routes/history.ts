/**
 * Premium endpoints on recorded history: player and club snapshots and change logs, the trophy
 * push, and best builds. A player or club with nothing recorded yet answers with what exists (an
 * empty list) and is tracked from then on.
 */
import { z } from 'zod';
import { BestBuild, ClubHistory, ClubLog, PlayerHistory, PlayerLog, PlayerPush } from '../../core/history-schemas.ts';
import { idParam, tagParam } from '../params.ts';
import { cached, defineRoute, routeGroup } from '../route.ts';

const limit = (what: string) => ({ limit: z.int().default(25).meta({ description: `${what} to return, newest first` }) });
const tracked = 'Looking a player or club up here keeps it tracked (polled) for TRACK_DAYS days.';

export default routeGroup('history', [
  defineRoute({
    method: 'GET',
    url: '/players/:tag/log',
    operationId: 'getPlayerLog',
    summary: "Player's change log",
    description: `Changes between recorded snapshots: trophies won or lost per play session, brawlers unlocked, power, rank and prestige ups, clubs joined or left, name changes. ${tracked}`,
    tags: ['Players'],
    params: { tag: tagParam },
    query: limit('Events'),
    premium: true,
    cacheable: true,
    response: PlayerLog,
    notFound: 'Player not found',
    handler: async ({ core, params, query }) => cached(await core.history.playerLog(params.tag, query.limit)),
  }),
  defineRoute({
    method: 'GET',
    url: '/players/:tag/history',
    operationId: 'getPlayerHistory',
    summary: "Player's recorded snapshots",
    description: `Profiles as recorded, newest first; a poll that saw no change adds none. ${tracked}`,
    tags: ['Players'],
    params: { tag: tagParam },
    query: limit('Snapshots'),
    premium: true,
    cacheable: true,
    response: PlayerHistory,
    notFound: 'Player not found',
    handler: async ({ core, params, query }) => cached(await core.history.playerHistory(params.tag, query.limit)),
  }),
  defineRoute({
    method: 'GET',
    url: '/players/:tag/push',
    operationId: 'getPlayerPush',
    summary: "Player's trophy push",
    description: `Trophies gained over 24 hours, 7 and 30 days, the best day, the current win streak and the brawlers that moved most. ${tracked}`,
    tags: ['Players'],
    params: { tag: tagParam },
    premium: true,
    cacheable: true,
    response: PlayerPush,
    notFound: 'Player not found',
    handler: async ({ core, params }) => cached(await core.history.playerPush(params.tag)),
  }),
  defineRoute({
    method: 'GET',
    url: '/clubs/:tag/log',
    operationId: 'getClubLog',
    summary: "Club's change log",
    description: `Members who joined or left, role changes and settings changes, each recorded once. ${tracked}`,
    tags: ['Clubs'],
    params: { tag: tagParam },
    query: limit('Events'),
    premium: true,
    cacheable: true,
    response: ClubLog,
    notFound: 'Club not found',
    handler: async ({ core, params, query }) => cached(await core.history.clubLog(params.tag, query.limit)),
  }),
  defineRoute({
    method: 'GET',
    url: '/clubs/:tag/history',
    operationId: 'getClubHistory',
    summary: "Club's recorded snapshots",
    description: `The club as recorded (settings, trophies, members), newest first. ${tracked}`,
    tags: ['Clubs'],
    params: { tag: tagParam },
    query: limit('Snapshots'),
    premium: true,
    cacheable: true,
    response: ClubHistory,
    notFound: 'Club not found',
    handler: async ({ core, params, query }) => cached(await core.history.clubHistory(params.tag, query.limit)),
  }),
  defineRoute({
    method: 'GET',
    url: '/brawlers/:brawlerId/bestbuild',
    operationId: 'getBrawlerBestBuild',
    summary: "Brawler's best build",
    description:
      'Most common gadgets, star powers, hypercharges and gears among the recorded players with the most trophies on this brawler (share of the sample), and win rates per build from their recorded battles.',
    tags: ['Brawlers'],
    params: { brawlerId: idParam('Brawler id (16000000 and up)', 16000000) },
    premium: true,
    cacheable: true,
    response: BestBuild,
    notFound: 'Brawler not found',
    handler: async ({ core, params }) => cached(await core.history.bestBuild(params.brawlerId)),
  }),
]);
