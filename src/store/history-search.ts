/**
 * Name search over every player and club seen. Names are folded (search-fold.ts); each match class
 * is read best-first by rank key (most trophies first, see history-schema.ts) and only as far as
 * the page needs, so a search costs about one page of index entries whatever the query:
 *   exact     B-tree on folded
 *   prefix    B-tree range when narrow, else trigram phrase "\x01q"
 *   word      unicode61 FTS5 index, phrase-prefix of the query's words
 *   substring trigram FTS5 index, phrase "q" (3 characters or more)
 * Results are ranked by class, then trophies. `total` counts matches up to SEARCH_TOTAL_CAP.
 */
import type { SqlDb } from './sql.ts';
import { foldName, SUBSTRING_MIN_CHARS, words, type MatchClass } from './search-fold.ts';
import { RANK_ID_BITS, rankKeySql } from './history-schema.ts';

export interface SearchRow {
  id: number;
  tag: string;
  name: string;
  trophies: number | null;
  clubTag: string | null;
  clubName: string | null;
  memberCount: number | null;
  badgeId: number | null;
}

export interface RawEntityRow {
  id: number;
  tag: string;
  name: string;
  trophies: number | null;
  club_tag: string | null;
  club_name: string | null;
  member_count: number | null;
  badge_id: number | null;
}

export function toSearchRow(r: RawEntityRow): SearchRow {
  return {
    id: r.id,
    tag: r.tag,
    name: r.name,
    trophies: r.trophies,
    clubTag: r.club_tag,
    clubName: r.club_name,
    memberCount: r.member_count,
    badgeId: r.badge_id,
  };
}

export interface SearchHit extends SearchRow {
  match: MatchClass;
}

export interface SearchPage {
  items: SearchHit[];
  total: number;
}

const fts = (table: string) => `SELECT rowid AS k FROM ${table} WHERE ${table} MATCH ? ORDER BY rowid LIMIT ?`;

/** The highest code point: `q || MAX` bounds the range of strings starting with q. */
const MAX_CHAR = String.fromCodePoint(0x10ffff);

function ftsPhrase(s: string): string {
  return `"${s.replace(/"/g, '""')}"`;
}

/**
 * Totals stop counting here ("2500" reads "2,500 or more"): twice the deepest reachable result
 * (offset 1000 + limit 250), so a client always knows whether another page exists, while counting
 * stays a bounded walk of the index.
 */
export const SEARCH_TOTAL_CAP = 2_500;

const ID_MOD = 2 ** RANK_ID_BITS;
/** Prefix ranges narrower than this are read from the B-tree and sorted. */
const NARROW_PREFIX = 1000;

/** One ranking class of a name search: which class, and its matches' keys best-first, `want` at most. */
export interface ClassQuery {
  cls: MatchClass;
  keys(want: number): Promise<number[]>;
}

/**
 * The ranking rule of name search, the same on every backend: classes best first (exact, prefix,
 * word, substring), a match counted in the first class that finds it, each class asked for just
 * enough rows to fill `need` past what earlier classes gave. `exhausted`: every match was seen, so
 * the total is `ranked.length` and needs no count.
 */
export async function rankByClass(classes: ClassQuery[], need: number): Promise<{ ranked: { key: number; cls: MatchClass }[]; exhausted: boolean }> {
  const ranked: { key: number; cls: MatchClass }[] = [];
  const seen = new Set<number>();
  let exhausted = true;
  for (const c of classes) {
    if (ranked.length >= need) {
      exhausted = false;
      break;
    }
    // Earlier classes are (nearly) subsets of later ones: ask for enough to skip them all.
    const want = need - ranked.length + seen.size;
    const keys = await c.keys(want);
    for (const k of keys) {
      if (seen.has(k)) continue;
      seen.add(k);
      if (ranked.length < need) ranked.push({ key: k, cls: c.cls });
      else exhausted = false;
    }
    if (keys.length === want) exhausted = false;
  }
  return { ranked, exhausted };
}

