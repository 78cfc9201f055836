/**
 * A small promise layer over the `sqlite3` driver (the one @keyv/sqlite uses): prepared statements
 * cached by SQL text, serialised write transactions, and the pragmas that make a crash lose at most
 * the transaction in flight (WAL, synchronous=NORMAL).
 *
 * One `Sqlite` is one connection. The history store opens two on the same file: a writer (every
 * write goes through `transaction`, one at a time) and a reader, so reads never see a half-written
 * poll and never wait behind a long write.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import sqlite3 from 'sqlite3';
import { insertMany as insertRows, StoreError, type RunResult, type SqlDb, type SqlParams, type SqlPool, type SqlValue } from './sql.ts';

export { StoreError } from './sql.ts';
export type { RunResult, SqlParams, SqlValue } from './sql.ts';

function wrap(err: Error & { code?: string }, sql?: string): StoreError {
  const e = new StoreError(sql ? `${err.message} (in: ${sql.slice(0, 120).replace(/\s+/g, ' ')})` : err.message, err.code);
  e.cause = err;
  return e;
}

export interface OpenOptions {
  readonly?: boolean;
  /** milliseconds to wait for another process's lock before failing (default 5000) */
  busyTimeoutMs?: number;
  /**
   * The connection's page cache, MB (default 32). Pages stay in it until it is full, outside V8's
   * heap (glibc's arenas): a connection that writes keeps every page it wrote, so its cache grows
   * to this size as the file does. A reader's is emptied whenever another connection has committed
   * since its last read (WAL), so between the poller's writes it holds little.
   */
  cacheMB?: number;
}

export class Sqlite implements SqlPool, SqlDb {
  readonly dialect = 'sqlite' as const;
  private readonly statements = new Map<string, sqlite3.Statement>();
  /** tail of the chain of write transactions: each waits for the previous one */
  private txTail: Promise<unknown> = Promise.resolve();
  private closed = false;

  private constructor(
    private readonly db: sqlite3.Database,
    readonly path: string,
  ) {}

  static async open(path: string, opts: OpenOptions = {}): Promise<Sqlite> {
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    const mode = opts.readonly ? sqlite3.OPEN_READONLY : sqlite3.OPEN_READWRITE | sqlite3.OPEN_CREATE;
    const db = await new Promise<sqlite3.Database>((resolve, reject) => {
      const d = new sqlite3.Database(path, mode, (err) => (err ? reject(wrap(err)) : resolve(d)));
    });
    const s = new Sqlite(db, path);
    db.configure('busyTimeout', opts.busyTimeoutMs ?? 5000);
    if (!opts.readonly) {
      await s.exec('PRAGMA journal_mode=WAL');
      // NORMAL in WAL mode: a killed process never loses a committed transaction; only a power cut
      // can drop the last few, and the file is never corrupted either way.
      await s.exec('PRAGMA synchronous=NORMAL');
    }
    await s.exec(`PRAGMA cache_size=-${Math.round((opts.cacheMB ?? 32) * 1000)}`);
    await s.exec('PRAGMA temp_store=MEMORY');
    return s;
  }

  private statement(sql: string): sqlite3.Statement {
    let st = this.statements.get(sql);
    if (!st) {
      st = this.db.prepare(sql);
      // Preparation errors surface on first use; keep the handler so they are not thrown as events.
      st.on('error', () => {});
      this.statements.set(sql, st);
    }
    return st;
  }

  run(sql: string, params: SqlParams = []): Promise<RunResult> {
    return new Promise((resolve, reject) => {
      this.statement(sql).run(params, function (this: sqlite3.RunResult, err: Error | null) {
        if (err) reject(wrap(err, sql));
        else resolve({ changes: this.changes });
      });
    });
  }

  /**
   * The first row. Implemented with `all`: the driver's `Statement#get` leaves the statement open
   * (holding a read snapshot) until it is reset, which would pin old WAL frames and block DDL.
   */
  async get<T = Record<string, unknown>>(sql: string, params: SqlParams = []): Promise<T | undefined> {
    return (await this.all<T>(sql, params))[0];
  }

  all<T = Record<string, unknown>>(sql: string, params: SqlParams = []): Promise<T[]> {
    return new Promise((resolve, reject) => {
      this.statement(sql).all(params, (err: Error | null, rows: T[]) => (err ? reject(wrap(err, sql)) : resolve(rows)));
    });
  }

  /** Runs one or more statements without parameters (schema, pragmas). */
  exec(sql: string): Promise<void> {
    return new Promise((resolve, reject) => {
      this.db.exec(sql, (err) => (err ? reject(wrap(err, sql)) : resolve()));
    });
  }

  /**
   * Runs `fn` inside BEGIN IMMEDIATE … COMMIT, after every transaction started before it. Either all
   * of its writes land or none do; on any error the transaction rolls back and the error propagates.
   */
  transaction<T>(fn: (tx: Sqlite) => Promise<T>): Promise<T> {
    const run = async (): Promise<T> => {
      if (this.closed) throw new StoreError('the store is closed');
      await this.exec('BEGIN IMMEDIATE');
      try {
        const out = await fn(this);
        await this.exec('COMMIT');
        return out;
      } catch (err) {
        await this.exec('ROLLBACK').catch(() => {});
        throw err;
      }
    };
    const p = this.txTail.then(run, run);
    this.txTail = p.catch(() => {});
    return p;
  }

  /** Waits for queued transactions, then closes the connection. */
  async close(): Promise<void> {
    if (this.closed) return;
    await this.txTail;
    this.closed = true;
    await Promise.all(
      [...this.statements.values()].map((st) => new Promise<void>((resolve) => st.finalize(() => resolve()))),
    );
    this.statements.clear();
    await new Promise<void>((resolve, reject) => this.db.close((err) => (err ? reject(wrap(err)) : resolve())));
  }
}

/** Multi-row INSERT (see sql.ts); kept here for callers that only know SQLite. */
export function insertMany(db: Sqlite, head: string, columns: number, rows: SqlValue[][], tail = ''): Promise<number> {
  return insertRows(db, head, columns, rows, tail);
}
