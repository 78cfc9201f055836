/**
 * The simulated game world as a pure model: every method answers "what would the official API say
 * about X at time t" with a plain JSON-ready object in the official 2026 shape, computed on demand
 * from (seed, t). Nothing is materialised; small bounded caches only avoid recomputation.
 */
import { formatApiTime } from '../upstream/schemas.ts';
import { idToTag, normaliseTag, tagProblem, tagToId } from '../upstream/tags.ts';
import { PROFILE_ICON_FIRST, PROFILE_ICON_LAST } from '../upstream/icons.ts';
import { battleBody, daySkeleton, type BattleContext, type Participant, type SkeletonBattle } from './battles.ts';
import {
  brawlerById,
  brawlers as catalogueBrawlers,
  countries,
  gearsOf,
  GEAR_LEVEL,
  modes,
  nameColors,
} from './catalogue/index.ts';
import { ClubLayout, MAX_MEMBERS } from './clubs.ts';
import { activeEvents } from './events.ts';
import { Lru } from '../lib/lru.ts';
import {
  baseTrophiesAt,
  countryOf,
  DAY_MS,
  expAt,
  makeProfile,
  maxShare,
  playerHighest,
  rankHighest,
  rankTrophiesAtDayStart,
  Salt,
  trophyBound,
  victoriesAt,
  type Profile,
} from './model.ts';
import { playerName } from './names.ts';
import { feistel32, feistel32Inverse, gauss, hashInts, hashString, Stream, unit } from './rng.ts';
import { loadout, makeRoster, ownedAt, powerAt, rankOfBrawler, skinAt, type Roster } from './roster.ts';

export interface WorldOptions {
  seed?: string;
  players?: number;
  clubs?: number;
}

/** Rankings list at most this many entries, like the official API. */
export const RANKING_SIZE = 200;

/** The roles a member below the president can have (POST /_sim/players/{tag}/club). */
export const CLUB_MEMBER_ROLES = ['member', 'senior', 'vicePresident'] as const;
export type ClubMemberRole = (typeof CLUB_MEMBER_ROLES)[number];
/** Battle logs keep the 25 newest battles. */
export const BATTLELOG_SIZE = 25;
/** How far back a battle log looks for battles. */
const BATTLELOG_DAYS = 90;

const TAG_LOW_OFFSET = 2 ** 26;
const REGIONS = 24;

type Json = Record<string, unknown>;

export class World {
  readonly seed: string;
  readonly playerCount: number;
  readonly clubCount: number;
  private readonly s: number;
  private readonly playerKey: number;
  private readonly clubKey: number;
  private readonly layout: ClubLayout;
  // Recomputed on a miss (deterministic), so bounded in bytes well under what a large world would
  // fill: at 5,000 entries the rosters alone held 23 MB and the days 22 MB in a process serving
  // the API. Weights measured on the heap (node --expose-gc, 2026-11-24): a profile 641 bytes, a
  // roster 4,573, a day 120 plus 110 a battle (9 battles a day on average). A miss costs a profile
  // 22 µs, a roster 169 µs, a day 73 µs, against ~3 ms to build a player's body; so they are kept
  // small (2, 4 and 4 MB since 2026-11-29, 4, 8 and 8 before: the world lives in the service's
  // process when no token is set, and its memory counts in the service's RSS).
  private readonly profiles = new Lru<number, Profile>(Number.MAX_SAFE_INTEGER, { max: 2 * 2 ** 20, weigh: () => 641 });
  private readonly rosters = new Lru<number, Roster>(Number.MAX_SAFE_INTEGER, { max: 4 * 2 ** 20, weigh: () => 4_573 });
  private readonly days = new Lru<string, SkeletonBattle[]>(Number.MAX_SAFE_INTEGER, { max: 4 * 2 ** 20, weigh: (d) => 120 + 110 * d.length });
  private readonly rankings = new Lru<string, Json[]>(128);
  /** profile icons a player set through the control API (POST /_sim/players/{tag}/icon): they win over the drawn ones */
  private readonly chosenIcons = new Map<number, number>();
  /**
   * Club moves made through the control API (POST /_sim/players/{tag}/club): the club a player is
   * in (-1 = none) and the role given there, winning over the drawn membership at every time.
   */
  private readonly chosenClubs = new Map<number, { club: number; role?: ClubMemberRole }>();

