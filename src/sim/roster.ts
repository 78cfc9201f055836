/**
 * Which brawlers an account owns, in which order it prefers them, and how each one's power level,
 * cards, gears and skin evolve over time. Monotone in time: a brawler once owned stays owned, power
 * only goes up, and a card unlocked at some power stays unlocked.
 */
import {
  brawlers as catalogue,
  buffiesBrawlers,
  gearsOf,
  GEAR_LEVEL,
  skinLines,
  type CatalogueBrawler,
} from './catalogue/index.ts';
import { DAY_MS, Salt, WORLD_EPOCH_MS, type Profile } from './model.ts';
import { Stream, unit } from './rng.ts';

const RARITY_ORDER: Record<CatalogueBrawler['rarity'], number> = {
  common: 0, rare: 0.6, superRare: 1.2, epic: 1.8, mythic: 2.4, legendary: 3.0, ultraLegendary: 3.4,
};

export interface Roster {
  /** catalogue indices in the order the account unlocks them */
  unlockOrder: number[];
  /** catalogue index → preference rank (only brawlers owned at the epoch have one) */
  rankOf: Map<number, number>;
  /** days between unlocks after the epoch */
  unlockEveryDays: number;
  /** days between power upgrades of one brawler */
  upgradeEveryDays: number;
}

const unlockKey = (seed: number, p: Profile, idx: number): number =>
  RARITY_ORDER[catalogue[idx]!.rarity] + (idx / catalogue.length) * 1.5 + unit(seed, Salt.UnlockOrder, p.i, idx) * 2.2;
const prefKey = (seed: number, p: Profile, idx: number): number => unit(seed, Salt.Pref, p.i, idx);

export function makeRoster(seed: number, p: Profile): Roster {
  const keyed = catalogue.map((_, idx) => ({ idx, key: unlockKey(seed, p, idx) }));
  keyed.sort((a, b) => a.key - b.key || a.idx - b.idx);
  const unlockOrder = keyed.map((k) => k.idx);
  const owned = unlockOrder.slice(0, p.n0);
  const pref = owned.map((idx) => ({ idx, key: prefKey(seed, p, idx) })).sort((a, b) => a.key - b.key || a.idx - b.idx);
  const rankOf = new Map(pref.map((x, rank) => [x.idx, rank]));
  const strength = Math.min(1, p.S / 80_000);
  return {
    unlockOrder,
    rankOf,
    unlockEveryDays: 20 + unit(seed, Salt.Unlock, p.i) * 70 - strength * 10,
    upgradeEveryDays: 30 + unit(seed, Salt.Power, p.i) * 90,
  };
}

/**
 * Preference rank of one brawler without building the whole roster (same order as makeRoster), or
 * undefined when the account did not own it at the epoch. Used by brawler rankings, which look at
 * thousands of accounts for a single brawler.
 */
export function rankOfBrawler(seed: number, p: Profile, idx: number): number | undefined {
  const keys = new Float64Array(catalogue.length);
  for (let j = 0; j < catalogue.length; j++) keys[j] = unlockKey(seed, p, j);
  // Owned at the epoch = among the n0 smallest unlock keys (keys are distinct hashes in practice).
  const threshold = keys.slice().sort()[p.n0 - 1]!;
  if (keys[idx]! > threshold) return undefined;
  const mine = prefKey(seed, p, idx);
  let rank = 0;
  for (let j = 0; j < catalogue.length; j++) {
    if (j === idx || keys[j]! > threshold) continue;
    const k = prefKey(seed, p, j);
    if (k < mine || (k === mine && j < idx)) rank++;
  }
  return rank;
}

/** Time (ms) from which the account owns catalogue brawler idx; -Infinity when owned at the epoch. */
export function unlockTime(seed: number, p: Profile, r: Roster, idx: number): number {
  const pos = r.unlockOrder.indexOf(idx);
  if (pos < p.n0) return -Infinity;
  const j = pos - p.n0 + 1;
  const jitter = unit(seed, Salt.Unlock, p.i, idx) * 0.6;
  const t = WORLD_EPOCH_MS + (j + jitter) * r.unlockEveryDays * DAY_MS;
  // Dormant accounts unlock nothing after they stop playing.
  return t >= p.dormantDay * DAY_MS ? Infinity : t;
}

