/**
 * The composition root: the one place that turns a Config into running parts.
 *
 *   openCore:  stores → upstream (the simulated world when no token is set) → StatsService
 *              → API keys → history (observing the StatsService) → images (over history)
 *   startApp:  openCore + HTTP API (listening) + Discord bot (when configured) + poller,
 *              and in demo mode a small backfill so history shows within a minute
 *
 * Front doors (HTTP, bot, CLI) receive the Core; nothing below reads process.env.
 */
import type { FastifyInstance } from 'fastify';
import { cacheUrl, usesSimulator, type Config } from './config.ts';
import { openHistory, type HistoryService } from './core/history.ts';
import { historyRecords } from './core/history-records.ts';
import { createImageService, type ImageService } from './core/images.ts';
import { createStatsService, type StatsService } from './core/service.ts';
import { MetricsRegistry, upstreamAttemptRecorder } from './http/metrics.ts';
import { createHttpServer } from './http/server.ts';
import { createLogger, type Logger } from './log.ts';
import type { SimServer } from './sim/index.ts';
import type { HistoryStore } from './store/history-store.ts';
import { ApiKeyStore } from './store/apikeys.ts';
import { openKeyvStores, type KeyvStores } from './store/keyv.ts';
import { createUpstreamClient, type UpstreamClient } from './upstream/client.ts';

export interface Core {
  config: Config;
  logger: Logger;
  stores: KeyvStores;
  stats: StatsService;
  keys: ApiKeyStore;
  history: HistoryService;
  images: ImageService;
}

export interface OpenCore {
  core: Core;
  upstream: UpstreamClient;
  /** the in-process simulated world, when no official token is configured */
  sim: SimServer | null;
  historyStore: HistoryStore;
  metrics: MetricsRegistry;
  close(): Promise<void>;
}

export interface CoreOptions {
  logger?: Logger;
  /** render worker threads (default: the pool's own choice) */
  renderWorkers?: number;
}

/** Shutdown steps, run once in reverse order of registration; a failing step is logged and the rest still run. */
class ShutdownSteps {
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

export async function openCore(config: Config, opts: CoreOptions = {}): Promise<OpenCore> {
  const logger = opts.logger ?? createLogger(config);
  const metrics = new MetricsRegistry();
  const closers = new ShutdownSteps(logger);
  const close = () => closers.close();
  try {
    const stores = openKeyvStores(cacheUrl(config));
    closers.push(() => stores.close());

    let sim: SimServer | null = null;
    let upstream: UpstreamClient;
    const extra = { logger: logger.child({ component: 'upstream' }), onAttempt: upstreamAttemptRecorder(metrics) };
    if (usesSimulator(config)) {
      const { startSim } = await import('./sim/index.ts');
      sim = await startSim({ seed: config.SIM_SEED, players: config.SIM_PLAYERS, clubs: config.SIM_CLUBS });
      closers.push(() => sim!.close());
      upstream = createUpstreamClient(config, { baseUrl: sim.url, tokens: [sim.token], kind: 'simulated' }, extra);
      logger.info(
        `No BRAWLSTARS_API_TOKEN set: using the simulated game world at ${sim.url} (seed "${config.SIM_SEED}", ` +
          `${config.SIM_PLAYERS} players, ${config.SIM_CLUBS} clubs). Set the token to use the official API.`,
      );
    } else {
      upstream = createUpstreamClient(config, { kind: 'official' }, extra);
      logger.info({ url: config.BRAWLSTARS_API_URL, tokens: config.BRAWLSTARS_API_TOKEN.length }, 'using the official Brawl Stars API');
    }
    closers.push(() => upstream.close());

    const stats = createStatsService(config, { upstream, stores, logger: logger.child({ component: 'core' }), metrics });
    closers.push(() => stats.close());

    const keys = ApiKeyStore.open(stores);

    const opened = await openHistory({ config, stats, logger: logger.child({ component: 'history' }) });
    closers.push(() => opened.close());
    const { history } = opened;

    const { images } = createImageService({
      config,
      stats,
      records: historyRecords(history),
      logger: logger.child({ component: 'render' }),
      ...(opts.renderWorkers ? { workers: opts.renderWorkers } : {}),
    });
    closers.push(() => images.close());

    return {
      core: { config, logger, stores, stats, keys, history, images },
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

export interface App {
  core: Core;
  logger: Logger;
  http: FastifyInstance;
  /** where the API listens, e.g. http://127.0.0.1:8080 */
  url: string;
  close(): Promise<void>;
}

export async function startApp(config: Config, opts: { listen?: boolean; logger?: Logger } = {}): Promise<App> {
  const logger = opts.logger ?? createLogger(config);
  const opened = await openCore(config, { logger });
  const { core } = opened;
  const closers = new ShutdownSteps(logger);
  closers.push(() => opened.close());
  const close = () => closers.close();
  try {
    const http = createHttpServer(core, { metrics: opened.metrics, upstreamKind: opened.upstream.kind });

    const { createBot } = await import('./bot/index.ts');
    const bot = await createBot(core);
    if (bot.interactionsRoute) await http.register(bot.interactionsRoute);
    closers.push(() => http.close());

    let url = '';
    if (opts.listen !== false) {
      url = await http.listen({ port: config.PORT, host: config.HOST });
      url = url.replace('://0.0.0.0', '://localhost').replace('://[::]', '://localhost');
    } else {
      await http.ready();
    }

    await bot.start();
    closers.push(() => bot.close());
    if (config.DISCORD_TOKEN) logger.info('Discord bot connected through the gateway');
    if (bot.interactionsRoute) logger.info('Discord interactions endpoint at POST /interactions');

    if (config.POLLER) {
      const { Poller } = await import('./poller/index.ts');
      const poller = new Poller({ stats: core.stats, history: core.history, config, logger: logger.child({ component: 'poller' }) });
      // Demo mode: a few days of the simulated world recorded first, so history, logs and charts have
      // something to show right away; then the poller carries it on. A second start finds it done.
      const sim = opened.sim;
      const warmUp = sim
        ? import('./poller/backfill.ts').then(({ demoBackfill }) =>
            demoBackfill({ world: sim.world, store: opened.historyStore, config, nowMs: sim.clock.now(), logger }),
          )
        : Promise.resolve();
      const started = warmUp
        .catch((e: unknown) => logger.error({ err: e }, 'demo backfill failed; the poller starts without it'))
        .then(() => poller.start());
      closers.push(async () => {
        await started;
        await poller.stop();
      });
    }

    return { core, logger, http, url, close };
  } catch (e) {
    await close();
    throw e;
  }
}