  constructor(opts: WorldOptions = {}) {
    this.seed = opts.seed ?? 'starr';
    this.playerCount = Math.max(1, Math.floor(opts.players ?? 5000));
    this.clubCount = Math.max(1, Math.floor(opts.clubs ?? 500));
    this.s = hashString(this.seed);
    this.playerKey = hashInts(this.s, 0x706c);
    this.clubKey = hashInts(this.s, 0x636c);
    this.layout = new ClubLayout(this.s, this.playerCount, this.clubCount);
  }

  // ------------------------------------------------------------ tags

  private tagOf(index: number, key: number, kind: number): string {
    const low = feistel32(index, key) + TAG_LOW_OFFSET;
    const high = hashInts(this.s, kind, low) % REGIONS;
    return idToTag(BigInt(low) * 256n + BigInt(high));
  }

  private indexOf(tag: string, key: number, kind: number, count: number): number | null {
    const n = normaliseTag(tag);
    if (tagProblem(n) !== null) return null;
    const id = tagToId(n);
    if (id > 2n ** 48n) return null;
    const num = Number(id);
    const high = num % 256;
    const low = Math.floor(num / 256);
    const x = low - TAG_LOW_OFFSET;
    if (x < 0 || x >= 2 ** 32) return null;
    if (hashInts(this.s, kind, low) % REGIONS !== high) return null;
    const i = feistel32Inverse(x, key);
    return i < count ? i : null;
  }

  /** Tag of player i (0 = strongest), `#` included. */
  playerTag(i: number): string {
    return this.tagOf(i, this.playerKey, 1);
  }

  clubTag(c: number): string {
    return this.tagOf(c, this.clubKey, 2);
  }

  /** Index of a player tag (any user spelling), or null when no such player exists. */
  playerIndex(tag: string): number | null {
    return this.indexOf(tag, this.playerKey, 1, this.playerCount);
  }

  clubIndex(tag: string): number | null {
    return this.indexOf(tag, this.clubKey, 2, this.clubCount);
  }

  // ------------------------------------------------------------ players

  private profile(i: number): Profile {
    return this.profiles.getOr(i, () => makeProfile(this.s, i, this.playerCount));
  }

  /** Base trophy total of player i: a function of its index alone, so scans need no profile. */
  private baseOf(i: number): number {
    return baseTrophiesAt((i + 0.5) / this.playerCount);
  }

  private roster(i: number): Roster {
    return this.rosters.getOr(i, () => makeRoster(this.s, this.profile(i)));
  }

  private skeleton(i: number, day: number): SkeletonBattle[] {
    return this.days.getOr(`${i}:${day}`, () => daySkeleton(this.s, this.profile(i), day));
  }

  private countryOfPlayer(i: number): string {
    const c = this.layout.clubOfPlayer(i);
    return countryOf(this.s, i, c >= 0 ? this.layout.country(c) : null);
  }

  playerName(i: number): string {
    return playerName(this.s, i, this.countryOfPlayer(i));
  }

  private nameColor(i: number, atMs: number): string {
    const period = Math.floor(atMs / (120 * DAY_MS) + unit(this.s, Salt.Color, i));
    const u = unit(this.s, Salt.Color, i, period);
    return u < 0.55 ? nameColors[0]! : nameColors[1 + Math.floor(((u - 0.55) / 0.45) * (nameColors.length - 1))]!;
  }

  private iconId(i: number, atMs: number): number {
    const chosen = this.chosenIcons.get(i);
    if (chosen !== undefined) return chosen;
    const period = Math.floor(atMs / (90 * DAY_MS) + unit(this.s, Salt.Icon, i));
    return PROFILE_ICON_FIRST + Math.floor(unit(this.s, Salt.Icon, i, period) * (PROFILE_ICON_LAST - PROFILE_ICON_FIRST + 1));
  }

