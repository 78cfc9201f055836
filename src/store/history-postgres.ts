/**
 * The PostgreSQL backend of the history store (DATABASE_URL=postgres://…): a pool of connections
 * (postgres.ts), the schema of history-schema-pg.ts, and name search over pg_trgm indexes.
 *
 * Search gives the ranking classes of the SQLite backend through the same rule (rankByClass in
 * history-search.ts): exact and prefix on the B-tree of `folded` ("C" collation, so LIKE 'q%' is a
 * range scan), word on the trigram index of `words` ('ⓦdarkⓦknight': a word match is
 * LIKE '%ⓦdarkⓦkn%'), substring on the trigram index of `sub` (3 characters or more, as on SQLite,
 * where shorter queries have no trigram to look up). history-schema-pg.ts says why those columns
 * look as they do.
 */
import type { HistoryBackend } from './history-backend.ts';
import { migrate } from './history-schema.ts';
import { ensureTrigram, PG_MIGRATIONS, substringColumn, wordsColumn, wordsPattern } from './history-schema-pg.ts';
import { rankByClass, SEARCH_TOTAL_CAP, toSearchRow, type RawEntityRow, type SearchHit, type SearchPage } from './history-search.ts';
import type { EntityKind } from './history-snapshots.ts';
import { Postgres, pgSchemaLock, type PostgresOptions } from './postgres.ts';
import { foldName, SUBSTRING_MIN_CHARS, words, type MatchClass } from './search-fold.ts';
import { marks } from './sql.ts';

const likeEscape = (s: string): string => s.replace(/[\\%_]/g, (c) => `\\${c}`);

/** Trophies as the SQLite rank key orders them: none counts as 0, clamped to 0 … 2^25 - 1. */
const RANK_KEY = 'LEAST(GREATEST(COALESCE(trophies, 0), 0), 33554431)';
const RANK = `${RANK_KEY} DESC, id`;

const COLUMNS: Record<EntityKind, string> = {
  player: 'id, tag, name, trophies, club_tag, club_name, NULL::integer AS member_count, NULL::integer AS badge_id',
  club: 'id, tag, name, trophies, NULL::text AS club_tag, NULL::text AS club_name, member_count, badge_id',
};

/** One ranking class: its condition in SQL. */
interface ClassRule {
  cls: MatchClass;
  where: string;
  params: string[];
}

