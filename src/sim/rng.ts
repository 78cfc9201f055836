/**
 * Stateless deterministic randomness. Every random choice of the simulated world is a hash of
 * (seed, what is being decided, which entity, which time step), so any fact can be derived on
 * demand in any order without storing or replaying anything.
 */

/** FNV-1a of a string, 32 bits. */
export function hashString(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** A strong 32-bit integer finaliser (lowbias32). */
function mix(x: number): number {
  x ^= x >>> 16;
  x = Math.imul(x, 0x7feb352d);
  x ^= x >>> 15;
  x = Math.imul(x, 0x846ca68b);
  x ^= x >>> 16;
  return x >>> 0;
}

/** Hash of a list of integers (each folded into 32 bits; negatives and values above 2^32 are fine). */
export function hashInts(seed: number, ...parts: number[]): number {
  let h = mix(seed ^ 0x9e3779b9);
  for (const p of parts) {
    const lo = p >>> 0;
    const hi = Math.floor(p / 4294967296) >>> 0;
    h = mix(h ^ lo) ^ Math.imul(hi, 0x27d4eb2d);
    h = mix(h + 0x165667b1);
  }
  return h >>> 0;
}

/** Uniform in [0, 1). */
export function unit(seed: number, ...parts: number[]): number {
  return hashInts(seed, ...parts) / 4294967296;
}

/** Uniform integer in [lo, hi] (inclusive). */
export function between(lo: number, hi: number, seed: number, ...parts: number[]): number {
  return lo + Math.floor(unit(seed, ...parts) * (hi - lo + 1));
}

/** Picks one item of a non-empty array. */
export function pick<T>(items: readonly T[], seed: number, ...parts: number[]): T {
  return items[Math.floor(unit(seed, ...parts) * items.length)]!;
}

/** Picks by weight: `weights[i]` is the relative chance of index i. */
export function pickWeighted(weights: readonly number[], u: number): number {
  let total = 0;
  for (const w of weights) total += w;
  let x = u * total;
  for (let i = 0; i < weights.length; i++) {
    x -= weights[i]!;
    if (x < 0) return i;
  }
  return weights.length - 1;
}

/** Approximately normal (mean 0, sd 1) from four uniforms; bounded to about ±3.5. */
export function gauss(seed: number, ...parts: number[]): number {
  const h = hashInts(seed, ...parts);
  let s = 0;
  for (let k = 0; k < 4; k++) s += unit(h, k);
  return (s - 2) * Math.sqrt(3);
}

/**
 * A small stream of uniforms for code that needs many draws for one decision (shuffles, battle
 * rosters). Still deterministic: the stream is fully defined by its key.
 */
export class Stream {
  private n = 0;
  private readonly key: number;
  constructor(seed: number, ...parts: number[]) {
    this.key = hashInts(seed, ...parts);
  }
  next(): number {
    return unit(this.key, this.n++);
  }
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
}

/**
 * A keyed bijection on [0, 2^32): a four-round Feistel network over 16-bit halves. Used to turn a
 * player or club index into a tag-looking number and back without a table.
 */
export function feistel32(x: number, key: number): number {
  let l = (x >>> 16) & 0xffff;
  let r = x & 0xffff;
  for (let round = 0; round < 4; round++) {
    const f = hashInts(key, round, r) & 0xffff;
    const nl = r;
    r = l ^ f;
    l = nl;
  }
  return ((l << 16) | r) >>> 0;
}

export function feistel32Inverse(y: number, key: number): number {
  let l = (y >>> 16) & 0xffff;
  let r = y & 0xffff;
  for (let round = 3; round >= 0; round--) {
    const f = hashInts(key, round, l) & 0xffff;
    const pr = l;
    l = r ^ f;
    r = pr;
  }
  return ((l << 16) | r) >>> 0;
}

/**
 * Smooth bounded noise in [-1, 1] along a time axis: cosine interpolation between hashed knots
 * `period` units apart. Moves believably (no jumps) and never drifts away.
 */
export function smoothNoise(seed: number, key: number, x: number, period: number): number {
  const p = x / period;
  const k = Math.floor(p);
  const f = p - k;
  const a = unit(seed, key, k) * 2 - 1;
  const b = unit(seed, key, k + 1) * 2 - 1;
  const w = (1 - Math.cos(f * Math.PI)) / 2;
  return a + (b - a) * w;
}