  /** Trophies of preference rank k at a time: start of day plus that day's battles so far. */
  private rankTrophies(i: number, k: number, atMs: number): number {
    const p = this.profile(i);
    const day = Math.floor(atMs / DAY_MS);
    let v = rankTrophiesAtDayStart(this.s, p, k, day);
    if (k < p.m) {
      for (const b of this.skeleton(i, day)) if (b.kind === 'trophy' && b.k === k && b.at <= atMs) v += b.change;
    }
    return v;
  }

  /** A player's total trophies at a time (the sum of its brawlers'). */
  trophies(i: number, atMs: number): number {
    const p = this.profile(i);
    const day = Math.floor(atMs / DAY_MS);
    let total = p.S;
    for (let k = 0; k < p.m; k++) total += rankTrophiesAtDayStart(this.s, p, k, day) - p.bases[k]!;
    for (const b of this.skeleton(i, day)) if (b.kind === 'trophy' && b.at <= atMs) total += b.change;
    return total;
  }

  /**
   * Sets a player's profile icon from now on, as a player changing it in the game would (tests of
   * account verification). Returns false for an unknown tag or an id outside the icon range.
   */
  setIcon(tag: string, iconId: number): boolean {
    const i = this.playerIndex(tag);
    if (i === null || !Number.isInteger(iconId) || iconId < PROFILE_ICON_FIRST || iconId > PROFILE_ICON_LAST) return false;
    this.chosenIcons.set(i, iconId);
    return true;
  }

  /** The club a player is in at a time, or -1. */
  playerClub(i: number, atMs: number): number {
    const chosen = this.chosenClubs.get(i);
    if (chosen) return chosen.club;
    const c = this.layout.memberClub(i, atMs);
    // a drawn member pushed out of a full club by players moved in
    return c >= 0 && this.chosenClubs.size > 0 && !this.memberIds(c, atMs).includes(i) ? -1 : c;
  }

  /**
   * Members of club c at a time, in seniority order (the first is president): the drawn members
   * without those moved elsewhere, then the players moved in, at most 30.
   */
  private memberIds(c: number, atMs: number): number[] {
    const drawn = this.layout.members(c, atMs);
    if (this.chosenClubs.size === 0) return drawn;
    const joined = [...this.chosenClubs].filter(([, v]) => v.club === c).map(([i]) => i);
    const stay = drawn.filter((i) => !this.chosenClubs.has(i));
    return [...stay.slice(0, Math.max(0, MAX_MEMBERS - joined.length)), ...joined];
  }

  /**
   * A player joining a club, leaving theirs (`club` null) or getting a role in theirs, from now on,
   * as in the game (tests of club feeds and automatic roles). A join moves them out of their club;
   * a role applies in the club they are in. Returns a problem, or null when done.
   */
  moveMember(
    tag: string,
    change: { club: string | null } | { role: ClubMemberRole },
    atMs: number,
  ): { status: 400 | 404; message: string } | null {
    const i = this.playerIndex(tag);
    if (i === null) return { status: 404, message: `No player ${tag}` };
    const current = this.playerClub(i, atMs);
    if ('role' in change) {
      if (current < 0) return { status: 400, message: 'The player is in no club' };
      if (this.memberIds(current, atMs)[0] === i) return { status: 400, message: "The club's president keeps that role" };
      this.chosenClubs.set(i, { club: current, role: change.role });
      return null;
    }
    if (change.club === null) {
      this.chosenClubs.set(i, { club: -1 });
      return null;
    }
    const c = this.clubIndex(change.club);
    if (c === null) return { status: 404, message: `No club ${change.club}` };
    if (c === current) return { status: 400, message: 'The player is in that club already' };
    if (this.memberIds(c, atMs).length >= MAX_MEMBERS) return { status: 400, message: `The club is full (${MAX_MEMBERS} members)` };
    // a newcomer starts as a member, as in the game
    this.chosenClubs.set(i, { club: c, role: 'member' });
    return null;
  }

  private memberRole(i: number, atMs: number): string {
    return this.chosenClubs.get(i)?.role ?? this.layout.role(i, atMs);
  }

