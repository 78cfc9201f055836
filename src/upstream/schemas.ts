/**
 * zod schemas of every official API body, in the 2026 shape (reference/upstream-api.md).
 *
 * - Objects are loose: unknown fields pass through untouched, so a field the game adds tomorrow
 *   reaches our store and our API unchanged.
 * - Fields that are newer than 2025 or reported missing at times are optional.
 * - Enums (modes, roles, club types, battle types, results) are open strings: known values are
 *   exported for display, never used to reject a body.
 * - Quirks (section 14): trophies/power of -1, null brawler names, battle log items without
 *   `battle`, `{}` for "no club", `map: null` for competition maps, `starPlayer: null`.
 */
import { z } from 'zod';

/** Brawler, gadget and similar names were `null` for a while (2024-06) and may contain `\n`. */
const GameName = z.string().nullable().transform((v) => v ?? '');

export const IdName = z.looseObject({ id: z.number().int(), name: GameName });
export type IdName = z.infer<typeof IdName>;

export const Gear = z.looseObject({ id: z.number().int(), name: GameName, level: z.number().int().optional() });
export type Gear = z.infer<typeof Gear>;

export const Icon = z.looseObject({ id: z.number().int() });

// ---------------------------------------------------------------- players

export const PlayerBrawler = z.looseObject({
  id: z.number().int(),
  name: GameName,
  power: z.number().int(),
  rank: z.number().int(),
  trophies: z.number().int(),
  highestTrophies: z.number().int(),
  prestigeLevel: z.number().int().optional(),
  currentWinStreak: z.number().int().optional(),
  maxWinStreak: z.number().int().optional(),
  skin: z.looseObject({ id: z.number().int(), name: GameName }).optional(),
  gadgets: z.array(IdName).default([]),
  gears: z.array(Gear).default([]),
  starPowers: z.array(IdName).default([]),
  hyperCharges: z.array(IdName).optional(),
  buffies: z
    .looseObject({ gadget: z.boolean().optional(), starPower: z.boolean().optional(), hyperCharge: z.boolean().optional() })
    .optional(),
});
export type PlayerBrawler = z.infer<typeof PlayerBrawler>;

/** `{}` when the player has no club. */
export const PlayerClub = z.union([
  z.looseObject({ tag: z.string(), name: z.string() }),
  z.looseObject({}).transform(() => ({}) as Record<string, never>),
]);

export const Player = z.looseObject({
  tag: z.string(),
  name: z.string(),
  nameColor: z.string().optional(),
  icon: Icon.optional(),
  trophies: z.number().int(),
  highestTrophies: z.number().int(),
  totalPrestigeLevel: z.number().int().optional(),
  expLevel: z.number().int(),
  expPoints: z.number().int().optional(),
  isQualifiedFromChampionshipChallenge: z.boolean().optional(),
  '3vs3Victories': z.number().int(),
  soloVictories: z.number().int(),
  duoVictories: z.number().int(),
  bestRoboRumbleTime: z.number().int().optional(),
  bestTimeAsBigBrawler: z.number().int().optional(),
  highestPowerPlayPoints: z.number().int().optional(),
  powerPlayPoints: z.number().int().optional(),
  club: PlayerClub.optional(),
  brawlers: z.array(PlayerBrawler).default([]),
});
export type Player = z.infer<typeof Player>;

// ---------------------------------------------------------------- battle log

export const BattleBrawler = z.looseObject({
  id: z.number().int(),
  name: GameName,
  power: z.number().int().optional(),
  trophies: z.number().int().optional(),
  trophyChange: z.number().int().optional(),
});

export const BattlePlayer = z.looseObject({
  tag: z.string(),
  name: z.string(),
  brawler: BattleBrawler.optional(),
  /** duels: the three brawlers a player used, each with its own trophyChange */
  brawlers: z.array(BattleBrawler).optional(),
});
export type BattlePlayer = z.infer<typeof BattlePlayer>;

export const BattleEvent = z.looseObject({
  id: z.number().int(),
  mode: z.string().optional(),
  modeId: z.number().int().optional(),
  map: z.string().nullable().optional(),
});
export type BattleEvent = z.infer<typeof BattleEvent>;

export const BattleResult = z.looseObject({
  mode: z.string(),
  type: z.string().optional(),
  result: z.string().optional(),
  duration: z.number().int().optional(),
  rank: z.number().int().optional(),
  trophyChange: z.number().int().optional(),
  starPlayer: BattlePlayer.nullable().optional(),
  teams: z.array(z.array(BattlePlayer)).optional(),
  players: z.array(BattlePlayer).optional(),
  level: z.looseObject({ name: z.string().nullable(), id: z.number().int() }).optional(),
  bigBrawler: BattlePlayer.optional(),
});
export type BattleResult = z.infer<typeof BattleResult>;

export const BattleLogItem = z.looseObject({
  battleTime: z.string(),
  event: BattleEvent,
  /** absent in some items (API bug 2022-03-15); consumers skip those */
  battle: BattleResult.optional(),
});
export type BattleLogItem = z.infer<typeof BattleLogItem>;

