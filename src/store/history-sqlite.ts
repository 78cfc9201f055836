/**
 * The SQLite backend of the history store: one file (`DATA_DIR/history.sqlite`), two connections
 * on it — a writer (every write goes through its transactions, one at a time) and a reader, so
 * reads only ever see whole batches and never wait behind a long write (WAL).
 */
import type { HistoryBackend } from './history-backend.ts';
import { migrate } from './history-schema.ts';
import { searchNames } from './history-search.ts';
import { Sqlite } from './sqlite.ts';

export async function openSqliteBackend(path: string): Promise<HistoryBackend> {
  const w = await Sqlite.open(path);
  let r: Sqlite;
  try {
    await migrate(w);
    r = await Sqlite.open(path);
  } catch (e) {
    await w.close().catch(() => {});
    throw e;
  }
  return {
    dialect: 'sqlite',
    location: path,
    w,
    r,
    searchColumns: [],
    search: (kind, name, limit, offset) => searchNames(r, kind, name, limit, offset),
    async tableBytes() {
      const rows = await r.all<{ name: string; bytes: number }>('SELECT name, sum(pgsize) AS bytes FROM dbstat GROUP BY name');
      return Object.fromEntries(rows.map((x) => [x.name, x.bytes]));
    },
    async close() {
      await w.close();
      await r.close();
    },
  };
}