  /** GET /players/{tag}; null when the tag is unknown. */
  player(tag: string, atMs: number): Json | null {
    const i = this.playerIndex(tag);
    return i === null ? null : this.playerBody(i, atMs);
  }

  playerBody(i: number, atMs: number): Json {
    const p = this.profile(i);
    const r = this.roster(i);
    const day = Math.floor(atMs / DAY_MS);
    const today = this.skeleton(i, day).filter((b) => b.at <= atMs);
    const brawlers: Json[] = [];
    let total = 0;
    let prestige = 0;
    for (const idx of ownedAt(this.s, p, r, atMs)) {
      const b = catalogueBrawlers[idx]!;
      const k = r.rankOf.get(idx);
      const trophies = k === undefined ? 0 : this.rankTrophies(i, k, atMs);
      const highest = k === undefined ? 0 : rankHighest(this.s, p, k);
      const power = powerAt(this.s, p, r, idx, atMs);
      const lo = loadout(this.s, p, idx, power);
      let streak = 0;
      if (k !== undefined) {
        for (let n = today.length - 1; n >= 0; n--) {
          const bt = today[n]!;
          if (bt.kind !== 'trophy' || bt.k !== k) continue;
          if (bt.change > 0) streak++;
          else break;
        }
      }
      const maxStreak = Math.max(streak, 2 + Math.floor(unit(this.s, Salt.Streak, i, idx) * (4 + Math.min(20, p.S / 8000))));
      const level = Math.floor(highest / 1000);
      total += trophies;
      prestige += level;
      brawlers.push({
        id: b.id,
        name: b.name,
        power,
        rank: Math.min(51, 1 + Math.floor(highest / 250)),
        trophies,
        highestTrophies: highest,
        prestigeLevel: level,
        currentWinStreak: streak,
        maxWinStreak: maxStreak,
        skin: skinAt(this.s, p, idx, atMs),
        gadgets: lo.gadgets,
        gears: lo.gears,
        starPowers: lo.starPowers,
        hyperCharges: lo.hyperCharges,
        buffies: lo.buffies,
      });
    }
    const exp = expAt(this.s, p, atMs);
    const wins = victoriesAt(this.s, p, atMs);
    const strength = Math.min(1, p.S / 80_000);
    const c = this.playerClub(i, atMs);
    return {
      tag: this.playerTag(i),
      name: this.playerName(i),
      nameColor: this.nameColor(i, atMs),
      icon: { id: this.iconId(i, atMs) },
      trophies: total,
      highestTrophies: Math.max(total, playerHighest(this.s, p)),
      totalPrestigeLevel: prestige,
      expLevel: exp.level,
      expPoints: exp.points,
      isQualifiedFromChampionshipChallenge: strength > 0.9 && unit(this.s, Salt.Qualified, i) < 0.3,
      '3vs3Victories': wins.trio,
      soloVictories: wins.solo,
      duoVictories: wins.duo,
      bestRoboRumbleTime: Math.floor(strength * 14 + unit(this.s, Salt.Robo, i) * 7),
      bestTimeAsBigBrawler: unit(this.s, Salt.Robo, i, 1) < 0.1 ? Math.floor(unit(this.s, Salt.Robo, i, 2) * 200) : 0,
      club: c >= 0 ? { tag: this.clubTag(c), name: this.layout.name(c) } : {},
      brawlers,
    };
  }

  // ------------------------------------------------------------ battle log

  /** Ranked (competitive) tier of a player, 1..22; reported as brawler.trophies in soloRanked battles. */
  private rankTier(j: number): number {
    const S = this.profile(j).S;
    return Math.max(1, Math.min(22, Math.round(1 + 20 * Math.pow(Math.min(1, S / 120_000), 0.6) + gauss(this.s, Salt.RankTier, j))));
  }

