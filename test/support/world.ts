/**
 * The service as production composes it (openCore, src/core/open.ts), over a simulated world this
 * helper starts with a virtual clock and a temporary DATA_DIR. Returns the core the front doors
 * take, the running services behind it, the sim (world model, virtual clock, faults) and one
 * `close()`.
 *
 *   const w = await startWorld({ startMs: Date.UTC(2026, 5, 1), env: { RATE_LIMIT_FREE: '3' } });
 *   const app = createHttpServer(w.core, { now: w.now });
 *   ...
 *   await w.close();
 *
 * With `startMs` the virtual clock is frozen there (exact bodies: `w.sim.world.player(tag, w.now())`)
 * and moves only with `w.clock.advance(ms)`; without it the clock follows real time.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from '@keyv/redis';
import pg from 'pg';
import { loadConfig, type Config } from '../../src/config.ts';
import type { Core } from '../../src/core/index.ts';
import type { HistoryService } from '../../src/core/history.ts';
import type { ImageService } from '../../src/core/images.ts';
import { openCore, type OpenCore } from '../../src/core/open.ts';
import type { StatsService } from '../../src/core/service.ts';
import type { MetricsRegistry } from '../../src/http/metrics.ts';
import { silentLogger, type Logger } from '../../src/log.ts';
import { SimClock, startSim, type FaultConfig, type SimServer, type VirtualClock } from '../../src/sim/index.ts';
import type { ApiKeyStore } from '../../src/store/apikeys.ts';
import type { HistoryStore } from '../../src/store/history-store.ts';
import type { KeyvStores } from '../../src/store/keyv.ts';
import type { UpstreamClient } from '../../src/upstream/client.ts';
import { IN_CI } from './stores.ts';

export interface WorldOptions {
  /** freeze the virtual clock at this instant (epoch ms); default: real time */
  startMs?: number;
  /** settings as environment strings (RATE_LIMIT_FREE, CACHE_URL, ...); nothing is read from process.env */
  env?: Record<string, string>;
  seed?: string;
  players?: number;
  clubs?: number;
  faults?: Partial<FaultConfig>;
  /** cache store URL (CACHE_URL); default a SQLite file in the temporary DATA_DIR */
  cacheUrl?: string;
  /** counters for the core and the upstream client (the HTTP server's registry, as in production) */
  metrics?: MetricsRegistry;
  logger?: Logger;
  /** render worker threads (default one: tests share the machine; 0: the pool's own choice) */
  renderWorkers?: number;
  /** puts something in front of the sim (a recording proxy): returns the base URL the core calls */
  through?: (sim: SimServer) => Promise<string>;
  /**
   * Durable stores on the PostgreSQL of DATABASE_URL (from the environment), in a schema of this
   * world's own, dropped by close(). Throws when DATABASE_URL is unset or unusable.
   */
  postgres?: boolean;
  /**
   * The cache on the Redis of REDIS_URL (from the environment), every key under a prefix of this
   * world's own, deleted by close(). Throws when REDIS_URL is unset or unusable.
   */
  redis?: boolean;
  /** runs before the core first opens: writes what an earlier installation left (CACHE_URL, the Redis prefix) */
  beforeOpen?: (o: { config: Config; cachePrefix: string | undefined }) => Promise<void>;
}

export interface TestWorld {
  sim: SimServer;
  clock: VirtualClock;
  /** the virtual clock's now, for every component that takes one */
  now: () => number;
  config: Config;
  /** what createHttpServer, createBot and the CLI take */
  core: Core;
  stores: KeyvStores;
  upstream: UpstreamClient;
  stats: StatsService;
  keys: ApiKeyStore;
  history: HistoryService;
  historyStore: HistoryStore;
  images: ImageService;
  /** temporary folder (DATA_DIR), removed by close() */
  dir: string;
  /** closes the core and opens a new one over the same DATA_DIR and stores, as a restart of the service */
  restart(): Promise<void>;
  /**
   * Another process of the same installation: a second core over the same DATA_DIR, durable
   * stores and Redis prefix (claims and leases shared when REDIS_URL is set). The caller closes it.
   */
  another(): Promise<OpenCore>;
  /**
   * With `redis`: deletes every key of this world in Redis (what FLUSHALL does to a restarted
   * Redis without persistence, limited to this world's prefix); returns how many.
   */
  wipeRedis(): Promise<number>;
  close(): Promise<void>;
}

/** Where a world keeps what users save and what it caches. */
export interface WorldBackend {
  name: 'sqlite' | 'postgres + redis';
  options: Pick<WorldOptions, 'postgres' | 'redis'>;
}

/**
 * The backends a front door's suite runs on (`describe.each(worldBackends())`): SQLite files
 * always; PostgreSQL with Redis when DATABASE_URL or REDIS_URL is set, and always under CI=true,
 * where a variable left unset or a server that does not answer fails the suite (startWorld says
 * which), never skips it.
 */
export function worldBackends(): WorldBackend[] {
  const shared = Boolean(process.env.DATABASE_URL || process.env.REDIS_URL) || IN_CI;
  return [{ name: 'sqlite', options: {} }, ...(shared ? [{ name: 'postgres + redis' as const, options: { postgres: true, redis: true } }] : [])];
}