export const Cursors = z.looseObject({ before: z.string().optional(), after: z.string().optional() });
export const Paging = z.looseObject({ cursors: Cursors.default({}) });

function envelope<T extends z.ZodType>(item: T) {
  return z.looseObject({ items: z.array(item), paging: Paging.default({ cursors: {} }) });
}

export const BattleLog = envelope(BattleLogItem);
export type BattleLog = z.infer<typeof BattleLog>;

// ---------------------------------------------------------------- clubs

export const ClubMember = z.looseObject({
  tag: z.string(),
  name: z.string(),
  nameColor: z.string().optional(),
  role: z.string(),
  trophies: z.number().int(),
  icon: Icon.optional(),
});
export type ClubMember = z.infer<typeof ClubMember>;

export const Club = z.looseObject({
  tag: z.string(),
  name: z.string(),
  description: z.string().optional(),
  type: z.string(),
  badgeId: z.number().int(),
  requiredTrophies: z.number().int(),
  trophies: z.number().int(),
  isFamilyFriendly: z.boolean().optional(),
  members: z.array(ClubMember).default([]),
});
export type Club = z.infer<typeof Club>;

export const ClubMembers = envelope(ClubMember);
export type ClubMembers = z.infer<typeof ClubMembers>;

// ---------------------------------------------------------------- rankings

export const PlayerRankingItem = z.looseObject({
  tag: z.string(),
  name: z.string(),
  nameColor: z.string().optional(),
  icon: Icon.optional(),
  trophies: z.number().int(),
  rank: z.number().int(),
  club: z.looseObject({ name: z.string() }).optional(),
});
export type PlayerRankingItem = z.infer<typeof PlayerRankingItem>;

export const ClubRankingItem = z.looseObject({
  tag: z.string(),
  name: z.string(),
  badgeId: z.number().int(),
  trophies: z.number().int(),
  rank: z.number().int(),
  memberCount: z.number().int(),
});
export type ClubRankingItem = z.infer<typeof ClubRankingItem>;

export const PlayerRankings = envelope(PlayerRankingItem);
export type PlayerRankings = z.infer<typeof PlayerRankings>;
export const ClubRankings = envelope(ClubRankingItem);
export type ClubRankings = z.infer<typeof ClubRankings>;
/** Brawler rankings have the player ranking's item shape; trophies are that brawler's. */
export const BrawlerRankings = PlayerRankings;
export type BrawlerRankings = PlayerRankings;

// ---------------------------------------------------------------- catalogue

export const Brawler = z.looseObject({
  id: z.number().int(),
  name: GameName,
  starPowers: z.array(IdName).default([]),
  gadgets: z.array(IdName).default([]),
  hyperCharges: z.array(IdName).optional(),
  gears: z.array(Gear).optional(),
});
export type Brawler = z.infer<typeof Brawler>;

export const BrawlerList = envelope(Brawler);
export type BrawlerList = z.infer<typeof BrawlerList>;

export const GameMode = z.looseObject({ id: z.number().int(), name: z.string().nullable() });
export type GameMode = z.infer<typeof GameMode>;
export const GameModeList = envelope(GameMode);
export type GameModeList = z.infer<typeof GameModeList>;

// ---------------------------------------------------------------- events

export const ScheduledEvent = z.looseObject({
  startTime: z.string(),
  endTime: z.string(),
  slotId: z.number().int(),
  event: z.looseObject({
    id: z.number().int(),
    mode: z.string().optional(),
    modeId: z.number().int().optional(),
    map: z.string().nullable().optional(),
    modifiers: z.array(z.string()).optional(),
  }),
});
export type ScheduledEvent = z.infer<typeof ScheduledEvent>;

/** `/events/rotation` is a bare array, unlike every other list. */
export const EventRotation = z.array(ScheduledEvent);
export type EventRotation = z.infer<typeof EventRotation>;

// ---------------------------------------------------------------- errors

/** Error body; the overload body `{"message": "API at maximum capacity..."}` has no reason. */
export const ClientErrorBody = z.looseObject({
  reason: z.string().optional(),
  message: z.string().optional(),
  type: z.string().optional(),
  detail: z.unknown().optional(),
});
export type ClientErrorBody = z.infer<typeof ClientErrorBody>;

// ---------------------------------------------------------------- enums (open: display only)

export const KNOWN_CLUB_TYPES = ['open', 'inviteOnly', 'closed', 'unknown'] as const;
export const KNOWN_ROLES = ['notMember', 'member', 'president', 'senior', 'vicePresident', 'unknown'] as const;
export const KNOWN_RESULTS = ['victory', 'defeat', 'draw'] as const;
export const KNOWN_BATTLE_TYPES = [
  'ranked', 'soloRanked', 'teamRanked', 'friendly', 'challenge', 'tournament', 'championshipChallenge',
] as const;

// ---------------------------------------------------------------- time, colour, a player's club

// In a module of their own without zod, so that the render worker, which draws with them, does not
// load zod and these schemas (test/render-worker-imports.test.ts).
export { formatApiTime, nameColorToCss, parseApiTime, playerClub } from './api-format.ts';