export function ownedAt(seed: number, p: Profile, r: Roster, atMs: number): number[] {
  const out: number[] = [];
  for (let pos = 0; pos < r.unlockOrder.length; pos++) {
    const idx = r.unlockOrder[pos]!;
    if (pos < p.n0 || unlockTime(seed, p, r, idx) <= atMs) out.push(idx);
  }
  return out.sort((a, b) => catalogue[a]!.id - catalogue[b]!.id);
}

/** Power level 1..11 of an owned brawler at a time. */
export function powerAt(seed: number, p: Profile, r: Roster, idx: number, atMs: number): number {
  const strength = Math.min(1, p.S / 80_000);
  const rank = r.rankOf.get(idx);
  const unlocked = unlockTime(seed, p, r, idx);
  const effective = Math.min(atMs, p.dormantDay * DAY_MS);
  let start: number;
  let from: number;
  if (rank === undefined) {
    start = 1;
    from = unlocked;
  } else {
    const main = rank < p.m ? 2 : 0;
    start = Math.round(2 + strength * 8 + main + (unit(seed, Salt.Power, p.i, idx) - 0.5) * 4);
    from = WORLD_EPOCH_MS;
  }
  const every = r.upgradeEveryDays * (rank === undefined ? 0.5 : 1);
  const phase = unit(seed, Salt.Power, p.i, idx, 1) * every;
  const grown = effective > from ? Math.floor(((effective - from) / DAY_MS + phase) / every) : 0;
  return Math.max(1, Math.min(11, start + grown));
}

export interface CardPick {
  id: number;
  name: string;
}

/** Cards and gears of an owned brawler at a power level (thresholds fixed per account, so monotone). */
export function loadout(seed: number, p: Profile, idx: number, power: number) {
  const b = catalogue[idx]!;
  const strength = Math.min(1, p.S / 80_000);
  // Every draw is made whatever the power, so a higher power only ever adds cards (monotone).
  const u = new Stream(seed, Salt.Cards, p.i, idx);
  const [uGadget, uSp, uGear, uHc, uBg, uBs, uBh] = [u.next(), u.next(), u.next(), u.next(), u.next(), u.next(), u.next()];
  const take = <T>(list: readonly T[], n: number, salt: number): T[] => {
    const s = new Stream(seed, Salt.Cards, p.i, idx, salt);
    const shuffled = list.map((x) => ({ x, k: s.next() })).sort((a, b2) => a.k - b2.k).map((e) => e.x);
    return shuffled.slice(0, Math.max(0, Math.min(n, list.length)));
  };
  const gadgetCount = power >= 7 ? (uGadget! < 0.3 + 0.6 * strength ? 2 : 1) : 0;
  const spCount = power >= 9 ? (uSp! < 0.2 + 0.7 * strength ? 2 : 1) : 0;
  const gearCount = power >= 8 ? (power >= 10 ? 2 : 1) + (uGear! < strength * 0.8 ? 2 : 0) : 0;
  const hasHc = power >= 11 && uHc! < 0.25 + 0.7 * strength;
  const gadgets = take(b.gadgets, gadgetCount, 1);
  const starPowers = take(b.starPowers, spCount, 2);
  const gears = take(gearsOf(b), gearCount, 3).map((g) => ({ id: g.id, name: g.name, level: GEAR_LEVEL }));
  const hyperCharges = hasHc ? b.hyperCharges.slice(0, 1) : [];
  const hasBuffies = buffiesBrawlers.has(b.id) && power >= 11;
  const buffies = {
    gadget: hasBuffies && uBg! < strength,
    starPower: hasBuffies && uBs! < strength * 0.8,
    hyperCharge: hasBuffies && hyperCharges.length > 0 && uBh! < strength * 0.6,
  };
  return { gadgets, starPowers, gears, hyperCharges, buffies };
}

/** The equipped skin; switches now and then (per 30-day period). */
export function skinAt(seed: number, p: Profile, idx: number, atMs: number): { id: number; name: string } {
  const b = catalogue[idx]!;
  const period = Math.floor(atMs / (30 * DAY_MS));
  const u = unit(seed, Salt.Skin, p.i, idx, period);
  const line = u < 0.45 ? 0 : 1 + Math.floor(((u - 0.45) / 0.55) * (skinLines.length - 1));
  return { id: 29000000 + idx * 16 + line, name: line === 0 ? b.name : `${skinLines[line]}\n${b.name}` };
}