export async function searchNames(
  db: SqlDb,
  kind: 'player' | 'club',
  name: string,
  limit: number,
  offset: number,
): Promise<SearchPage> {
  const q = foldName(name);
  if (q === '') return { items: [], total: 0 };
  const sub = `${kind}_sub`;
  const wordsTable = `${kind}_words`;
  const ws = words(q);
  const long = [...q].length >= SUBSTRING_MIN_CHARS;
  const rank = rankKeySql('');
  // Each class is one query returning rank keys best-first, `?` being how many to return.
  // Prefix: a B-tree range when it is narrow (sorting it is cheap), else the trigram index, which
  // reads a wide prefix ("[top", a clan tag shared by thousands) best-first without sorting.
  // A one-character query has no trigram ("\x01q" is two characters): the B-tree is its only index.
  let narrow = [...q].length === 1;
  if ([...q].length >= 3) {
    const probe = await db.get<{ n: number }>(
      `SELECT count(*) AS n FROM (SELECT 1 FROM ${kind} WHERE folded > ? AND folded < ? LIMIT ${NARROW_PREFIX})`,
      [q, q + MAX_CHAR],
    );
    narrow = (probe?.n ?? 0) < NARROW_PREFIX;
  }
  const classes: { cls: MatchClass; sql: string; params: string[] }[] = [
    { cls: 0, sql: `SELECT ${rank} AS k FROM ${kind} WHERE folded = ? ORDER BY k LIMIT ?`, params: [q] },
    narrow
      ? { cls: 1, sql: `SELECT ${rank} AS k FROM ${kind} WHERE folded > ? AND folded < ? ORDER BY k LIMIT ?`, params: [q, q + MAX_CHAR] }
      : { cls: 1, sql: fts(sub), params: [ftsPhrase(`\u0001${q}`)] },
  ];
  if (ws.length > 0) classes.push({ cls: 2, sql: fts(wordsTable), params: [`${ftsPhrase(ws.join(' '))}*`] });
  if (long) classes.push({ cls: 3, sql: fts(sub), params: [ftsPhrase(q)] });

  const { ranked, exhausted } = await rankByClass(
    classes.map((c) => ({ cls: c.cls, keys: async (want) => (await db.all<{ k: number }>(c.sql, [...c.params, want])).map((r) => r.k) })),
    offset + limit,
  );
  let total = ranked.length;
  if (!exhausted) {
    // Every match is a substring match (q of 3+ characters) or a prefix match, or a word match.
    // When the query is one word, word matches are among those or contain them: one count suffices.
    const wordQuery = ws.length > 0 ? { table: wordsTable, match: `${ftsPhrase(ws.join(' '))}*` } : null;
    const containing = { table: sub, match: ftsPhrase(long ? q : `\u0001${q}`) };
    const oneWord = ws.length === 1 && ws[0] === q;
    const sources = wordQuery ? (oneWord ? [long ? containing : wordQuery] : [containing, wordQuery]) : [containing];
    const parts = sources.map((c) => `SELECT k FROM (SELECT rowid AS k FROM ${c.table} WHERE ${c.table} MATCH ? LIMIT ${SEARCH_TOTAL_CAP})`);
    const params = sources.map((c) => c.match);
    const row = await db.get<{ n: number }>(`SELECT count(*) AS n FROM (${parts.join(' UNION ')})`, params);
    total = Math.min(SEARCH_TOTAL_CAP, Math.max(row?.n ?? 0, ranked.length));
  }
  const page = ranked.slice(offset, offset + limit);
  if (page.length === 0) return { items: [], total };
  const ids = page.map((p) => p.key % ID_MOD);
  const cols =
    kind === 'player'
      ? 'id, tag, name, trophies, club_tag, club_name, NULL AS member_count, NULL AS badge_id'
      : 'id, tag, name, trophies, NULL AS club_tag, NULL AS club_name, member_count, badge_id';
  const rows = await db.all<RawEntityRow>(`SELECT ${cols} FROM ${kind} WHERE id IN (${ids.map(() => '?').join(',')})`, ids);
  const byId = new Map(rows.map((r) => [r.id, r]));
  const items: SearchHit[] = [];
  page.forEach((p, i) => {
    const r = byId.get(ids[i]!);
    if (r) items.push({ ...toSearchRow(r), match: p.cls });
  });
  return { items, total };
}
