/**
 * The player model of the simulated world: everything about player `i` as a pure function of
 * (seed, i, time), computed on demand.
 *
 * Ordering: player 0 is the strongest. A player's base trophy total `S` depends only on its
 * quantile i/N, so rank order is known without looking at anyone; time moves each of the player's
 * main brawlers around its base by a bounded amount, so rankings only need to look at players whose
 * base is close enough to the top (see `trophyBound`).
 *
 * Trophy movement: a player's brawlers are ranked by preference. Its `m` main brawlers (ranks
 * 0..m-1) are the only ones whose trophies move. Rank k is played on days d ≡ k (mod m) when the
 * cycle c = ⌊d/m⌋ satisfies c ≡ k (mod h) (so play days spread evenly, one in h); that day's battles
 * take it from G(k, c−h) to G(k, c), where
 * G is bounded smooth noise around its base. So the trophies of any brawler at the start of any day
 * are closed-form, and the battles of one day (which `battles.ts` fleshes out) add up exactly to the
 * profile's movement.
 */
import { brawlers as catalogueBrawlers, countries } from './catalogue/index.ts';
import { between, gauss, hashInts, pickWeighted, smoothNoise, unit } from './rng.ts';

export const DAY_MS = 86_400_000;
/** Start of the world's recorded progression (unlocks, upgrades, levels grow from here). */
export const WORLD_EPOCH_MS = Date.UTC(2026, 0, 1);
const WORLD_EPOCH_DAY = WORLD_EPOCH_MS / DAY_MS;

/** Salts that keep the independent random decisions apart. */
export const enum Salt {
  Name = 1, Country, Brawlers, Main, Interval, Dormant, Noise, Unlock, UnlockOrder, Pref, Power, Cards, Skin, Color,
  Icon, Level, Victories, Extras, Session, Battle, ClubSize, ClubOn, ClubRole, ClubMeta, Tenure, RankTier, Highest,
  Streak, Qualified, Robo,
}

// ---------------------------------------------------------------- base strength

/** Base total trophies at strength quantile q ∈ (0, 1): ~25k median, ~90k at the top 1%, ~240k for #1 of a million. */
export function baseTrophiesAt(q: number): number {
  if (q < 0.5) return Math.round(25_000 + 16_000 * Math.log(0.5 / q));
  return Math.round(300 + 24_700 * Math.pow((1 - q) / 0.5, 0.7));
}

/** Brawlers owned at the world epoch: few for new accounts, almost all for strong ones. */
function ownedCount(S: number, seed: number, i: number): number {
  const total = catalogueBrawlers.length;
  const frac = 1 - Math.exp(-S / 30_000);
  const n = Math.round(6 + frac * (total - 6) + gauss(seed, Salt.Brawlers, i) * 3);
  return Math.max(6, Math.min(total, n));
}

/** Preference weights of brawler ranks; rank 0 holds the most trophies. */
const SHARE_OFFSET = 15;
const SHARE_POWER = 0.8;
const shareWeight = (k: number): number => Math.pow(k + SHARE_OFFSET, -SHARE_POWER);
const shareTotals: number[] = [0];
for (let n = 1; n <= 256; n++) shareTotals.push(shareTotals[n - 1]! + shareWeight(n - 1));

/** Upper bound of the share of any one brawler for accounts owning at least n brawlers. */
export function maxShare(n: number): number {
  return shareWeight(0) / shareTotals[Math.max(1, Math.min(256, n))]!;
}

/** Movement amplitude of a main brawler with base trophies b. Sum over mains ≤ 0.06·S + 25·m. */
const ampOf = (b: number): number => Math.round(0.06 * b + 25);
const MAX_MAINS = 15;

/** Largest distance between a player's current and base trophy total. */
export function trophyBound(S: number): number {
  return Math.ceil(0.06 * S + 25 * MAX_MAINS);
}

// ---------------------------------------------------------------- profile

export interface Profile {
  i: number;
  /** base trophy total (sum of brawler bases) */
  S: number;
  /** brawlers owned at the world epoch */
  n0: number;
  /** main brawlers (ranks 0..m-1 move) */
  m: number;
  /** cycles between changes of one main brawler (1 = plays daily) */
  h: number;
  /** first day (epoch days) without play, or Infinity */
  dormantDay: number;
  /** bases of all ranks 0..n0-1 (sum = S) */
  bases: Int32Array;
  /** movement amplitudes of the mains */
  amps: Int32Array;
  /** 0..1, how much this player plays besides its trophy battles */
  activity: number;
}

