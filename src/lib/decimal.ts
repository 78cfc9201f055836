/**
 * The decimal digits of a count that changes on every call (a rate limit's remaining requests),
 * without V8's number-to-string cache.
 *
 * `String(n)` keeps each number it converts, with its string, in a cache the heap holds in its old
 * generation. A number seen for the first time gets a new string stored there: an old object
 * pointing at a young one, which every scavenge then visits, copies and, at the next one, promotes —
 * where it stays until a major collection. A count that differs on every answer (a client with a
 * high limit, as bench:http's) did that once per answer: 85 % of the bytes the cached answers
 * promoted (docs/benchmarks.md, *What a cached answer does, and why*). Made from three-digit pieces
 * here, the string is young garbage once the answer is written.
 */

/** "0"…"999" and "000"…"999": made once, old and shared. */
const PLAIN = Array.from({ length: 1000 }, (_, i) => String(i));
const PADDED = Array.from({ length: 1000 }, (_, i) => String(i).padStart(3, '0'));

/**
 * `String(n)` for any number; for a whole number from 0 to 10^15 − 1 without the number cache (a flat
 * string up to 12 digits; V8 makes longer concatenations cons strings).
 */
export function decimal(n: number): string {
  if (!(n >= 0 && n < 1e15 && Number.isInteger(n))) return String(n);
  if (n < 1e3) return PLAIN[n]!;
  // below 10^15 a whole number is exact in a double, and so is each quotient of it by 1000
  const a = Math.floor(n / 1e3);
  const s = PADDED[n - a * 1e3]!;
  if (a < 1e3) return PLAIN[a]! + s;
  const b = Math.floor(a / 1e3);
  const t = PADDED[a - b * 1e3]! + s;
  if (b < 1e3) return PLAIN[b]! + t;
  const c = Math.floor(b / 1e3);
  const u = PADDED[b - c * 1e3]! + t;
  if (c < 1e3) return PLAIN[c]! + u;
  const d = Math.floor(c / 1e3);
  return PLAIN[d]! + PADDED[c - d * 1e3]! + u;
}
