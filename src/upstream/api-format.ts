/**
 * The game API's time stamps, colours and a player's club, as plain functions: no zod, so that the
 * render worker can use them without loading the schemas (schemas.ts re-exports them).
 */
import type { Player } from './schemas.ts';

/** `20250815T021410.000Z` → epoch milliseconds; NaN when the string is not in that format. */
export function parseApiTime(s: string): number {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})(?:\.(\d{1,3}))?Z$/.exec(s);
  if (!m) return Number.NaN;
  const [, y, mo, d, h, mi, se, ms] = m;
  return Date.UTC(+y!, +mo! - 1, +d!, +h!, +mi!, +se!, ms ? +ms.padEnd(3, '0') : 0);
}

/** Epoch milliseconds → `YYYYMMDDTHHMMSS.000Z` (milliseconds are always written as .000). */
export function formatApiTime(ms: number): string {
  const d = new Date(Math.floor(ms / 1000) * 1000);
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${p(d.getUTCFullYear(), 4)}${p(d.getUTCMonth() + 1)}${p(d.getUTCDate())}T${p(d.getUTCHours())}${p(
    d.getUTCMinutes(),
  )}${p(d.getUTCSeconds())}.000Z`;
}

/** Game colour `0xAARRGGBB` → CSS `#RRGGBB` (alpha dropped); undefined when absent or malformed. */
export function nameColorToCss(c: string | undefined): string | undefined {
  if (!c) return undefined;
  const m = /^0x(?:[0-9a-f]{2})?([0-9a-f]{6})$/i.exec(c.trim());
  return m ? `#${m[1]!.toLowerCase()}` : undefined;
}

/** The player's club tag and name, or null when they have none. */
export function playerClub(p: Player): { tag: string; name: string } | null {
  const c = p.club as { tag?: string; name?: string } | undefined;
  return c && typeof c.tag === 'string' ? { tag: c.tag, name: c.name ?? '' } : null;
}