/** Cheap scrypt for tests; the production cost is tested in test/http-apikeys.test.ts. */
const TEST_SCRYPT = { N: 1024, r: 8, p: 1 };

/** What a world holds on the shared servers, and how to take it away again. */
class SharedServers {
  readonly id = `starr_w${process.pid}_${randomBytes(4).toString('hex')}`;
  private schema: string | null = null;
  private redisUrl: string | null = null;

  constructor(private readonly opts: WorldOptions) {}

  async env(): Promise<Record<string, string>> {
    const env: Record<string, string> = {};
    if (this.opts.postgres) {
      const url = process.env.DATABASE_URL;
      if (!url) throw new Error('this suite needs PostgreSQL: set DATABASE_URL');
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await client.query(`CREATE SCHEMA ${this.id}`);
      } finally {
        await client.end();
      }
      this.schema = this.id;
      Object.assign(env, { DATABASE_URL: url, DATABASE_SCHEMA: this.id });
    }
    if (this.opts.redis) {
      const url = process.env.REDIS_URL;
      if (!url) throw new Error('this suite needs Redis: set REDIS_URL');
      this.redisUrl = url;
      await this.wipeRedis(); // proves the server answers before the suite starts
      env.CACHE_URL = url;
    }
    return env;
  }

  get cachePrefix(): string | undefined {
    return this.redisUrl ? `${this.id}:` : undefined;
  }

  async wipeRedis(): Promise<number> {
    if (!this.redisUrl) throw new Error('this world has no Redis (startWorld({ redis: true }))');
    const client = createClient({ url: this.redisUrl });
    await client.connect();
    try {
      let n = 0;
      for await (const keys of client.scanIterator({ MATCH: `${this.id}:*`, COUNT: 500 })) {
        const batch = ([] as string[]).concat(keys);
        if (batch.length > 0) n += await client.del(batch);
      }
      return n;
    } finally {
      await client.quit();
    }
  }

  async release(): Promise<void> {
    if (this.redisUrl) await this.wipeRedis();
    if (this.schema) {
      const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
      await client.connect();
      try {
        await client.query(`DROP SCHEMA IF EXISTS ${this.schema} CASCADE`);
      } finally {
        await client.end();
      }
    }
  }
}

export async function startWorld(opts: WorldOptions = {}): Promise<TestWorld> {
  const dir = mkdtempSync(join(tmpdir(), 'starr-world-'));
  const shared = new SharedServers(opts);
  let sim: SimServer | undefined;
  try {
    const config = loadConfig({
      DATA_DIR: dir,
      // The upstream budget protects the real API; the simulated one takes what tests send.
      UPSTREAM_RPS: '10000',
      // The simulated world shares the test machine's CPU: under load it can take seconds to answer,
      // which a user's 1 s / 2.5 s wait would turn into stale copies and 503s the suite does not
      // expect. Suites about those waits (test/upstream-trouble.test.ts) set the production values.
      UPSTREAM_STALE_WAIT_MS: '30000',
      UPSTREAM_USER_BUDGET_MS: '60000',
      // Likewise a drawing: on a busy machine one takes longer than the 50 ms after which a picture
      // whose older one is kept is answered with that one, stale. Suites about that wait
      // (test/picture-stale-drawing.test.ts) set their own.
      PICTURE_STALE_WAIT_MS: '120000',
      ...(opts.cacheUrl ? { CACHE_URL: opts.cacheUrl } : {}),
      ...(await shared.env()),
      ...opts.env,
    });
    const clock: VirtualClock = new SimClock(opts.startMs);
    const now = () => clock.now();
    sim = await startSim({
      seed: opts.seed ?? config.SIM_SEED,
      players: opts.players ?? 300,
      clubs: opts.clubs ?? 30,
      clock,
      ...(opts.faults ? { faults: opts.faults } : {}),
    });
    const started = sim;
    const upstreamUrl = opts.through ? await opts.through(started) : undefined;
    const open = () =>
      openCore(config, {
        logger: opts.logger ?? silentLogger,
        sim: started,
        ...(upstreamUrl ? { upstreamUrl } : {}),
        now,
        scrypt: TEST_SCRYPT,
        renderWorkers: opts.renderWorkers ?? 1,
        ...(opts.metrics ? { metrics: opts.metrics } : {}),
        ...(shared.cachePrefix ? { cachePrefix: shared.cachePrefix } : {}),
      });
    await opts.beforeOpen?.({ config, cachePrefix: shared.cachePrefix });
    let opened = await open();
    const parts = (o: OpenCore) => ({
      core: o.core,
      stores: o.stores,
      upstream: o.upstream,
      stats: o.stats,
      keys: o.keys,
      history: o.history,
      historyStore: o.historyStore,
      images: o.images,
    });
    const world: TestWorld = {
      sim: started,
      clock,
      now,
      config,
      ...parts(opened),
      dir,
      async restart() {
        await opened.close();
        opened = await open();
        Object.assign(world, parts(opened));
      },
      another: () => open(),
      wipeRedis: () => shared.wipeRedis(),
      async close() {
        await opened.close();
        await started.close();
        await shared.release();
        rmSync(dir, { recursive: true, force: true });
      },
    };
    return world;
  } catch (e) {
    await sim?.close();
    await shared.release().catch(() => {});
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }
}
