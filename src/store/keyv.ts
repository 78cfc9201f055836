/**
 * Key-value namespaces over two backends, never mixed:
 *
 * - durable — what users saved (API accounts and keys, guild settings with their per-server keys
 *   and leaderboards, club feeds, linked accounts): a SQLite file under DATA_DIR by default, PostgreSQL when
 *   DATABASE_URL is set. Never Redis: a Redis without persistence (the common default) loses
 *   everything on restart.
 * - loss-tolerant — what can be fetched or counted again (the response cache, rate-limit counters,
 *   component state, game data files, health pings): CACHE_URL, a SQLite file by default or Redis.
 *
 * `DURABLE_NAMESPACES` is the one place that says which is which; `namespace(name)` routes by it.
 * Every namespace is its own Keyv with its own adapter, because keyv adapters carry the namespace
 * they serve.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Keyv from 'keyv';
import type KeyvPostgres from '@keyv/postgres';
import KeyvSqlite from '@keyv/sqlite';
import type pg from 'pg';
import { isPostgresUrl } from './sql.ts';

export type { Keyv };

/** Namespaces holding what users saved: on the durable backend only. */
export const DURABLE_NAMESPACES = [
  /** API accounts (email, password hash, plan) and their keys, as hashes */
  'apikeys',
  /** per-server settings: the sealed API key, defaults, leaderboards */
  'guilds',
  /** club feeds of each server and how far each has posted */
  'feeds',
  /** a member's linked player tag */
  'links',
  /** bookkeeping of the store itself (which earlier copies were imported) */
  'starr',
] as const;

export type DurableNamespace = (typeof DURABLE_NAMESPACES)[number];

export type KeyvNamespace = DurableNamespace | 'cache' | 'ratelimit' | 'components' | 'gamedata' | 'health' | string;

export function isDurable(name: string): name is DurableNamespace {
  return (DURABLE_NAMESPACES as readonly string[]).includes(name);
}

export type CacheKind = 'sqlite' | 'redis';
export type DurableKind = 'sqlite' | 'postgres';

export interface KeyvStores {
  /** the loss-tolerant backend (the rate limiter picks its Redis script by it) */
  readonly kind: CacheKind;
  /** where the loss-tolerant namespaces live, with any password removed (for logs and /healthz) */
  readonly location: string;
  /** the durable backend ('redis' only when reading an earlier installation, see openKeyvStores) */
  readonly durable: { readonly kind: DurableKind | 'redis'; readonly location: string };
  /** the namespace on the backend its kind belongs to (DURABLE_NAMESPACES) */
  namespace(name: KeyvNamespace): Keyv;
  /** true when both backends answer (or the one named) */
  ping(part?: 'cache' | 'durable'): Promise<boolean>;
  close(): Promise<void>;
}

export interface KeyvStoresOptions {
  /** CACHE_URL: sqlite://<file> or redis://… */
  cache: string;
  /** sqlite://<file> or postgres://… (DATABASE_URL) */
  durable: string;
  /** PostgreSQL schema of the durable table (DATABASE_SCHEMA; default public) */
  durableSchema?: string;
  /**
   * prefix of every namespace on the cache's backend, durable ones read from an earlier
   * installation's Redis included (tests give each suite its own on a shared Redis)
   */
  cachePrefix?: string;
  /** an earlier installation's stores, opened to copy from: durable namespaces may be on Redis */
  earlier?: boolean;
}

function sqlitePath(url: string): string {
  return decodeURIComponent(url.replace(/^sqlite:\/\//, ''));
}

export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return url;
  }
}

const isRedis = (url: string) => /^rediss?:/.test(url);

function sqliteAdapter(url: string): KeyvSqlite {
  const store = new KeyvSqlite({ uri: `sqlite://${sqlitePath(url)}`, table: 'keyv', busyTimeout: 5000 });
  // Write-ahead log without an fsync per write: a set costs ~0.4 ms instead of ~18 ms, and readers
  // don't wait for writers. A crash can lose the last writes, never corrupt the file.
  void store.query('PRAGMA journal_mode=WAL').then(() => store.query('PRAGMA synchronous=NORMAL')).catch(() => {});
  return store;
}

/**
 * @keyv/postgres keeps one module-wide pool per URI and ends it on any adapter's disconnect, which
 * would cut every other namespace (and a second core in the same process). Each KeyvStores owns
 * its pool instead, and ends it once on close.
 */
function postgresAdapter(Base: typeof KeyvPostgres, pool: pg.Pool, schema: string): KeyvPostgres {
  class PooledKeyvPostgres extends Base {
    override async connect() {
      return async (sql: string, values?: unknown[]) => (await pool.query(sql, values)).rows;
    }
    override async disconnect() {}
  }
  // Keys are `namespace:key`; an account's email alone may be 254 characters.
  return new PooledKeyvPostgres({ schema, table: 'keyv', keySize: 1024 });
}

/**
 * The stores of a running service: `{ cache, durable }`. A single URL puts every namespace on one
 * backend, as versions before the split did: for tests, tools, and reading an earlier
 * installation (`copyDurable`), where durable namespaces may be read from Redis.
 *
 * The Redis and PostgreSQL adapters are loaded only when a URL names them: @keyv/redis (the
 * `redis` client, ~420 modules) and pg held ~4 MB of a SQLite service's live heap for nothing
 * (docs/benchmarks.md, Memory).
 */
