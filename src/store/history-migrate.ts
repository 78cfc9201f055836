/**
 * Copies a SQLite history store into a PostgreSQL one (`starr migrate --to postgres://…`).
 *
 * Every table is copied in primary-key order, a chunk per transaction; each chunk records how far
 * it got (meta `migrate.<table>` in the target) in the same transaction, so an interrupted run
 * continues after the last committed chunk, and a finished one copies nothing again. Rows go in
 * with ON CONFLICT DO NOTHING: what the target already holds is never overwritten. Ids are copied
 * as they are (everything refers to players and clubs by id), and the target's id sequences are
 * moved past them afterwards. At the end every table is counted on both sides.
 */
import type { HistoryStore } from './history-store.ts';
import { StoreError, type SqlValue } from './sql.ts';

/** Tables of the history store with their primary keys (the copy's order). */
export const HISTORY_TABLES: readonly { table: string; key: readonly string[]; identity?: boolean }[] = [
  { table: 'player', key: ['id'], identity: true },
  { table: 'club', key: ['id'], identity: true },
  { table: 'label', key: ['id'], identity: true },
  { table: 'player_state', key: ['player_id'] },
  { table: 'player_snap', key: ['player_id', 't'] },
  { table: 'club_state', key: ['club_id'] },
  { table: 'club_snap', key: ['club_id', 't'] },
  { table: 'club_event', key: ['club_id', 't', 'kind', 'subject'] },
  { table: 'battle', key: ['t', 'key'] },
  { table: 'player_battle', key: ['player_id', 't'] },
  { table: 'map', key: ['id'] },
  { table: 'map_brawler_day', key: ['map_id', 'mode', 'brawler_id', 'day'] },
  { table: 'map_day', key: ['map_id', 'mode', 'day'] },
  { table: 'rotation', key: ['slot_id', 'start'] },
  { table: 'player_build', key: ['brawler_id', 'player_id'] },
  { table: 'tracked', key: ['kind', 'id'] },
  { table: 'pin', key: ['kind', 'id', 'reason'] },
  { table: 'meta', key: ['key'] },
  { table: 'game_name', key: ['id'] },
];

/** SQLite tables that are indexes or bookkeeping, not data: rebuilt or versioned by each backend. */
const NOT_DATA = /^(schema_version|sqlite_.*|(player|club)_(sub|words)(_.*)?)$/;

const PROGRESS = (table: string) => `migrate.${table}`;

export interface MigrateProgress {
  table: string;
  /** rows copied (or found already copied) so far, over all tables */
  done: number;
  total: number;
}

export interface TableCount {
  table: string;
  source: number;
  target: number;
}

const q = (c: string) => `"${c}"`;

export async function migrateHistory(opts: {
  from: HistoryStore;
  to: HistoryStore;
  chunk?: number;
  onProgress?: (p: MigrateProgress) => void;
  signal?: AbortSignal;
}): Promise<{ counts: TableCount[]; copied: number }> {
  const { from, to } = opts;
  if (from.backend.dialect !== 'sqlite' || to.backend.dialect !== 'postgres') {
    throw new StoreError('migrate copies a SQLite history store into a PostgreSQL one');
  }
  const chunk = opts.chunk ?? 2000;
  // Never leave data behind: a table this version does not know stops the copy before it starts.
  const present = (await from.r.all<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table'")).map((r) => r.name);
  const unknown = present.filter((n) => !NOT_DATA.test(n) && !HISTORY_TABLES.some((t) => t.table === n));
  if (unknown.length > 0) throw new StoreError(`the SQLite history store has tables this version cannot copy: ${unknown.join(', ')}`);

  const sourceCount = async (table: string) => (await from.r.get<{ n: number }>(`SELECT count(*) AS n FROM ${table}`))!.n;
  const tables = HISTORY_TABLES.filter((t) => present.includes(t.table));
  const totals = new Map<string, number>();
  for (const t of tables) totals.set(t.table, await sourceCount(t.table));
  const total = [...totals.values()].reduce((a, b) => a + b, 0);
  let done = 0;
  let copied = 0;
  const extra = to.backend.searchColumns;

  for (const { table, key } of tables) {
    const columns = (await from.r.all<{ name: string }>(`PRAGMA table_info(${table})`)).map((c) => c.name);
    const searchable = table === 'player' || table === 'club';
    const targetColumns = [...columns, ...(searchable ? extra.map((c) => c.name) : [])];
    const saved = await to.getMeta<SqlValue[]>(PROGRESS(table));
    let after: SqlValue[] | null = saved ?? null;
    if (after) {
      const n = (await from.r.get<{ n: number }>(`SELECT count(*) AS n FROM ${table} WHERE (${key.join(', ')}) <= (${key.map(() => '?').join(', ')})`, after))!.n;
      done += n;
      opts.onProgress?.({ table, done, total });
    }
    const keyList = key.map(q).join(', ');
    for (;;) {
      if (opts.signal?.aborted) throw new StoreError('migration interrupted; run it again to continue');
      const rows = await from.r.all<Record<string, SqlValue>>(
        `SELECT ${columns.map(q).join(', ')} FROM ${table}${after ? ` WHERE (${keyList}) > (${key.map(() => '?').join(', ')})` : ''}
         ORDER BY ${keyList} LIMIT ${chunk}`,
        after ?? [],
      );
      if (rows.length === 0) break;
      const values = rows.map((r) => {
        const v = columns.map((c) => r[c] ?? null);
        if (searchable) for (const c of extra) v.push(c.value(String(r.folded ?? '')));
        return v;
      });
      const last = rows[rows.length - 1]!;
      after = key.map((k) => last[k] ?? null);
      const mark = after;
      copied += await to.copyRows(table, targetColumns, values, PROGRESS(table), mark);
      done += rows.length;
      opts.onProgress?.({ table, done, total });
      if (rows.length < chunk) break;
    }
  }
  await to.afterCopy(HISTORY_TABLES.filter((t) => t.identity).map((t) => t.table));

  const counts: TableCount[] = [];
  for (const { table } of tables) {
    const target = (await to.r.get<{ n: number }>(`SELECT count(*) AS n FROM ${table}`))!.n;
    // the target's own progress notes are not source rows
    const notes = table === 'meta' ? (await to.r.get<{ n: number }>("SELECT count(*) AS n FROM meta WHERE key LIKE 'migrate.%'"))!.n : 0;
    counts.push({ table, source: totals.get(table)!, target: target - notes });
  }
  return { counts, copied };
}
