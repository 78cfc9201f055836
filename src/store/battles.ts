/**
 * Reading battle-log items (pure functions): who took part, with which brawlers, who won, and the
 * key that identifies one battle across every log it appears in.
 *
 * The log is written from the polled player's side. For the others: in two-team battles the other
 * team gets the opposite result; in showdown (teams or players listed by placement) a place in the
 * top half counts as a win; co-op PvE shares one result; anything else (e.g. Big Game) only has a
 * result for the polled player. For the polled player a showdown is a win when it gained trophies
 * (top half when there is no trophy change): the definition of render/measures.ts battleOutcome,
 * so the pictures and the statistics count the same battles as won.
 */
import { parseApiTime, type BattleLogItem, type BattlePlayer } from '../upstream/schemas.ts';

export type Result = 1 | 0 | -1;

export interface Participant {
  tag: string;
  name: string;
  brawlers: number[];
  result: Result | null;
  star: boolean;
}

export interface ParsedBattle {
  /** unix seconds */
  t: number;
  /** event/map id; null for map-maker and competition maps (id 0) */
  mapId: number | null;
  mapName: string | null;
  /** mode the map belongs to (the event's, falling back on the battle's rules) */
  mapMode: string;
  /** the rules played (battle.mode) */
  mode: string;
  type: string | null;
  participants: Participant[];
  owner: {
    brawlerId: number | null;
    result: Result | null;
    trophyChange: number | null;
    rank: number | null;
    star: boolean;
  };
  /** true when the battle should count in map/brawler statistics */
  countsForMeta: boolean;
}

const OPPOSITE: Record<string, Result> = { victory: -1, defeat: 1, draw: 0 };
const OWN: Record<string, Result> = { victory: 1, defeat: -1, draw: 0 };
/** Matchmade battle types; friendlies, challenges and tournaments would skew the meta. */
const META_TYPES = new Set(['ranked', 'soloRanked', 'teamRanked']);

function placementResult(place: number, groups: number): Result {
  return place <= Math.ceil(groups / 2) ? 1 : -1;
}

function ownShowdownResult(rank: number, groups: number, trophyChange: number | undefined): Result {
  if (trophyChange !== undefined) return trophyChange > 0 ? 1 : -1;
  return placementResult(rank, groups);
}

function brawlersOf(p: BattlePlayer): number[] {
  if (p.brawlers && p.brawlers.length > 0) return p.brawlers.map((b) => b.id);
  return p.brawler ? [p.brawler.id] : [];
}

export function parseBattle(ownerTag: string, item: BattleLogItem): ParsedBattle | null {
  const b = item.battle;
  if (!b) return null; // upstream sometimes omits it (API bug 2022-03-15)
  const ms = parseApiTime(item.battleTime);
  if (!Number.isFinite(ms)) return null;
  const t = Math.floor(ms / 1000);
  const starTag = b.starPlayer?.tag ?? null;
  const ownResult: Result | null =
    b.result !== undefined ? (OWN[b.result] ?? null) : null;
  const participants: Participant[] = [];
  const add = (p: BattlePlayer, result: Result | null) =>
    participants.push({ tag: p.tag, name: p.name, brawlers: brawlersOf(p), result, star: p.tag === starTag });

  let ownerResult = ownResult;
  if (b.teams && b.teams.length > 0) {
    const ownTeam = b.teams.findIndex((team) => team.some((p) => p.tag === ownerTag));
    if (b.teams.length === 2 && b.result !== undefined) {
      b.teams.forEach((team, i) => team.forEach((p) => add(p, i === ownTeam ? ownResult : (OPPOSITE[b.result!] ?? null))));
    } else {
      // showdown in teams, listed by placement
      const groups = b.teams.length;
      b.teams.forEach((team, i) => team.forEach((p) => add(p, placementResult(i + 1, groups))));
      if (b.rank !== undefined) ownerResult = ownShowdownResult(b.rank, groups, b.trophyChange);
    }
  } else if (b.players && b.players.length > 0) {
    const duels = b.players.some((p) => (p.brawlers?.length ?? 0) > 0);
    if (duels && b.result !== undefined) {
      b.players.forEach((p) => add(p, p.tag === ownerTag ? ownResult : (OPPOSITE[b.result!] ?? null)));
    } else if (b.rank !== undefined) {
      const groups = b.players.length;
      b.players.forEach((p, i) => add(p, placementResult(i + 1, groups)));
      ownerResult = ownShowdownResult(b.rank, groups, b.trophyChange);
    } else if (b.level !== undefined && b.bigBrawler === undefined) {
      b.players.forEach((p) => add(p, ownResult)); // co-op PvE
    } else {
      b.players.forEach((p) => add(p, p.tag === ownerTag ? ownResult : null));
      if (b.bigBrawler) add(b.bigBrawler, b.bigBrawler.tag === ownerTag ? ownResult : null);
    }
  }

  const owner = participants.find((p) => p.tag === ownerTag);
  const duelsChange = b.players
    ?.find((p) => p.tag === ownerTag)
    ?.brawlers?.reduce((s, x) => s + (x.trophyChange ?? 0), 0);
  const mapId = item.event.id > 0 ? item.event.id : null;
  const eventMode = item.event.mode && item.event.mode !== 'unknown' ? item.event.mode : undefined;
  return {
    t,
    mapId,
    mapName: item.event.map ?? null,
    mapMode: eventMode ?? b.mode,
    mode: b.mode,
    type: b.type ?? null,
    participants,
    owner: {
      brawlerId: owner?.brawlers[0] ?? null,
      result: ownerResult,
      trophyChange: b.trophyChange ?? duelsChange ?? null,
      rank: b.rank ?? null,
      star: starTag !== null && starTag === ownerTag,
    },
    countsForMeta: mapId !== null && b.type !== undefined && META_TYPES.has(b.type) && participants.length > 0,
  };
}

/**
 * The smallest participant tag: together with the battle time it names one battle, since nobody
 * finishes two battles in the same second. Falls back on the owner when no participant is listed.
 */
export function battleKeyTag(ownerTag: string, battle: ParsedBattle): string {
  let min = ownerTag;
  for (const p of battle.participants) if (p.tag < min) min = p.tag;
  return min;
}