export async function openKeyvStores(opts: KeyvStoresOptions | string): Promise<KeyvStores> {
  const o: KeyvStoresOptions = typeof opts === 'string' ? { cache: opts, durable: opts } : opts;
  if (typeof opts !== 'string' && !o.earlier && isRedis(o.durable)) {
    throw new Error('Durable data (API keys, settings, links, boards) is never kept in Redis: give a sqlite:// or postgres:// URL');
  }
  if (!isRedis(o.durable) && !o.durable.startsWith('sqlite:') && !isPostgresUrl(o.durable)) {
    throw new Error(`Unsupported store URL ${redactUrl(o.durable)}: expected sqlite://<file> or postgres://…`);
  }
  const cacheKind: CacheKind = isRedis(o.cache) ? 'redis' : 'sqlite';
  const durableKind: DurableKind | 'redis' = isRedis(o.durable) ? 'redis' : isPostgresUrl(o.durable) ? 'postgres' : 'sqlite';
  const prefix = o.cachePrefix ?? '';
  if (cacheKind === 'sqlite') mkdirSync(dirname(sqlitePath(o.cache)), { recursive: true });
  if (durableKind === 'sqlite') mkdirSync(dirname(sqlitePath(o.durable)), { recursive: true });
  const KeyvRedis = cacheKind === 'redis' || durableKind === 'redis' ? (await import('@keyv/redis')).default : null;
  const postgres = durableKind === 'postgres' ? { pg: (await import('pg')).default, KeyvPostgres: (await import('@keyv/postgres')).default } : null;
  const pool = postgres ? new postgres.pg.Pool({ connectionString: o.durable, max: 4 }) : null;
  pool?.on('error', () => {
    // An idle client's error (the server restarted) only drops that client; queries surface theirs.
  });
  const schema = o.durableSchema ?? 'public';

  const opened = new Map<string, Keyv>();
  const make = (name: string): Keyv => {
    if (isDurable(name)) {
      if (KeyvRedis && durableKind === 'redis') return new Keyv({ store: new KeyvRedis(o.durable), namespace: `${prefix}${name}`, useKeyPrefix: false });
      const store = postgres ? postgresAdapter(postgres.KeyvPostgres, pool!, schema) : sqliteAdapter(o.durable);
      // What users saved must never read as absent when the database is away: a read that fails
      // throws (keyv would answer undefined), so a key is not "invalid" and a change never writes
      // over a record it could not read.
      return new Keyv({ store, namespace: name, throwOnErrors: true });
    }
    const ns = `${prefix}${name}`;
    if (KeyvRedis && cacheKind === 'redis') return new Keyv({ store: new KeyvRedis(o.cache), namespace: ns, useKeyPrefix: false });
    return new Keyv({ store: sqliteAdapter(o.cache), namespace: ns });
  };

  const stores: KeyvStores = {
    kind: cacheKind,
    location: cacheKind === 'sqlite' ? sqlitePath(o.cache) : redactUrl(o.cache),
    durable: {
      kind: durableKind,
      location: durableKind === 'sqlite' ? sqlitePath(o.durable) : redactUrl(o.durable),
    },
    namespace(name) {
      let kv = opened.get(name);
      if (!kv) {
        kv = make(name);
        kv.on('error', () => {
          // Errors surface to the caller of get/set; the event only stops Node's unhandled-error crash.
        });
        opened.set(name, kv);
      }
      return kv;
    },
    async ping(part) {
      const one = async (kv: Keyv) => {
        try {
          await kv.set('ping', Date.now(), 10_000);
          return (await kv.get('ping')) !== undefined;
        } catch {
          return false;
        }
      };
      const parts = part === 'cache' ? ['health'] : part === 'durable' ? ['starr'] : ['health', 'starr'];
      return (await Promise.all(parts.map((name) => one(stores.namespace(name))))).every(Boolean);
    },
    async close() {
      await Promise.allSettled([...opened.values()].map((kv) => kv.disconnect()));
      opened.clear();
      await pool?.end();
    },
  };
  return stores;
}

/** What a copy of durable namespaces did, per namespace. */
export type CopyReport = Record<DurableNamespace, { copied: number; kept: number }>;

/**
 * Copies every entry of the durable namespaces from `from` (an earlier installation's stores: a
 * SQLite file, or a Redis an earlier version kept them in) into `to`, keeping entries `to` already
 * has. Idempotent: run it again and it copies nothing twice. `starr migrate` can use it; openCore
 * uses it once to bring an earlier version's copy over from the cache store.
 */
export async function copyDurable(from: Pick<KeyvStores, 'namespace'>, to: Pick<KeyvStores, 'namespace'>): Promise<CopyReport> {
  const report = {} as CopyReport;
  for (const name of DURABLE_NAMESPACES) {
    const src = from.namespace(name);
    const dst = to.namespace(name);
    const r = { copied: 0, kept: 0 };
    if (!src.iterator) throw new Error(`the source store cannot list the "${name}" namespace`);
    for await (const [key, value] of src.iterator(src.namespace)) {
      if (await dst.has(key)) r.kept++;
      else {
        await dst.set(key, value);
        r.copied++;
      }
    }
    report[name] = r;
  }
  return report;
}

/**
 * Copies the durable namespaces an earlier version kept at `legacyUrl` (beside the cache) into
 * `stores`, once: a marker in the 'starr' namespace records it, so a namespace emptied later (the
 * last link removed) is never filled again from the old copy.
 */
export async function importLegacyDurable(stores: KeyvStores, legacyUrl: string, cachePrefix?: string): Promise<CopyReport | null> {
  const marker = stores.namespace('starr');
  const key = `imported:${redactUrl(legacyUrl)}`;
  if (await marker.has(key)) return null;
  const legacy = await openKeyvStores({ cache: legacyUrl, durable: legacyUrl, earlier: true, ...(cachePrefix ? { cachePrefix } : {}) });
  try {
    const report = await copyDurable(legacy, stores);
    await marker.set(key, Date.now());
    return report;
  } finally {
    await legacy.close();
  }
}