  /** A player near i in strength, as a battle participant with some brawler at its level. */
  private otherParticipant(i: number, s: Stream, soloRanked: boolean): Participant {
    const spread = Math.max(20, Math.round(this.playerCount * 0.003));
    let j = i + Math.round((s.next() * 2 - 1) * spread);
    j = Math.max(0, Math.min(this.playerCount - 1, j));
    if (j === i) j = i + 1 < this.playerCount ? i + 1 : Math.max(0, i - 1);
    const pj = this.profile(j);
    const b = s.pick(catalogueBrawlers.slice(0, Math.max(10, Math.min(catalogueBrawlers.length, pj.n0 + 5))));
    const strength = Math.min(1, pj.S / 80_000);
    const power = Math.max(1, Math.min(11, Math.round(3 + strength * 8 + (s.next() - 0.5) * 3)));
    const avg = pj.S / pj.n0;
    const trophies = soloRanked ? this.rankTier(j) : Math.max(0, Math.round(avg * (0.5 + s.next())));
    return { tag: this.playerTag(j), name: this.playerName(j), brawler: { id: b.id, name: b.name, power, trophies } };
  }

  /** The 25 newest battles at a time, newest first (ms battle times). */
  recentBattles(i: number, atMs: number): { day: number; b: SkeletonBattle }[] {
    const out: { day: number; b: SkeletonBattle }[] = [];
    const today = Math.floor(atMs / DAY_MS);
    for (let day = today; day > today - BATTLELOG_DAYS && out.length < BATTLELOG_SIZE; day--) {
      const list = this.skeleton(i, day);
      for (let n = list.length - 1; n >= 0 && out.length < BATTLELOG_SIZE; n--) {
        if (list[n]!.at <= atMs) out.push({ day, b: list[n]! });
      }
    }
    return out;
  }

  /** GET /players/{tag}/battlelog; null when the tag is unknown. */
  battlelog(tag: string, atMs: number): Json | null {
    const i = this.playerIndex(tag);
    if (i === null) return null;
    const p = this.profile(i);
    const r = this.roster(i);
    const byRank: number[] = [];
    for (const [idx, k] of r.rankOf) byRank[k] = idx;
    const items = this.recentBattles(i, atMs).map(({ day, b }) => {
      const idx = byRank[b.k]!;
      const cb = catalogueBrawlers[idx]!;
      // The brawler's trophies when the battle started: start of day plus the day's earlier battles.
      let trophies = rankTrophiesAtDayStart(this.s, p, b.k, day);
      for (const e of this.skeleton(i, day)) if (e.n < b.n && e.kind === 'trophy' && e.k === b.k) trophies += e.change;
      const self: Participant = {
        tag: this.playerTag(i),
        name: this.playerName(i),
        brawler: { id: cb.id, name: cb.name, power: powerAt(this.s, p, r, idx, b.at), trophies },
      };
      const spare = [1, 2].map((off) => {
        const k2 = (b.k + off) % p.n0;
        const idx2 = byRank[k2]!;
        const c2 = catalogueBrawlers[idx2]!;
        return { id: c2.id, name: c2.name, power: powerAt(this.s, p, r, idx2, b.at), trophies: rankTrophiesAtDayStart(this.s, p, k2, day) };
      });
      const ctx: BattleContext = {
        seed: this.s,
        self,
        spareBrawlers: spare,
        other: (s, soloRanked) => this.otherParticipant(i, s, soloRanked),
        rankTier: this.rankTier(i),
      };
      return battleBody(ctx, b, day, i);
    });
    return { items, paging: { cursors: {} } };
  }

  // ------------------------------------------------------------ clubs

  /** Member bodies of club c at a time, sorted by trophies (descending), like the API. */
  private memberBodies(c: number, atMs: number): Json[] {
    const ids = this.memberIds(c, atMs);
    const rows = ids.map((i, pos) => ({
      i,
      trophies: this.trophies(i, atMs),
      role: pos === 0 ? 'president' : this.memberRole(i, atMs),
    }));
    rows.sort((a, b) => b.trophies - a.trophies || a.i - b.i);
    return rows.map((r) => ({
      tag: this.playerTag(r.i),
      name: this.playerName(r.i),
      nameColor: this.nameColor(r.i, atMs),
      role: r.role,
      trophies: r.trophies,
      icon: { id: this.iconId(r.i, atMs) },
    }));
  }

