/**
 * `openCore`: the one way to build a `Core` (src/core/index.ts), for the app, the CLI and the tests.
 *
 *   stores → upstream (the simulated world when no token is set) → StatsService → API keys
 *   → history (observing the StatsService) → images (over history)
 *
 * Tests pass a simulated world they started themselves (a virtual clock, faults) and its clock;
 * everything else is built exactly as in production.
 */
import { existsSync } from 'node:fs';
import { createHistogram, constants as perf, PerformanceObserver, type EntryType } from 'node:perf_hooks';
import { getHeapSpaceStatistics } from 'node:v8';
import { cacheUrl, durableUrl, usesSimulator, type Config } from '../config.ts';
import { MetricsRegistry, upstreamAttemptRecorder } from '../http/metrics.ts';
import { createLogger, type Logger } from '../log.ts';
import type { SimServer } from '../sim/index.ts';
import { ApiKeyStore, type ScryptParams } from '../store/apikeys.ts';
import type { HistoryStore } from '../store/history-store.ts';
import { importLegacyDurable, openKeyvStores, redactUrl, type KeyvStores } from '../store/keyv.ts';
import { createUpstreamClient, type UpstreamClient } from '../upstream/client.ts';
import { openCoordination } from './coordination.ts';
import { RedisPeerFlights } from './peer-flights.ts';
import { wallClockSchedule } from '../lib/schedule.ts';
import { openHistory, type HistoryService } from './history.ts';
import { historyRecords } from './history-records.ts';
import { createImageService, type ImageService } from './images.ts';
import type { Core } from './index.ts';
import { createStatsService, type StatsService } from './service.ts';

/** The event-loop delay metric's timer (prom-client's default): a wake-up of the main thread per period. */
const LOOP_RESOLUTION_MS = 10;

export interface CoreOptions {
  logger?: Logger;
  /** render worker threads (default: the pool's own choice) */
  renderWorkers?: number;
  /** counters of the core and the upstream client (the HTTP server's registry); default a new one */
  metrics?: MetricsRegistry;
  /**
   * A simulated world already running, used instead of the configuration's upstream; its owner
   * closes it. Tests pass one with a virtual clock or faults.
   */
  sim?: SimServer;
  /** with `sim`: the base URL the core calls instead of the sim's (a proxy in front of it) */
  upstreamUrl?: string;
  /** the clock of every part (epoch ms); default real time */
  now?: () => number;
  /** scrypt cost of new API passwords (default: ApiKeyStore's production cost) */
  scrypt?: ScryptParams;
  /**
   * prefix of every key on Redis: the loss-tolerant keyv namespaces and the cluster's coordination
   * (default REDIS_PREFIX; tests share one Redis, each suite under its own)
   */
  cachePrefix?: string;
}

/** A core and the running services behind it, for the parts that drive them (poller, backfill). */
export interface OpenCore {
  core: Core;
  stats: StatsService;
  history: HistoryService;
  images: ImageService;
  keys: ApiKeyStore;
  stores: KeyvStores;
  upstream: UpstreamClient;
  /** the simulated world, when no official token is configured (or the one passed in) */
  sim: SimServer | null;
  historyStore: HistoryStore;
  metrics: MetricsRegistry;
  close(): Promise<void>;
}

/** Shutdown steps, run once in reverse order of registration; a failing step is logged and the rest still run. */
export class ShutdownSteps {
  private steps: (() => Promise<void>)[] = [];
  constructor(private readonly logger: Logger) {}
  push(step: () => Promise<void>): void {
    this.steps.push(step);
  }
  async close(): Promise<void> {
    const steps = this.steps.reverse();
    this.steps = [];
    for (const step of steps) {
      try {
        await step();
      } catch (e) {
        this.logger.error({ err: e }, 'error while shutting down');
      }
    }
  }
}

/**
 * Where an earlier setup kept API keys, settings, links and boards, copied into the durable store
 * once each (a marker in the store records it; a failure is logged and tried at the next start):
 * the cache store (before durable data had a store of its own), and DATA_DIR/settings.sqlite once
 * DATABASE_URL moves the durable store to PostgreSQL.
 */