export async function searchPostgres(db: Postgres, kind: EntityKind, name: string, limit: number, offset: number): Promise<SearchPage> {
  const q = foldName(name);
  if (q === '') return { items: [], total: 0 };
  const ws = words(q);
  const long = [...q].length >= SUBSTRING_MIN_CHARS;
  const wordText = wordsPattern(ws);
  const rules: ClassRule[] = [
    { cls: 0, where: 'folded = ?', params: [q] },
    { cls: 1, where: 'folded LIKE ? AND folded <> ?', params: [`${likeEscape(q)}%`, q] },
  ];
  if (ws.length > 0) rules.push({ cls: 2, where: 'words LIKE ?', params: [`%${likeEscape(wordText)}%`] });
  if (long) {
    rules.push({
      cls: 3,
      // `sub` finds the candidates through its trigram index, `folded` decides. strpos, not a
      // second LIKE: the planner multiplies the selectivities of two LIKEs as if independent,
      // took `%ona%` (7,169 matches) for a rare pattern and sorted all of them (6,300 buffers)
      // instead of reading the ranking index until 50 were found (616 buffers).
      where: 'sub LIKE ? AND strpos(folded, ?) <> 0',
      params: [`%${likeEscape(substringColumn(q))}%`, q],
    });
  }
  // Every match is found by the last rule (a substring contains the prefix and exact matches) or
  // by the word rule, or (shorter queries) by the prefix or word rule.
  const any = long ? rules.filter((r) => r.cls >= 2) : rules.filter((r) => r.cls >= 1);
  // All matches, up to the total's cap, through the indexes: when there are fewer, they are every
  // match, and the page is their first rows by class then rank, without another query. A rare
  // pattern costs one read of its few rows, where a query per class in ranking order could walk
  // much of the table to fill a page (EXPLAIN ANALYZE over 1,000,000 names: `изр`, 180 matches,
  // 74 ms through the ranking index). Only the page's rows and the count leave the server.
  const need = offset + limit;
  const best = `CASE ${rules.map((r) => `WHEN ${r.where} THEN ${r.cls}`).join(' ')} END`;
  const candidates = await db.all<{ id: number; cls: MatchClass; n: number }>(
    `WITH m AS (SELECT id, ${RANK_KEY} AS r, ${best} AS cls FROM ${kind} WHERE ${any.map((r) => `(${r.where})`).join(' OR ')} LIMIT ${SEARCH_TOTAL_CAP})
     SELECT id, cls, (SELECT count(*) FROM m) AS n FROM m ORDER BY cls, r DESC, id LIMIT ?`,
    [...rules.flatMap((r) => r.params), ...any.flatMap((r) => r.params), need],
  );
  const count = candidates[0]?.n ?? 0;
  const all = count < SEARCH_TOTAL_CAP;
  // Past the cap the pattern is common: each class is read best-first from the table, which
  // finds a page of matches early in ranking order (the ranking index) or in a short sorted range.
  // Below it, each class's list is its rows of the page (a row counted in its best class, as
  // rankByClass would count it).
  const { ranked } = await rankByClass(
    rules.map((rule) => ({
      cls: rule.cls,
      keys: async (want) =>
        all
          ? candidates.filter((c) => c.cls === rule.cls).slice(0, want).map((c) => c.id)
          : (await db.all<{ id: number }>(`SELECT id FROM ${kind} WHERE ${rule.where} ORDER BY ${RANK} LIMIT ?`, [...rule.params, want])).map((r) => r.id),
    })),
    need,
  );
  const total = all ? count : SEARCH_TOTAL_CAP;
  const page = ranked.slice(offset, offset + limit);
  if (page.length === 0) return { items: [], total };
  const rows = await db.all<RawEntityRow>(`SELECT ${COLUMNS[kind]} FROM ${kind} WHERE id IN (${marks(page.length)})`, page.map((p) => p.key));
  const byId = new Map(rows.map((r) => [r.id, r]));
  const items: SearchHit[] = [];
  for (const p of page) {
    const r = byId.get(p.key);
    if (r) items.push({ ...toSearchRow(r), match: p.cls });
  }
  return { items, total };
}

/** host:port/database (schema), without credentials. */
function describe(url: string, schema: string | undefined): string {
  try {
    const u = new URL(url);
    return `postgres://${u.host}${u.pathname}${schema ? ` (schema ${schema})` : ''}`;
  } catch {
    return 'postgres (unparsable URL)';
  }
}

export async function openPostgresBackend(url: string, opts: PostgresOptions = {}): Promise<HistoryBackend> {
  const db = await Postgres.open(url, opts);
  try {
    await ensureTrigram(db);
    await migrate(db, PG_MIGRATIONS, undefined, pgSchemaLock);
  } catch (e) {
    await db.close().catch(() => {});
    throw e;
  }
  return {
    dialect: 'postgres',
    location: describe(url, opts.schema),
    w: db,
    r: db,
    searchColumns: [
      { name: 'words', value: wordsColumn },
      { name: 'sub', value: substringColumn },
    ],
    search: (kind, name, limit, offset) => searchPostgres(db, kind, name, limit, offset),
    async tableBytes() {
      const rows = await db.all<{ name: string; bytes: number }>(
        // each table with its indexes and TOAST, so a table's figure is its whole cost
        `SELECT c.relname AS name, pg_total_relation_size(c.oid) AS bytes
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = current_schema() AND c.relkind = 'r'`,
      );
      return Object.fromEntries(rows.map((x) => [x.name, x.bytes]));
    },
    async afterCopy(tables) {
      for (const t of tables) {
        await db.run(`SELECT setval(pg_get_serial_sequence('${t}', 'id'), GREATEST((SELECT max(id) FROM ${t}), 1))`);
      }
    },
    close: () => db.close(),
  };
}