  club(tag: string, atMs: number): Json | null {
    const c = this.clubIndex(tag);
    if (c === null) return null;
    const members = this.memberBodies(c, atMs);
    const meta = this.layout.meta(c, atMs);
    const total = members.reduce((a, m) => a + (m.trophies as number), 0);
    return {
      tag: this.clubTag(c),
      name: this.layout.name(c),
      description: meta.description,
      type: meta.type,
      badgeId: meta.badgeId,
      requiredTrophies: this.requiredTrophies(c),
      trophies: total,
      isFamilyFriendly: meta.isFamilyFriendly,
      members,
    };
  }

  private requiredTrophies(c: number): number {
    const cands = this.layout.candidates(c).filter((i) => i >= 0);
    if (cands.length === 0) return 0;
    const weakest = this.profile(cands[cands.length - 1]!).S;
    const step = weakest > 20_000 ? 5000 : 1000;
    return Math.floor((weakest * 0.7) / step) * step;
  }

  clubMembers(tag: string, atMs: number): Json[] | null {
    const c = this.clubIndex(tag);
    return c === null ? null : this.memberBodies(c, atMs);
  }

  // ------------------------------------------------------------ rankings

  /** Country codes with rankings ("global" aside). */
  get countryCodes(): string[] {
    return countries.map((c) => c.code);
  }

  private region(cc: string): string | null {
    const up = cc.toUpperCase();
    if (up === 'GLOBAL') return 'global';
    return countries.some((c) => c.code === up) ? up : null;
  }

  /** Top 200 players of a country (or "global"); null for an unknown country code. */
  playerRankings(cc: string, atMs: number): Json[] | null {
    const region = this.region(cc);
    if (!region) return null;
    const t = Math.floor(atMs / 1000) * 1000;
    return this.rankings.getOr(`p:${region}:${t}`, () => {
      const top = this.topPlayers(region, (i) => this.trophies(i, t), (S) => S + trophyBound(S));
      return top.map(({ i, v }, n) => this.rankingRow(i, v, n + 1, t));
    });
  }

  /** Top 200 players of a country by one brawler's trophies; null for an unknown country or brawler. */
  brawlerRankings(cc: string, brawlerId: number, atMs: number): Json[] | null {
    const region = this.region(cc);
    const b = brawlerById.get(brawlerId);
    if (!region || !b) return null;
    const idx = catalogueBrawlers.indexOf(b);
    const t = Math.floor(atMs / 1000) * 1000;
    return this.rankings.getOr(`b:${region}:${brawlerId}:${t}`, () => {
      const value = (i: number): number | null => {
        const k = rankOfBrawler(this.s, this.profile(i), idx);
        return k === undefined ? null : this.rankTrophies(i, k, t);
      };
      const bound = (S: number): number => {
        const frac = 1 - Math.exp(-S / 30_000);
        const nMin = Math.max(6, Math.floor(6 + frac * (catalogueBrawlers.length - 6) - 11));
        return Math.ceil(1.06 * S * maxShare(nMin) + 25);
      };
      return this.topPlayers(region, value, bound).map(({ i, v }, n) => this.rankingRow(i, v, n + 1, t));
    });
  }

  /** A player and brawler ranking item; `club` has only a name and is left out without a club. */
  private rankingRow(i: number, trophies: number, rank: number, t: number): Json {
    const c = this.playerClub(i, t);
    const row: Json = {
      tag: this.playerTag(i),
      name: this.playerName(i),
      nameColor: this.nameColor(i, t),
      icon: { id: this.iconId(i, t) },
      trophies,
      rank,
    };
    if (c >= 0) row.club = { name: this.layout.name(c) };
    return row;
  }

