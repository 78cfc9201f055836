/**
 * The seam between the history store's rules (history-store.ts: what a snapshot stores, battle
 * deduplication, change detection, retention, tracking) and a database engine. A backend brings
 * connections that speak the common SQL (sql.ts), its own schema and migrations, and the parts no
 * common SQL can express well: name search over its own indexes and the size of its tables.
 *
 *   SQLite      history-sqlite.ts    one file under DATA_DIR, FTS5 trigram and word indexes
 *   PostgreSQL  history-postgres.ts  DATABASE_URL, pg_trgm GIN indexes
 */
import type { EntityKind } from './history-snapshots.ts';
import type { SearchPage } from './history-search.ts';
import type { SqlDb, SqlPool, SqlValue } from './sql.ts';

export interface HistoryBackend {
  readonly dialect: 'sqlite' | 'postgres';
  /** a file path, or the PostgreSQL server, database and schema (never a password), for logs */
  readonly location: string;
  /** writes: every one in a transaction */
  readonly w: SqlPool;
  /** reads: committed data only */
  readonly r: SqlDb;
  /** columns the backend's search index needs beside `folded`, filled from the folded name */
  readonly searchColumns: readonly { name: string; value(folded: string): SqlValue }[];
  /**
   * Name search: matches of `name` (folded, search-fold.ts) ranked by class — exact, prefix, word,
   * substring — then by trophies (most first, none counting as 0) and id; `total` capped at
   * SEARCH_TOTAL_CAP.
   */
  search(kind: EntityKind, name: string, limit: number, offset: number): Promise<SearchPage>;
  /** bytes used by each table and index (PostgreSQL counts a table's indexes in the table's figure) */
  tableBytes(): Promise<Record<string, number>>;
  /** after rows with explicit ids were copied in: moves id generators past them */
  afterCopy?(identityTables: string[]): Promise<void>;
  close(): Promise<void>;
}
