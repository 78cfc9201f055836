/**
 * Bodies of the history endpoints (search, history, log, push, best build, events, maps), as zod
 * schemas: the HistoryService returns values of these types and the HTTP routes hand the schemas
 * to the OpenAPI document. Times are unix seconds (`timestamp`, like the interface's ranking
 * response) and official field names are kept where a field mirrors the game's API.
 */
import { z } from 'zod';
import { SEARCH_TOTAL_CAP } from '../store/history-search.ts';

const unix = (description: string) => z.int().meta({ description: `${description} (unix seconds)` });
const Tagged = z.object({ tag: z.string(), name: z.string() });
const BrawlerRef = z.object({ id: z.int(), name: z.string() });

// ------------------------------------------------------------------ search

export const PlayerSearchItem = z.object({
  tag: z.string(),
  name: z.string(),
  trophies: z.int().nullable().meta({ description: 'Trophies when last seen; null when only seen in battle logs' }),
  club: Tagged.nullable().meta({ description: 'Club when last seen; null without one or when not known' }),
  match: z.enum(['exact', 'prefix', 'word', 'substring', 'tag']).meta({ description: 'How the name matched the query' }),
});
export type PlayerSearchItem = z.infer<typeof PlayerSearchItem>;

export const ClubSearchItem = z.object({
  tag: z.string(),
  name: z.string(),
  trophies: z.int().nullable(),
  memberCount: z.int().nullable(),
  badgeId: z.int().nullable(),
  match: z.enum(['exact', 'prefix', 'word', 'substring', 'tag']),
});
export type ClubSearchItem = z.infer<typeof ClubSearchItem>;

const searchPage = <T extends z.ZodType>(item: T) =>
  z.object({
    items: z.array(item),
    total: z.int().meta({ description: `Matches in all, counted up to ${SEARCH_TOTAL_CAP} (${SEARCH_TOTAL_CAP} means at least that many)` }),
    limit: z.int(),
    offset: z.int(),
  });
export const PlayerSearchPage = searchPage(PlayerSearchItem);
export type PlayerSearchPage = z.infer<typeof PlayerSearchPage>;
export const ClubSearchPage = searchPage(ClubSearchItem);
export type ClubSearchPage = z.infer<typeof ClubSearchPage>;

// ------------------------------------------------------------------ tracking note

export const Tracking = z.object({
  tracked: z.boolean().meta({ description: 'Starr Stats polls this player/club while tracked' }),
  trackedUntil: z.int().nullable().meta({ description: 'Tracked at least until (unix seconds); null while pinned only' }),
  since: z.int().nullable().meta({ description: 'First recorded snapshot (unix seconds), null when none yet' }),
});

// ------------------------------------------------------------------ player history

export const HistoryBrawler = z.object({
  id: z.int(),
  name: z.string(),
  power: z.int(),
  rank: z.int(),
  trophies: z.int(),
  highestTrophies: z.int(),
  prestigeLevel: z.int().optional(),
});

export const PlayerSnapshot = z.looseObject({
  timestamp: unix('When this state was first recorded'),
  name: z.string(),
  nameColor: z.string().optional(),
  trophies: z.int(),
  highestTrophies: z.int(),
  expLevel: z.int(),
  expPoints: z.int().optional(),
  totalPrestigeLevel: z.int().optional(),
  '3vs3Victories': z.int(),
  soloVictories: z.int(),
  duoVictories: z.int(),
  club: Tagged.nullable(),
  brawlerCount: z.int(),
  brawlers: z.array(HistoryBrawler),
});
export type PlayerSnapshot = z.infer<typeof PlayerSnapshot>;

export const PlayerHistory = z.object({
  tag: z.string(),
  ...Tracking.shape,
  items: z.array(PlayerSnapshot).meta({ description: 'Recorded snapshots, newest first; a poll that saw no change adds none' }),
});
export type PlayerHistory = z.infer<typeof PlayerHistory>;

// ------------------------------------------------------------------ player log

export const PlayerLogEvent = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('trophies'),
    timestamp: unix('End of the play session'),
    start: unix('First recording of the session'),
    from: z.int(),
    to: z.int(),
    change: z.int(),
    battles: z.int().meta({ description: 'Battles recorded in the session' }),
  }),
  z.object({ type: z.literal('brawlerUnlocked'), timestamp: unix('Recorded at'), brawler: BrawlerRef }),
  z.object({ type: z.literal('powerUp'), timestamp: unix('Recorded at'), brawler: BrawlerRef, from: z.int(), to: z.int() }),
  z.object({ type: z.literal('rankUp'), timestamp: unix('Recorded at'), brawler: BrawlerRef, from: z.int(), to: z.int() }),
  z.object({ type: z.literal('prestigeUp'), timestamp: unix('Recorded at'), brawler: BrawlerRef, from: z.int(), to: z.int() }),
  z.object({ type: z.literal('clubJoined'), timestamp: unix('Recorded at'), club: Tagged }),
  z.object({ type: z.literal('clubLeft'), timestamp: unix('Recorded at'), club: Tagged }),
  z.object({ type: z.literal('nameChanged'), timestamp: unix('Recorded at'), from: z.string(), to: z.string() }),
]);
export type PlayerLogEvent = z.infer<typeof PlayerLogEvent>;