  /**
   * The best 200 players of a region by `value`. Players are visited strongest base first; the scan
   * stops once no later player can beat the 200th, because `bound(S)` caps the value of any player
   * whose base total is S and S falls with the index.
   */
  private topPlayers(
    region: string,
    value: (i: number) => number | null,
    bound: (S: number) => number,
  ): { i: number; v: number }[] {
    const best: { i: number; v: number }[] = [];
    let floor = -Infinity;
    for (let i = 0; i < this.playerCount; i++) {
      if (best.length >= RANKING_SIZE && bound(this.baseOf(i)) < floor) break;
      if (region !== 'global' && this.countryOfPlayer(i) !== region) continue;
      const v = value(i);
      if (v === null) continue;
      if (best.length < RANKING_SIZE || v > floor) {
        best.push({ i, v });
        best.sort((a, b) => b.v - a.v || a.i - b.i);
        if (best.length > RANKING_SIZE) best.pop();
        if (best.length >= RANKING_SIZE) floor = best[best.length - 1]!.v;
      }
    }
    return best;
  }

  /** Top 200 clubs of a country (or "global"); null for an unknown country code. */
  clubRankings(cc: string, atMs: number): Json[] | null {
    const region = this.region(cc);
    if (!region) return null;
    const t = Math.floor(atMs / 1000) * 1000;
    return this.rankings.getOr(`c:${region}:${t}`, () => {
      const best: { c: number; v: number; members: number }[] = [];
      let floor = -Infinity;
      for (let c = 0; c < this.clubCount; c++) {
        if (region !== 'global' && this.layout.country(c) !== region) continue;
        // Candidates get weaker club by club, so once even 30 copies of a club's strongest possible
        // member cannot reach the 200th club, no later club can either.
        const first = this.layout.strongestCandidate(c);
        // (the bound holds for drawn members only: with players moved between clubs every club is looked at)
        if (best.length >= RANKING_SIZE && first >= 0 && this.chosenClubs.size === 0) {
          const S = this.baseOf(first);
          if (30 * (S + trophyBound(S)) < floor) break;
        }
        const members = this.memberIds(c, t);
        // Exact trophies only for clubs whose members could reach the 200th club at all.
        if (best.length >= RANKING_SIZE) {
          const cap = members.reduce((a, i) => a + this.baseOf(i) + trophyBound(this.baseOf(i)), 0);
          if (cap < floor) continue;
        }
        const v = members.reduce((a, i) => a + this.trophies(i, t), 0);
        if (best.length < RANKING_SIZE || v > floor) {
          best.push({ c, v, members: members.length });
          best.sort((a, b) => b.v - a.v || a.c - b.c);
          if (best.length > RANKING_SIZE) best.pop();
          if (best.length >= RANKING_SIZE) floor = best[best.length - 1]!.v;
        }
      }
      return best.map(({ c, v, members }, n) => ({
        tag: this.clubTag(c),
        name: this.layout.name(c),
        badgeId: this.layout.meta(c, t).badgeId,
        trophies: v,
        rank: n + 1,
        memberCount: members,
      }));
    });
  }

  // ------------------------------------------------------------ catalogue and events

  brawlers(): Json[] {
    return catalogueBrawlers.map((b) => this.brawler(b.id)!);
  }

  brawler(id: number): Json | null {
    const b = brawlerById.get(id);
    if (!b) return null;
    return {
      id: b.id,
      name: b.name,
      starPowers: b.starPowers.map((c) => ({ id: c.id, name: c.name })),
      hyperCharges: b.hyperCharges.map((c) => ({ id: c.id, name: c.name })),
      gears: gearsOf(b).map((g) => ({ id: g.id, name: g.name, level: GEAR_LEVEL })),
      gadgets: b.gadgets.map((c) => ({ id: c.id, name: c.name })),
    };
  }

  /** GET /events/rotation: the events running at a time (a bare array). */
  eventRotation(atMs: number): Json[] {
    return activeEvents(this.s, atMs).map((e) => {
      const event: Json = { id: e.mapId, mode: e.mode, modeId: e.modeId, map: e.map };
      if (e.slot.modifiers) event.modifiers = [...e.slot.modifiers];
      return { startTime: formatApiTime(e.startMs), endTime: formatApiTime(e.endMs), slotId: e.slot.slotId, event };
    });
  }

  gameModes(): Json[] {
    return modes.map((m) => ({ id: m.id, name: m.name }));
  }
}
