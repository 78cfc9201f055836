/**
 * History store backends for the contract suite: SQLite always; PostgreSQL when DATABASE_URL is
 * set (CI sets it). Each PostgreSQL store lives in a fresh schema with a random name, dropped by
 * `dropAll`, so suites running side by side on the shared server never see each other's rows.
 * A DATABASE_URL that is set but unusable makes the suites fail, never skip.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { HistoryStore } from '../../src/store/history-store.ts';

export type StoreOptions = { path: string } | { url: string; schema: string };

export interface BackendFixture {
  name: 'sqlite' | 'postgres';
  /** where a new, empty store lives */
  fresh(): StoreOptions;
  /** removes everything `fresh` made */
  dropAll(): Promise<void>;
}

export const DATABASE_URL = process.env.DATABASE_URL || undefined;

/** CI runs every backend: a server it lacks is a failure there, never a skip. */
export const IN_CI = process.env.CI === 'true' || process.env.CI === '1';

/** Whether suites that need PostgreSQL run: when DATABASE_URL is set, and always in CI (failing without it). */
export const RUN_POSTGRES = Boolean(DATABASE_URL) || IN_CI;
/** Suites on Redis run when REDIS_URL is set, and always in CI (where its absence fails them). */
export const RUN_REDIS = Boolean(process.env.REDIS_URL) || IN_CI;

function sqliteFixture(): BackendFixture {
  const dirs: string[] = [];
  return {
    name: 'sqlite',
    fresh() {
      const d = mkdtempSync(join(tmpdir(), 'starr-store-'));
      dirs.push(d);
      return { path: join(d, 'history.sqlite') };
    },
    async dropAll() {
      for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
    },
  };
}

function postgresFixture(url: string | undefined): BackendFixture {
  const schemas: string[] = [];
  return {
    name: 'postgres',
    fresh() {
      if (!url) throw new Error('CI=true runs the PostgreSQL backend too: set DATABASE_URL');
      const schema = `starr_test_${randomBytes(6).toString('hex')}`;
      schemas.push(schema);
      return { url, schema };
    },
    async dropAll() {
      if (schemas.length === 0) return;
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      try {
        for (const s of schemas.splice(0)) await c.query(`DROP SCHEMA IF EXISTS ${s} CASCADE`);
      } finally {
        await c.end();
      }
    },
  };
}

/** The backends to run the contract suite on: PostgreSQL when DATABASE_URL is set, and always in CI. */
export function backends(): BackendFixture[] {
  return [sqliteFixture(), ...(DATABASE_URL || IN_CI ? [postgresFixture(DATABASE_URL)] : [])];
}

export const openStore = (o: StoreOptions): Promise<HistoryStore> => HistoryStore.open(o);

/** Arguments for test/support/history-writer.ts. */
export const writerArgs = (o: StoreOptions): string[] => ('path' in o ? [o.path] : [o.url, o.schema]);

/** Ends every PostgreSQL connection of the store in `schema` (as a server restart would). */
export async function terminateConnections(url: string, schema: string): Promise<number> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const r = await c.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1', [`starr-stats ${schema}`]);
    return r.rowCount ?? 0;
  } finally {
    await c.end();
  }
}