export const PlayerLog = z.object({
  tag: z.string(),
  ...Tracking.shape,
  items: z.array(PlayerLogEvent).meta({ description: 'Changes between recorded snapshots, newest first' }),
});
export type PlayerLog = z.infer<typeof PlayerLog>;

// ------------------------------------------------------------------ push

const Gain = z
  .object({
    change: z.int(),
    from: z.int(),
    to: z.int(),
    since: unix('The recording the gain is measured from'),
  })
  .nullable();

export const PlayerPush = z.object({
  tag: z.string(),
  ...Tracking.shape,
  trophies: z.int().nullable(),
  gains: z.object({ day: Gain, week: Gain, month: Gain }).meta({
    description: 'Trophies gained over the last 24 hours, 7 days and 30 days (from the oldest recording inside the window when history is shorter)',
  }),
  bestDay: z.object({ date: z.string().meta({ description: 'UTC date, YYYY-MM-DD' }), change: z.int() }).nullable(),
  winStreak: z.int().meta({ description: 'Victories in a row in the most recent recorded battles' }),
  brawlers: z
    .array(z.object({ id: z.int(), name: z.string(), change: z.int(), trophies: z.int() }))
    .meta({ description: 'Brawlers whose trophies moved most over the last 7 days' }),
});
export type PlayerPush = z.infer<typeof PlayerPush>;

// ------------------------------------------------------------------ clubs

export const ClubSnapshot = z.object({
  timestamp: unix('When this state was first recorded'),
  name: z.string(),
  description: z.string().optional(),
  type: z.string(),
  badgeId: z.int(),
  requiredTrophies: z.int(),
  trophies: z.int(),
  isFamilyFriendly: z.boolean().optional(),
  memberCount: z.int(),
  members: z.array(z.object({ tag: z.string(), name: z.string(), role: z.string(), trophies: z.int() })),
});
export type ClubSnapshot = z.infer<typeof ClubSnapshot>;

export const ClubHistory = z.object({ tag: z.string(), ...Tracking.shape, items: z.array(ClubSnapshot) });
export type ClubHistory = z.infer<typeof ClubHistory>;

export const ClubLogEvent = z.object({
  timestamp: unix('Recorded at'),
  type: z.enum(['join', 'leave', 'role', 'settings']),
  player: Tagged.optional().meta({ description: 'The member (join, leave, role)' }),
  field: z.string().optional().meta({ description: 'The setting that changed (settings)' }),
  from: z.unknown().nullable(),
  to: z.unknown().nullable(),
});
export type ClubLogEvent = z.infer<typeof ClubLogEvent>;

export const ClubLog = z.object({ tag: z.string(), ...Tracking.shape, items: z.array(ClubLogEvent) });
export type ClubLog = z.infer<typeof ClubLog>;

// ------------------------------------------------------------------ club activity

export const ACTIVITY_SORTS = ['inactivity', 'gain', 'battles'] as const;
export type ActivitySort = (typeof ACTIVITY_SORTS)[number];
export const ACTIVITY_FLAGS = ['lowGain', 'inactive'] as const;

export const ActivityMember = z.object({
  tag: z.string(),
  name: z.string(),
  role: z.string(),
  trophies: z.int(),
  joined: z.int().nullable().meta({ description: 'When the member last joined, as recorded (unix seconds); null when they were already a member when recording began' }),
  gained: z.int().nullable().meta({ description: 'Trophies gained over the period; null when nothing was recorded of the member before now' }),
  gainedSince: z.int().nullable().meta({ description: 'The recording `gained` is measured from (unix seconds): the period start, or later when history is shorter' }),
  gained30d: z.int().nullable().meta({ description: 'Trophies gained over 30 days, same rules' }),
  battles: z.int().nullable().meta({ description: 'Battles recorded in the period; null when the battle log of this member is not recorded' }),
  wins: z.int().nullable(),
  lastActive: z.int().nullable().meta({ description: 'Newest sign of play seen (a recorded battle or a trophy change), unix seconds; null when none was seen' }),
  inactiveDays: z.int().nullable().meta({ description: 'Whole days since lastActive; without a sign of play, days since the member was first recorded (then inactiveAtLeast is true); null when nothing is recorded yet' }),
  inactiveAtLeast: z.boolean(),
  flags: z.array(z.enum(ACTIVITY_FLAGS)).meta({ description: 'Thresholds this member is below: lowGain (gained < minGain), inactive (inactiveDays ≥ maxIdleDays)' }),
});
export type ActivityMember = z.infer<typeof ActivityMember>;

