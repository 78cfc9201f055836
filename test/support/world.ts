/**
 * The service as production composes it, over the simulated world: startSim → UpstreamClient →
 * StatsService (keyv 'cache' on a temporary SQLite file, or Redis) → ApiKeyStore. Returns the core
 * the front doors take, the sim (world model, virtual clock, faults) and one `close()`.
 *
 *   const w = await startWorld({ startMs: Date.UTC(2026, 5, 1), env: { RATE_LIMIT_FREE: '3' } });
 *   const app = createHttpServer(w.core, { now: w.now });
 *   ...
 *   await w.close();
 *
 * With `startMs` the virtual clock is frozen there (exact bodies: `w.sim.world.player(tag, w.now())`)
 * and moves only with `w.clock.advance(ms)`; without it the clock follows real time.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, type Config } from '../../src/config.ts';
import { createStatsService, type StatsService } from '../../src/core/service.ts';
import { upstreamAttemptRecorder, type MetricsRegistry } from '../../src/http/metrics.ts';
import { silentLogger, type Logger } from '../../src/log.ts';
import { SimClock, startSim, type FaultConfig, type SimServer, type VirtualClock } from '../../src/sim/index.ts';
import { ApiKeyStore } from '../../src/store/apikeys.ts';
import { openKeyvStores, type KeyvStores } from '../../src/store/keyv.ts';
import { createUpstreamClient, type UpstreamClient } from '../../src/upstream/client.ts';

export interface WorldOptions {
  /** freeze the virtual clock at this instant (epoch ms); default: real time */
  startMs?: number;
  /** settings as environment strings (RATE_LIMIT_FREE, UPSTREAM_RETRIES, ...); nothing is read from process.env */
  env?: Record<string, string>;
  seed?: string;
  players?: number;
  clubs?: number;
  faults?: Partial<FaultConfig>;
  /** cache store URL; default a SQLite file in a temporary folder */
  cacheUrl?: string;
  /** counters for the core and the upstream client (the HTTP server's registry, as in production) */
  metrics?: MetricsRegistry;
  logger?: Logger;
}

export interface TestWorld {
  sim: SimServer;
  clock: VirtualClock;
  /** the virtual clock's now, for every component that takes one */
  now: () => number;
  config: Config;
  stores: KeyvStores;
  upstream: UpstreamClient;
  stats: StatsService;
  keys: ApiKeyStore;
  /** what createHttpServer and the bot take */
  core: { config: Config; logger: Logger; stores: KeyvStores; stats: StatsService; keys: ApiKeyStore };
  /** temporary folder (DATA_DIR), removed by close() */
  dir: string;
  close(): Promise<void>;
}

/** Cheap scrypt for tests; the production cost is tested in test/http-apikeys.test.ts. */
const TEST_SCRYPT = { N: 1024, r: 8, p: 1 };

export async function startWorld(opts: WorldOptions = {}): Promise<TestWorld> {
  const dir = mkdtempSync(join(tmpdir(), 'starr-world-'));
  const config = loadConfig({
    DATA_DIR: dir,
    // The upstream budget protects the real API; the simulated one takes what tests send.
    UPSTREAM_RPS: '10000',
    ...opts.env,
  });
  const logger = opts.logger ?? silentLogger;
  const clock: VirtualClock = new SimClock(opts.startMs);
  const now = () => clock.now();
  const sim = await startSim({
    seed: opts.seed ?? config.SIM_SEED,
    players: opts.players ?? 300,
    clubs: opts.clubs ?? 30,
    clock,
    ...(opts.faults ? { faults: opts.faults } : {}),
  });
  const stores = openKeyvStores(opts.cacheUrl ?? `sqlite://${join(dir, 'cache.sqlite')}`);
  const upstream = createUpstreamClient(
    config,
    { baseUrl: sim.url, tokens: [sim.token], kind: 'simulated' },
    { logger, ...(opts.metrics ? { onAttempt: upstreamAttemptRecorder(opts.metrics) } : {}) },
  );
  const stats = createStatsService(config, { upstream, stores, now, logger, ...(opts.metrics ? { metrics: opts.metrics } : {}) });
  const keys = ApiKeyStore.open(stores, { scrypt: TEST_SCRYPT, now });
  return {
    sim,
    clock,
    now,
    config,
    stores,
    upstream,
    stats,
    keys,
    core: { config, logger, stores, stats, keys },
    dir,
    async close() {
      await stats.close();
      await upstream.close();
      await sim.close();
      await stores.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
