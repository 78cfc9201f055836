/**
 * The PostgreSQL side of the SQL seam (sql.ts) over `pg`'s connection pool.
 *
 * Statements keep SQLite's `?` placeholders and are rewritten to `$1…$n` once per SQL text. Every
 * connection gets a statement timeout, so a stuck query fails instead of holding a pooled
 * connection forever. A connection that is refused or lost is retried with a short backoff; a
 * transaction that loses its connection was rolled back by the server, so it is run again whole
 * (the store's writes are idempotent: a batch recorded twice stores the same rows). When the server
 * stays away the caller gets a StoreUnavailableError, which front doors answer with a 503.
 */
import pg from 'pg';
import { StoreError, StoreUnavailableError, type SqlDb, type SqlParams, type SqlPool, type SqlValue } from './sql.ts';

export interface PostgresOptions {
  /** schema holding the tables (created when missing); the server's default search_path when unset */
  schema?: string;
  /** pooled connections (default 8) */
  max?: number;
  /** per-statement limit in ms (default 30000) */
  statementTimeoutMs?: number;
  /** attempts for a statement or transaction whose connection failed (default 4) */
  attempts?: number;
  /** first retry delay in ms, doubled at each attempt (default 250) */
  retryDelayMs?: number;
}

// 64-bit integers (count(*), sums, ids) and numerics as JS numbers: the store's values all stay
// below 2^53 (unix seconds, counters, ids).
const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === 20 || oid === 1700) return (v: string) => (v === null ? null : Number(v));
    return pg.types.getTypeParser(oid, format);
  },
};

/** Driver codes of a connection that failed or went away (SQLSTATE class 08, shutdown 57P0x). */
export function isConnectionError(err: unknown): boolean {
  const code = (err as { code?: string } | null)?.code;
  if (typeof code === 'string' && (/^08/.test(code) || /^57P0[1-3]$/.test(code))) return true;
  if (['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ENOTFOUND', 'EAI_AGAIN'].includes(code as string)) return true;
  const msg = (err as Error | null)?.message ?? '';
  return /Connection terminated|connection timeout|Client has encountered a connection error|not queryable/i.test(msg);
}

/** `?` → `$n`, skipping quoted strings and identifiers. */
export function numberPlaceholders(sql: string): string {
  let out = '';
  let n = 0;
  let quote: string | null = null;
  for (const ch of sql) {
    if (quote) {
      if (ch === quote) quote = null;
      out += ch;
    } else if (ch === "'" || ch === '"') {
      quote = ch;
      out += ch;
    } else if (ch === '?') out += `$${++n}`;
    else out += ch;
  }
  return out;
}

/** Serialises schema changes across processes sharing the database (any constant key will do). */
export const pgSchemaLock = async (tx: SqlDb): Promise<void> => {
  await tx.run('SELECT pg_advisory_xact_lock(?)', [0x5374_6172]);
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Codes with which the server rolls back a transaction that conflicted with another one
 * (deadlock_detected, serialization_failure): running it again is the documented remedy. Two
 * workers of a cluster recording battles of the same maps at once can meet this way.
 */
const CONFLICT_CODES = new Set(['40P01', '40001']);
const CONFLICT_ATTEMPTS = 5;

async function retryConflicts<T>(once: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await once();
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (!code || !CONFLICT_CODES.has(code) || attempt >= CONFLICT_ATTEMPTS) throw err;
      // a random pause, so the two transactions that met do not meet again in step
      await sleep(10 + Math.random() * 40 * attempt);
    }
  }
}

function wrap(err: unknown, sql?: string): StoreError {
  const e = err as Error & { code?: string };
  const where = sql ? ` (in: ${sql.slice(0, 120).replace(/\s+/g, ' ')})` : '';
  const out = isConnectionError(e)
    ? new StoreUnavailableError(`the PostgreSQL server cannot be reached: ${e.message}`, e)
    : new StoreError(`${e.message}${where}`, e.code);
  out.cause = e;
  return out;
}

type Queryable = pg.Pool | pg.PoolClient;

class Statements implements SqlDb {
  readonly dialect = 'postgres' as const;
  private readonly texts = new Map<string, string>();
  constructor(protected q: Queryable) {}

  protected text(sql: string): string {
    let t = this.texts.get(sql);
    if (t === undefined) {
      t = numberPlaceholders(sql);
      if (this.texts.size > 2000) this.texts.clear();
      this.texts.set(sql, t);
    }
    return t;
  }

  protected async query<T>(sql: string, params: SqlParams = []): Promise<pg.QueryResult<T & pg.QueryResultRow>> {
    if (!Array.isArray(params)) throw new StoreError('named parameters are not supported on PostgreSQL');
    try {
      return await this.q.query<T & pg.QueryResultRow>(this.text(sql), params as SqlValue[] as unknown[]);
    } catch (err) {
      throw wrap(err, sql);
    }
  }

