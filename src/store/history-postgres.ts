/**
 * The PostgreSQL backend of the history store (DATABASE_URL=postgres://…): a pool of connections
 * (postgres.ts), the schema of history-schema-pg.ts, and name search over pg_trgm indexes.
 *
 * Search gives the ranking classes of the SQLite backend (search-fold.ts matchClass): each class is
 * one query over an index, best first — exact and prefix on the B-tree of `folded` ("C" collation,
 * so LIKE 'q%' is a range scan), word on the trigram index of `words` (' dark knight': a word match
 * is LIKE '% dark kn%'), substring on the trigram index of `folded` (3 characters or more, as on
 * SQLite, where shorter queries have no trigram to look up).
 */
import type { HistoryBackend } from './history-backend.ts';
import { migrate } from './history-schema.ts';
import { ensureTrigram, pgSchemaLock, PG_MIGRATIONS } from './history-schema-pg.ts';
import { rankByClass, SEARCH_TOTAL_CAP, toSearchRow, type RawEntityRow, type SearchHit, type SearchPage } from './history-search.ts';
import type { EntityKind } from './history-snapshots.ts';
import { Postgres, type PostgresOptions } from './postgres.ts';
import { foldName, SUBSTRING_MIN_CHARS, words, type MatchClass } from './search-fold.ts';
import { marks } from './sql.ts';

/** The `words` column: each word of the folded name after a space. */
export const wordsColumn = (folded: string): string => words(folded).map((w) => ` ${w}`).join('');

const likeEscape = (s: string): string => s.replace(/[\\%_]/g, (c) => `\\${c}`);

/** Trophies as the SQLite rank key orders them: none counts as 0, clamped to 0 … 2^25 - 1. */
const RANK = 'LEAST(GREATEST(COALESCE(trophies, 0), 0), 33554431) DESC, id';

const COLUMNS: Record<EntityKind, string> = {
  player: 'id, tag, name, trophies, club_tag, club_name, NULL::integer AS member_count, NULL::integer AS badge_id',
  club: 'id, tag, name, trophies, NULL::text AS club_tag, NULL::text AS club_name, member_count, badge_id',
};

export async function searchPostgres(db: Postgres, kind: EntityKind, name: string, limit: number, offset: number): Promise<SearchPage> {
  const q = foldName(name);
  if (q === '') return { items: [], total: 0 };
  const ws = words(q);
  const long = [...q].length >= SUBSTRING_MIN_CHARS;
  const prefix = `${likeEscape(q)}%`;
  const word = ws.length > 0 ? `% ${likeEscape(ws.join(' '))}%` : null;
  const substring = long ? `%${likeEscape(q)}%` : null;
  const classes: { cls: MatchClass; where: string; params: string[] }[] = [
    { cls: 0, where: 'folded = ?', params: [q] },
    { cls: 1, where: 'folded LIKE ? AND folded <> ?', params: [prefix, q] },
  ];
  if (word) classes.push({ cls: 2, where: 'words LIKE ?', params: [word] });
  if (substring) classes.push({ cls: 3, where: 'folded LIKE ?', params: [substring] });

  const { ranked, exhausted } = await rankByClass(
    classes.map((c) => ({
      cls: c.cls,
      keys: async (want) => (await db.all<{ id: number }>(`SELECT id FROM ${kind} WHERE ${c.where} ORDER BY ${RANK} LIMIT ?`, [...c.params, want])).map((r) => r.id),
    })),
    offset + limit,
  );
  let total = ranked.length;
  if (!exhausted) {
    // Every match starts with q, or has q's words, or (3+ characters) contains q.
    const any = ['folded LIKE ?', ...(word ? ['words LIKE ?'] : []), ...(substring ? ['folded LIKE ?'] : [])];
    const params = [prefix, ...(word ? [word] : []), ...(substring ? [substring] : [])];
    const row = await db.get<{ n: number }>(
      `SELECT count(*) AS n FROM (SELECT 1 FROM ${kind} WHERE ${any.join(' OR ')} LIMIT ${SEARCH_TOTAL_CAP}) m`,
      params,
    );
    total = Math.min(SEARCH_TOTAL_CAP, Math.max(row?.n ?? 0, ranked.length));
  }
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
    searchColumns: [{ name: 'words', value: wordsColumn }],
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
