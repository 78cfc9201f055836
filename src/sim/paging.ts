/**
 * The official paging scheme: `limit`, and opaque `after`/`before` cursors that are unpadded
 * base64url of `{"pos":N}` (reference/upstream-api.md §1).
 */
export function encodeCursor(pos: number): string {
  return Buffer.from(JSON.stringify({ pos }), 'utf8').toString('base64url');
}

/** The position in a cursor, or null when it is not one of ours (hand-made, padded, garbage). */
export function decodeCursor(cursor: string): number | null {
  if (!/^[A-Za-z0-9_-]+$/.test(cursor)) return null;
  try {
    const v = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return null;
    const pos = (v as { pos?: unknown }).pos;
    if (typeof pos !== 'number' || !Number.isSafeInteger(pos) || pos < 0) return null;
    return encodeCursor(pos) === cursor ? pos : null;
  } catch {
    return null;
  }
}

export interface PageRequest {
  limit?: number;
  after?: number;
  before?: number;
}

export interface Page<T> {
  items: T[];
  paging: { cursors: { before?: string; after?: string } };
}

/** One page of a list, with the cursors the official API would send. */
export function page<T>(all: readonly T[], req: PageRequest): Page<T> {
  const limit = req.limit ?? all.length;
  let start: number;
  let end: number;
  if (req.before !== undefined) {
    end = Math.min(req.before, all.length);
    start = Math.max(0, end - limit);
  } else {
    start = Math.min(req.after ?? 0, all.length);
    end = Math.min(all.length, start + limit);
  }
  const cursors: { before?: string; after?: string } = {};
  if (start > 0) cursors.before = encodeCursor(start);
  if (end < all.length) cursors.after = encodeCursor(end);
  // The API writes `after` first when both are present.
  const ordered = cursors.after !== undefined && cursors.before !== undefined ? { after: cursors.after, before: cursors.before } : cursors;
  return { items: all.slice(start, end), paging: { cursors: ordered } };
}
