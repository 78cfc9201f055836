/**
 * The SQLite backend of the history store: one file (`DATA_DIR/history.sqlite`), two connections
 * on it — a writer (every write goes through its transactions, one at a time) and a reader, so
 * reads only ever see whole batches and never wait behind a long write (WAL).
 */
import type { HistoryBackend } from './history-backend.ts';
import { migrate } from './history-schema.ts';
import { searchNames } from './history-search.ts';
import { Sqlite } from './sqlite.ts';

/**
 * The history writer's page cache, MB (the reader keeps Sqlite.open's default, 32). The writer keeps every
 * page it wrote until its cache is full, so with 32 MB it held the whole file (docs/benchmarks.md,
 * *Memory*); with 4 MB bench:history's polling and backfill ran no slower.
 */
export const WRITER_CACHE_MB = 4;

export async function openSqliteBackend(path: string): Promise<HistoryBackend> {
  // pages it does not keep are read again from the file, in the OS's cache
  const w = await Sqlite.open(path, { cacheMB: WRITER_CACHE_MB });
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