export const ClubActivity = z.object({
  tag: z.string(),
  name: z.string(),
  ...Tracking.shape,
  days: z.int(),
  from: unix('Start of the period'),
  to: unix('End of the period (now)'),
  coverage: z
    .object({
      recordedFrom: z.int().nullable().meta({ description: 'First recording of the club (unix seconds), null when none yet' }),
      days: z.number().meta({ description: 'Days of the period covered by recorded club history' }),
      share: z.number().meta({ description: 'Share of the period covered, 0 to 1' }),
      battlesRecorded: z.int().meta({ description: 'Members whose battle log is recorded' }),
    })
    .meta({ description: 'How much of the period recorded history covers' }),
  thresholds: z.object({ minGain: z.int().nullable(), maxIdleDays: z.int().nullable() }),
  sort: z.enum(ACTIVITY_SORTS),
  members: z.array(ActivityMember),
});
export type ClubActivity = z.infer<typeof ClubActivity>;

// ------------------------------------------------------------------ best build

const Share = z.object({ id: z.int(), name: z.string(), players: z.int(), share: z.number() });

export const BestBuild = z.object({
  brawler: BrawlerRef,
  sampleSize: z.int().meta({ description: 'Top players (by trophies on this brawler) whose profiles were recorded' }),
  minTrophies: z.int().nullable().meta({ description: 'Trophies of the last player in the sample' }),
  gadgets: z.array(Share),
  starPowers: z.array(Share),
  hyperCharges: z.array(Share),
  gears: z.array(Share),
  builds: z
    .array(
      z.object({
        gadgets: z.array(BrawlerRef),
        starPowers: z.array(BrawlerRef),
        hyperCharges: z.array(BrawlerRef),
        players: z.int(),
        battles: z.int(),
        wins: z.int(),
        winRate: z.number().nullable(),
      }),
    )
    .meta({ description: 'Combinations owned, with win rates from recorded battles where there are any' }),
});
export type BestBuild = z.infer<typeof BestBuild>;

// ------------------------------------------------------------------ events and maps

export const EventItem = z.object({
  slotId: z.int(),
  startTime: z.string(),
  endTime: z.string(),
  event: z.looseObject({ id: z.int(), mode: z.string().optional(), modeId: z.int().optional(), map: z.string().nullable().optional(), modifiers: z.array(z.string()).optional() }),
  predicted: z.boolean(),
  historyLength: z.int().optional().meta({ description: 'Past events of this slot the prediction is based on' }),
});
export type EventItem = z.infer<typeof EventItem>;

export const Events = z.object({
  active: z.array(EventItem),
  upcoming: z.array(EventItem).meta({ description: 'The next event of each slot, predicted from the recorded rotation' }),
});
export type Events = z.infer<typeof Events>;

export const MapItem = z.object({
  id: z.int(),
  name: z.string().nullable(),
  mode: z.string().nullable(),
  firstSeen: unix('First seen in the rotation or a battle'),
  lastActive: unix('Last seen in the rotation or a battle'),
});
export type MapItem = z.infer<typeof MapItem>;

export const MapList = z.object({ items: z.array(MapItem) });
export type MapList = z.infer<typeof MapList>;

export const MapBrawlerStat = z.object({
  brawler: BrawlerRef,
  picks: z.int(),
  useRate: z.number().meta({ description: 'Share of all picks on this map' }),
  wins: z.int(),
  losses: z.int(),
  draws: z.int(),
  winRate: z.number().nullable().meta({ description: 'Wins / decided battles, raw' }),
  adjustedWinRate: z.number().nullable().meta({ description: 'Win rate shrunk toward the map mean (empirical Bayes); rank by this' }),
  starPlayer: z.int(),
  starPlayerRate: z.number().nullable(),
  adjustedStarPlayerRate: z.number().nullable(),
  smallSample: z.boolean().meta({ description: 'Fewer battles than minSample: read the adjusted rates' }),
});

export const MapDetail = MapItem.extend({
  battles: z.int().meta({ description: 'Recorded matchmade battles on this map' }),
  minSample: z.int(),
  prior: z.object({
    winRate: z.number().nullable().meta({ description: 'Mean win rate on this map' }),
    strength: z.number().meta({ description: 'Pseudo-battles of the prior (method of moments)' }),
  }),
  stats: z.array(MapBrawlerStat),
});
export type MapDetail = z.infer<typeof MapDetail>;
