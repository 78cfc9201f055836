/**
 * What the history store needs from a SQL database, whatever the engine: statements with `?`
 * placeholders, and write transactions that run one at a time with a handle of their own. The
 * SQLite backend (sqlite.ts, the `sqlite3` driver) and the PostgreSQL backend (postgres.ts, `pg`)
 * implement it; the store's SQL is written once in the subset both engines understand, and the few
 * places where they differ (name search, table sizes, schema) live with each backend.
 */

export type SqlValue = number | string | bigint | Buffer | Uint8Array | null;
export type SqlParams = SqlValue[] | Record<string, SqlValue>;

export interface RunResult {
  changes: number;
}

export type Dialect = 'sqlite' | 'postgres';

/**
 * True for postgres:// and postgresql:// URLs. Here rather than in postgres.ts, so that choosing a
 * backend does not load `pg` (postgres.ts imports it) in a service that runs on SQLite.
 */
export const isPostgresUrl = (url: string | undefined): url is string => !!url && /^postgres(ql)?:\/\//i.test(url);

/** Raised when the store cannot be opened or a statement fails; carries the driver's code. */
export class StoreError extends Error {
  constructor(
    message: string,
    readonly code?: string,
  ) {
    super(message);
    this.name = 'StoreError';
  }
}

/**
 * The database could not be reached (connection refused or lost, server shutting down) even after
 * retries. Nothing was committed by the failed call; front doors answer "try again later" (503).
 */
export class StoreUnavailableError extends StoreError {
  constructor(message: string, cause?: unknown) {
    super(message, 'unavailable');
    this.name = 'StoreUnavailableError';
    if (cause !== undefined) this.cause = cause;
  }
}

export interface SqlDb {
  readonly dialect: Dialect;
  run(sql: string, params?: SqlParams): Promise<RunResult>;
  get<T = Record<string, unknown>>(sql: string, params?: SqlParams): Promise<T | undefined>;
  all<T = Record<string, unknown>>(sql: string, params?: SqlParams): Promise<T[]>;
  /** Runs one or more statements without parameters (schema). */
  exec(sql: string): Promise<void>;
}

export interface SqlPool extends SqlDb {
  /**
   * Runs `fn` in one transaction, after every transaction started before it; `fn` issues its
   * statements through `tx`. Either all of its writes land or none do.
   */
  transaction<T>(fn: (tx: SqlDb) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** Bound parameters per statement: SQLite's limit is 32766, PostgreSQL's 65535. */
const MAX_PARAMS: Record<Dialect, number> = { sqlite: 30_000, postgres: 60_000 };

/**
 * Multi-row INSERT helper: one statement per chunk of rows, so a batch of thousands of rows costs a
 * few driver round trips instead of one per row. `head` is everything before VALUES, `tail` what
 * follows the value list (ON CONFLICT …).
 */
export async function insertMany(db: SqlDb, head: string, columns: number, rows: SqlValue[][], tail = ''): Promise<number> {
  if (rows.length === 0) return 0;
  // Chunks are the largest power of two that fits, and the remainder is split into powers of two
  // too, so only a handful of distinct statements are ever prepared.
  const max = Math.max(1, Math.min(512, 2 ** Math.floor(Math.log2(MAX_PARAMS[db.dialect] / columns))));
  const tuple = `(${new Array(columns).fill('?').join(',')})`;
  let changes = 0;
  let i = 0;
  while (i < rows.length) {
    let size = max;
    while (size > rows.length - i) size >>= 1;
    const part = rows.slice(i, i + size);
    i += size;
    const sql = `${head} VALUES ${new Array(size).fill(tuple).join(',')} ${tail}`;
    const params: SqlValue[] = [];
    for (const r of part) {
      if (r.length !== columns) throw new StoreError(`insertMany: expected ${columns} values, got ${r.length}`);
      for (const v of r) params.push(v);
    }
    changes += (await db.run(sql, params)).changes;
  }
  return changes;
}

/** `?, ?, ?` for n values. */
export const marks = (n: number): string => new Array(n).fill('?').join(',');

/** The larger of two SQL expressions (SQLite's max(a, b) is PostgreSQL's GREATEST). */
export const greater = (a: string, b: string): string => `CASE WHEN ${a} >= ${b} THEN ${a} ELSE ${b} END`;
export const lesser = (a: string, b: string): string => `CASE WHEN ${a} <= ${b} THEN ${a} ELSE ${b} END`;

/** LIMIT for "no limit" in both engines (SQLite's -1 is an error in PostgreSQL). */
export const NO_LIMIT = Number.MAX_SAFE_INTEGER;
