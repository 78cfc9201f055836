/**
 * Premium endpoints on recorded history: player and club snapshots and change logs, the trophy
 * push, and best builds. A player or club with nothing recorded yet answers with what exists (an
 * empty list) and is tracked from then on.
 */
import { z } from 'zod';
import { ACTIVITY_DAYS } from '../../core/club-activity.ts';
import { ACTIVITY_SORTS, BestBuild, ClubActivity, ClubHistory, ClubLog, PlayerHistory, PlayerLog, PlayerPush } from '../../core/history-schemas.ts';
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
    url: '/clubs/:tag/activity',
    operationId: 'getClubActivity',
    summary: "Club members' activity",
    description: `For each member: trophies gained over the period and over 30 days, battles recorded, the newest sign of play and days since, when they joined (as recorded), role, and the thresholds they are below. Says how much of the period recorded history covers; what is not recorded is null, not zero. Looking a club up here keeps it and its members tracked.`,
    tags: ['Clubs'],
    params: { tag: tagParam },
    query: {
      days: z.int().min(ACTIVITY_DAYS.min).max(ACTIVITY_DAYS.max).default(ACTIVITY_DAYS.default).meta({ description: 'The period, in days up to now' }),
      sort: z.enum(ACTIVITY_SORTS).default('inactivity').meta({ description: 'Most inactive first, most gained first, or most battles first' }),
      minGain: z.int().min(-100000).max(100000).optional().meta({ description: 'Flag members who gained fewer trophies than this over the period' }),
      maxIdleDays: z.int().min(1).max(ACTIVITY_DAYS.max).optional().meta({ description: 'Flag members with no sign of play for this many days or more' }),
    },
    premium: true,
    cacheable: true,
    response: ClubActivity,
    notFound: 'Club not found',
    handler: async ({ core, params, query }) =>
      cached(
        await core.history.clubActivity(params.tag, {
          days: query.days,
          sort: query.sort,
          thresholds: { minGain: query.minGain ?? null, maxIdleDays: query.maxIdleDays ?? null },
        }),
      ),
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