  async run(sql: string, params?: SqlParams) {
    return { changes: (await this.query(sql, params)).rowCount ?? 0 };
  }
  async get<T = Record<string, unknown>>(sql: string, params?: SqlParams): Promise<T | undefined> {
    return (await this.query<T>(sql, params)).rows[0];
  }
  async all<T = Record<string, unknown>>(sql: string, params?: SqlParams): Promise<T[]> {
    return (await this.query<T>(sql, params)).rows;
  }
  async exec(sql: string): Promise<void> {
    try {
      await this.q.query(sql);
    } catch (err) {
      throw wrap(err, sql);
    }
  }
}

export class Postgres extends Statements implements SqlPool {
  private txTail: Promise<unknown> = Promise.resolve();
  private closed = false;

  private constructor(
    private readonly pool: pg.Pool,
    private readonly opts: Required<Pick<PostgresOptions, 'attempts' | 'retryDelayMs'>>,
    readonly schema: string | null,
  ) {
    super(pool);
  }

  static async open(url: string, opts: PostgresOptions = {}): Promise<Postgres> {
    if (opts.schema !== undefined && !/^[a-z_][a-z0-9_]*$/.test(opts.schema)) {
      throw new StoreError(`invalid PostgreSQL schema name: ${opts.schema}`);
    }
    const settings = [`-c statement_timeout=${opts.statementTimeoutMs ?? 30_000}`];
    // `public` stays on the path: pg_trgm's operator classes live there.
    if (opts.schema) settings.push(`-c search_path=${opts.schema},public`);
    const pool = new pg.Pool({
      connectionString: url,
      max: opts.max ?? 8,
      options: settings.join(' '),
      connectionTimeoutMillis: 5_000,
      // names the store's connections in pg_stat_activity (per schema, so one suite can find its own)
      application_name: `starr-stats${opts.schema ? ` ${opts.schema}` : ''}`,
      idleTimeoutMillis: 30_000,
      types,
    });
    // An idle pooled connection that dies (server restart) emits 'error' on the pool; the next
    // query simply gets a fresh connection, so this is not fatal.
    pool.on('error', () => {});
    const db = new Postgres(pool, { attempts: opts.attempts ?? 4, retryDelayMs: opts.retryDelayMs ?? 250 }, opts.schema ?? null);
    try {
      // exec retries a refused connection by itself
      if (opts.schema) {
        // IF NOT EXISTS does not make two sessions creating the schema at once safe (one fails on
        // the catalog's unique index): take the schema-change lock first.
        const schema = opts.schema;
        await db.transaction(async (tx) => {
          await pgSchemaLock(tx);
          await tx.exec(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
        });
      } else {
        await db.exec('SELECT 1');
      }
    } catch (e) {
      await pool.end().catch(() => {});
      throw e;
    }
    return db;
  }

  private async retrying<T>(fn: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      if (this.closed) throw new StoreError('the store is closed');
      try {
        return await fn();
      } catch (err) {
        if (!(err instanceof StoreUnavailableError) || attempt >= this.opts.attempts) throw err;
        await sleep(this.opts.retryDelayMs * 2 ** (attempt - 1));
      }
    }
  }

  override run(sql: string, params?: SqlParams) {
    return this.retrying(() => super.run(sql, params));
  }
  override get<T = Record<string, unknown>>(sql: string, params?: SqlParams) {
    return this.retrying(() => super.get<T>(sql, params));
  }
  override all<T = Record<string, unknown>>(sql: string, params?: SqlParams) {
    return this.retrying(() => super.all<T>(sql, params));
  }
  override exec(sql: string) {
    return this.retrying(() => super.exec(sql));
  }

  /**
   * One transaction on one pooled connection, after every transaction started before it (as on
   * SQLite, a batch never interleaves with another: the store's discovery caches rely on it).
   */
  transaction<T>(fn: (tx: SqlDb) => Promise<T>): Promise<T> {
    const once = async (): Promise<T> => {
      let client: pg.PoolClient;
      try {
        client = await this.pool.connect();
      } catch (err) {
        throw wrap(err);
      }
      const tx = new Statements(client);
      let broken: unknown = null;
      // A connection lost between two statements of the transaction is reported on the client
      // itself: without a listener that 'error' event would end the process. The next statement
      // fails with it anyway, and the batch is retried or surfaces as unavailable.
      const lost = (err: Error) => {
        broken ??= wrap(err);
      };
      client.on('error', lost);
      try {
        await tx.exec('BEGIN');
        const out = await fn(tx);
        await tx.exec('COMMIT');
        return out;
      } catch (err) {
        broken = err;
        if (!(err instanceof StoreUnavailableError)) await client.query('ROLLBACK').catch(() => {});
        throw err;
      } finally {
        client.off('error', lost);
        // A connection that failed is not given back to the pool for reuse.
        client.release(broken instanceof StoreUnavailableError ? (broken as Error) : undefined);
      }
    };
    const run = () => this.retrying(() => retryConflicts(once));
    const p = this.txTail.then(run, run);
    this.txTail = p.catch(() => {});
    return p;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    await this.txTail;
    this.closed = true;
    await this.pool.end();
  }
}