export function makeProfile(seed: number, i: number, N: number): Profile {
  const q = (i + 0.5) / N;
  const S = baseTrophiesAt(q);
  const n0 = ownedCount(S, seed, i);
  const strength = Math.min(1, S / 80_000);
  const m = Math.max(1, Math.min(MAX_MAINS, n0, Math.round(3 + strength * 9 + unit(seed, Salt.Main, i) * 4)));
  // Strong players play daily; casual ones every few days.
  const h = unit(seed, Salt.Interval, i) < 0.25 + 0.6 * strength ? 1 : between(2, 4, seed, Salt.Interval, i, 1);
  // Some weaker accounts stop playing for good, between ~3 months before and ~7 months after the epoch.
  const dormant = unit(seed, Salt.Dormant, i) < 0.18 * (1 - strength);
  const dormantDay = dormant ? WORLD_EPOCH_DAY - between(0, 300, seed, Salt.Dormant, i, 1) + 200 : Infinity;
  const bases = new Int32Array(n0);
  const total = shareTotals[n0]!;
  let rest = S;
  for (let k = n0 - 1; k >= 1; k--) {
    bases[k] = Math.floor((S * shareWeight(k)) / total);
    rest -= bases[k]!;
  }
  bases[0] = rest;
  const amps = new Int32Array(m);
  for (let k = 0; k < m; k++) amps[k] = ampOf(bases[k]!);
  const activity = Math.min(1, 0.2 + strength * 0.6 + unit(seed, Salt.Extras, i) * 0.3);
  return { i, S, n0, m, h, dormantDay, bases, amps, activity };
}

const mod = (a: number, b: number): number => ((a % b) + b) % b;

/** Trophies of main rank k after its change in cycle c. */
function mainValue(seed: number, p: Profile, k: number, c: number): number {
  const noise = smoothNoise(seed, hashInts(seed, Salt.Noise, p.i, k), c, 4);
  return Math.max(0, p.bases[k]! + Math.round(p.amps[k]! * noise));
}

/** The day's trophy change of the main brawler played that day, or null on a rest day. */
export function dayChange(seed: number, p: Profile, day: number): { k: number; net: number } | null {
  if (day >= p.dormantDay) return null;
  const k = mod(day, p.m);
  const c = Math.floor(day / p.m);
  if (mod(c - k, p.h) !== 0) return null;
  return { k, net: mainValue(seed, p, k, c) - mainValue(seed, p, k, c - p.h) };
}

/** Trophies of rank k at the start of `day` (epoch days). */
export function rankTrophiesAtDayStart(seed: number, p: Profile, k: number, day: number): number {
  if (k >= p.m) return k < p.n0 ? p.bases[k]! : 0;
  const d = Math.min(day, p.dormantDay);
  const cMax = Math.floor((d - 1 - k) / p.m);
  const c = cMax - mod(cMax - k, p.h);
  return mainValue(seed, p, k, c);
}

/** Highest trophies ever of rank k: above anything the movement can reach, so it never has to grow. */
export function rankHighest(seed: number, p: Profile, k: number): number {
  const base = k < p.n0 ? p.bases[k]! : 0;
  const amp = k < p.m ? p.amps[k]! : 0;
  return base + amp + Math.floor(unit(seed, Salt.Highest, p.i, k) * (0.15 * base + 40));
}

export function playerHighest(seed: number, p: Profile): number {
  return p.S + trophyBound(p.S) + Math.floor(unit(seed, Salt.Highest, p.i) * 0.1 * p.S);
}

// ---------------------------------------------------------------- identity

const countryWeights = countries.map((c) => c.weight);

/** A weighted random country (players and clubs). */
export function pickCountry(u: number): string {
  return countries[pickWeighted(countryWeights, u)]!.code;
}

/** Most club members share their club's country. */
export function countryOf(seed: number, i: number, clubCountry: string | null): string {
  if (clubCountry !== null && unit(seed, Salt.Country, i, 1) < 0.8) return clubCountry;
  return pickCountry(unit(seed, Salt.Country, i));
}

/** Player level and experience grow steadily from the world epoch. */
export function expAt(seed: number, p: Profile, atMs: number): { level: number; points: number } {
  const base = Math.round(15 + 300 * Math.pow(Math.min(3, p.S / 80_000), 0.7) + gauss(seed, Salt.Level, p.i) * 8);
  const perLevelDays = 4 + unit(seed, Salt.Level, p.i, 1) * 12;
  const days = Math.max(0, Math.min(atMs, p.dormantDay * DAY_MS) - WORLD_EPOCH_MS) / DAY_MS;
  const progress = days / perLevelDays;
  const level = Math.max(1, base + Math.floor(progress));
  const within = progress - Math.floor(progress);
  const pointsAt = (L: number): number => 5 * L * (L + 7);
  const points = pointsAt(level) + Math.floor(within * (pointsAt(level + 1) - pointsAt(level)));
  return { level, points };
}

/** Victory counters: a base from account strength plus steady growth (never decreasing). */
export function victoriesAt(seed: number, p: Profile, atMs: number): { trio: number; solo: number; duo: number } {
  const strength = p.S / 25_000;
  const days = Math.max(0, Math.min(atMs, p.dormantDay * DAY_MS) - WORLD_EPOCH_MS) / DAY_MS;
  const rate = (p.activity * 12) / p.h;
  const v3 = Math.round(strength * (1500 + unit(seed, Salt.Victories, p.i, 0) * 4000) + days * rate * 0.6);
  const vs = Math.round(strength * (100 + unit(seed, Salt.Victories, p.i, 1) * 500) + days * rate * 0.08);
  const vd = Math.round(strength * (200 + unit(seed, Salt.Victories, p.i, 2) * 800) + days * rate * 0.12);
  return { trio: v3, solo: vs, duo: vd };
}

export { WORLD_EPOCH_DAY };