async function importEarlierDurable(config: Config, stores: KeyvStores, logger: Logger, cachePrefix?: string): Promise<void> {
  const earlier: { url: string; prefix?: string }[] = [{ url: cacheUrl(config), ...(cachePrefix ? { prefix: cachePrefix } : {}) }];
  if (config.DATABASE_URL) {
    const file = durableUrl({ ...config, DATABASE_URL: undefined });
    if (existsSync(file.replace(/^sqlite:\/\//, ''))) earlier.push({ url: file });
  }
  for (const { url, prefix } of earlier) {
    const from = redactUrl(url);
    try {
      const imported = await importLegacyDurable(stores, url, prefix);
      if (imported && Object.values(imported).some((r) => r.copied > 0)) {
        logger.info({ from, to: stores.durable.location, ...imported }, 'copied saved API keys, settings and links into the durable store');
      }
    } catch (e) {
      logger.error({ err: e, from }, 'could not copy API keys, settings and links an earlier setup kept there; tried again at the next start');
    }
  }
}

export async function openCore(config: Config, opts: CoreOptions = {}): Promise<OpenCore> {
  const logger = opts.logger ?? createLogger(config);
  const metrics = opts.metrics ?? new MetricsRegistry();
  const now = opts.now;
  const closers = new ShutdownSteps(logger);
  const close = () => closers.close();
  const redisPrefix = opts.cachePrefix ?? (config.REDIS_PREFIX || undefined);
  try {
    const stores = await openKeyvStores({
      cache: cacheUrl(config),
      durable: durableUrl(config),
      ...(config.DATABASE_SCHEMA ? { durableSchema: config.DATABASE_SCHEMA } : {}),
      ...(redisPrefix ? { cachePrefix: redisPrefix } : {}),
    });
    closers.push(() => stores.close());
    await importEarlierDurable(config, stores, logger, redisPrefix);

    const coordination = openCoordination(config, { ...(redisPrefix ? { prefix: redisPrefix } : {}), ...(now ? { now } : {}) });
    closers.push(() => coordination.close());

    let sim: SimServer | null = opts.sim ?? null;
    let upstream: UpstreamClient;
    const extra = {
      logger: logger.child({ component: 'upstream' }),
      onAttempt: upstreamAttemptRecorder(metrics),
      // In a cluster UPSTREAM_RPS holds for all processes together: the tokens' buckets are in Redis.
      ...(coordination.client ? { sharedBudget: coordination.client } : {}),
      // Which part of a cluster asked, for whoever reads the API's (or a proxy's) request log.
      ...(config.ROLE !== 'all' ? { userAgent: `starr-stats/${config.ROLE} (+https://github.com/starr-stats)` } : {}),
    };
    if (!sim && usesSimulator(config)) {
      const { startSim } = await import('../sim/index.ts');
      const started = await startSim({ seed: config.SIM_SEED, players: config.SIM_PLAYERS, clubs: config.SIM_CLUBS });
      closers.push(() => started.close());
      sim = started;
      logger.info(
        `No BRAWLSTARS_API_TOKEN set: using the simulated game world at ${sim.url} (seed "${config.SIM_SEED}", ` +
          `${config.SIM_PLAYERS} players, ${config.SIM_CLUBS} clubs). Set the token to use the official API.`,
      );
    }
    if (sim) {
      upstream = createUpstreamClient(config, { baseUrl: opts.upstreamUrl ?? sim.url, tokens: [sim.token], kind: 'simulated' }, extra);
    } else {
      upstream = createUpstreamClient(config, { kind: 'official' }, extra);
      logger.info({ url: config.BRAWLSTARS_API_URL, tokens: config.BRAWLSTARS_API_TOKEN.length }, 'using the official Brawl Stars API');
    }
    closers.push(() => upstream.close());

    // In a cluster one upstream call per key across every process, and failure holds they all keep.
    // A claim lasts one upstream attempt and a second: a holder that died blocks nobody longer.
    // Only when the cache is the shared Redis too: a waiter reads the holder's answer there.
    const peers =
      coordination.client && coordination.redis && stores.kind === 'redis'
        ? new RedisPeerFlights(coordination.client, coordination.redis, { claimMs: config.UPSTREAM_TIMEOUT_MS + 1000, schedule: wallClockSchedule })
        : undefined;
    const stats = createStatsService(config, {
      upstream,
      stores,
      logger: logger.child({ component: 'core' }),
      metrics,
      ...(now ? { now } : {}),
      ...(peers ? { peers } : {}),
    });
    closers.push(() => stats.close());

    const keys = ApiKeyStore.open(stores, { ...(opts.scrypt ? { scrypt: opts.scrypt } : {}), ...(now ? { now } : {}) });

    const opened = await openHistory({ config, stats, logger: logger.child({ component: 'history' }), ...(now ? { now } : {}) });
    closers.push(() => opened.close());
    const { history } = opened;

    const { images, pool } = createImageService({
      config,
      stats,
      records: historyRecords(history),
      logger: logger.child({ component: 'render' }),
      metrics,
      ...(opts.renderWorkers ? { workers: opts.renderWorkers } : {}),
      ...(now ? { now } : {}),
    });
    closers.push(() => images.close());

    // What holds the process's memory, for /metrics and bench:memory: RSS alone does not say.
    metrics.gauge('starr_process_memory_bytes', "Memory by thread and kind: the main thread's V8 heap (its young generation apart) and what lives outside it, each render worker's heap, sprite cache and pictures handed over still alive as of its last picture", () => {
      const m = process.memoryUsage();
      const out: [Record<string, string>, number][] = [
        [{ thread: 'main', kind: 'heap_used' }, m.heapUsed],
        [{ thread: 'main', kind: 'heap_total' }, m.heapTotal],
        // of heap_total, the young generation (both semi-spaces): what --max-semi-space-size bounds
        [{ thread: 'main', kind: 'young_total' }, getHeapSpaceStatistics().find((sp) => sp.space_name === 'new_space')?.space_size ?? 0],
        [{ thread: 'main', kind: 'external' }, m.external],
        [{ thread: 'main', kind: 'array_buffers' }, m.arrayBuffers],
      ];
      pool.memory().forEach((w, i) => {
        const thread = `render${i + 1}`;
        out.push([{ thread, kind: 'heap_used' }, w.heapUsed], [{ thread, kind: 'heap_total' }, w.heapTotal], [{ thread, kind: 'external' }, w.external], [{ thread, kind: 'sprites' }, w.sprites], [{ thread, kind: 'handed_over' }, w.handedOver]);
      });
      return out;
    });
    // What the heap's settings cost (npm start's --heap-growing-percent, --max-semi-space-size): the
    // main thread's collections and their pauses, by kind.
    const gcCount = metrics.counter('starr_gc_pauses_total', "The main thread's garbage collections by kind (minor, major)");
    const gcTime = metrics.counter('starr_gc_pause_seconds_total', "The main thread's time paused in garbage collection, by kind");
    let longestMajor = 0;
    const gcObserver = new PerformanceObserver((list) => {
      for (const e of list.getEntries()) {
        const k = (e as unknown as { detail?: { kind?: number } }).detail?.kind;
        const kind = k === perf.NODE_PERFORMANCE_GC_MAJOR ? 'major' : k === perf.NODE_PERFORMANCE_GC_MINOR ? 'minor' : 'other';
        gcCount.inc({ kind });
        gcTime.inc({ kind }, e.duration / 1000);
        if (kind === 'major') longestMajor = Math.max(longestMajor, e.duration / 1000);
      }
    });
    gcObserver.observe({ entryTypes: ['gc' as EntryType] });
    closers.push(async () => gcObserver.disconnect());
    metrics.gauge('starr_gc_longest_major_pause_seconds', "The main thread's longest pause in a major collection since start", () => longestMajor);
    // How late the event loop ran a timer due every LOOP_RESOLUTION_MS: each reading is a block of
    // the main thread (a long task, a collection), the one thing that holds every request waiting.
    // Read and reset at each scrape (as prom-client does with its event-loop lag), so a scrape shows
    // the blocks since the one before; with several scrapers each sees only its own interval. Timed
    // here rather than by monitorEventLoopDelay, whose reset() also forgets its last tick, so the
    // first interval after a scrape, a block that began with it, went unrecorded.
    const loop = createHistogram();
    let tick = performance.now();
    const ticking = setInterval(() => {
      const t = performance.now();
      loop.record(Math.max(1, Math.round((t - tick) * 1e6)));
      tick = t;
    }, LOOP_RESOLUTION_MS).unref();
    closers.push(async () => clearInterval(ticking));
    metrics.gauge('starr_event_loop_delay_seconds', `How late the main thread ran a timer due every ${LOOP_RESOLUTION_MS} ms, since the previous scrape (median, p90, p99, max; 0 with no reading): the longest is the longest block of the event loop`, () => {
      const late = (ns: number) => (loop.count === 0 ? 0 : Math.max(0, ns / 1e9 - LOOP_RESOLUTION_MS / 1000));
      const out: [Record<string, string>, number][] = [
        [{ stat: 'p50' }, late(loop.percentile(50))],
        [{ stat: 'p90' }, late(loop.percentile(90))],
        [{ stat: 'p99' }, late(loop.percentile(99))],
        [{ stat: 'max' }, late(loop.max)],
      ];
      loop.reset();
      return out;
    });
    metrics.gauge('starr_render_workers', 'Render worker threads running (a worker idle for 60 s is ended, the next picture starts one)', () => pool.stats().workers);
    metrics.gauge('starr_cache_memory_bytes', 'Bytes held by the in-process caches: answers (as JSON, CACHE_MEMORY_MB) and pictures (PNG, RENDER_CACHE_MB)', () => [
      [{ cache: 'answers' }, stats.stats().memoryBytes],
      [{ cache: 'pictures' }, images.cacheStats().bytes],
    ]);
    metrics.gauge('starr_picture_files_bytes', 'Bytes of pictures kept as files under DATA_DIR/pictures (RENDER_DISK_CACHE_MB), the picture cache\'s second tier', () => images.fileStats().bytes);

    return {
      core: { config, logger, stores, stats, keys, history, images, coordination },
      stats,
      history,
      images,
      keys,
      stores,
      upstream,
      sim,
      historyStore: opened.store,
      metrics,
      close,
    };
  } catch (e) {
    await close();
    throw e;
  }
}
