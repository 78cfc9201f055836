/**
 * The composition root of a running service: openCore (src/core/open.ts) + HTTP API (listening)
 * + Discord bot (when configured) + poller, and in demo mode a small backfill so history shows
 * within a minute. Front doors receive the Core; nothing below reads process.env.
 *
 * ROLE picks the parts (`all` = every part, one process):
 *   api    — the HTTP API and POST /interactions (replies only: no gateway, no deliveries)
 *   worker — the poller (polls as jobs on the shared queue when REDIS_URL is set)
 *   bot    — the gateway and the deliveries (leaderboards)
 * Every role listens on PORT: worker and bot with /healthz, /readyz and /metrics only, for the
 * orchestrator that restarts them and the Prometheus that scrapes them.
 */
import type { FastifyInstance } from 'fastify';
import type { Config, Role } from './config.ts';
import type { Core } from './core/index.ts';
import { openCore, ShutdownSteps } from './core/open.ts';
import { createHttpServer } from './http/server.ts';
import { createLogger, type Logger } from './log.ts';

export interface App {
  core: Core;
  logger: Logger;
  /** the HTTP server: the API (roles all and api) or health and metrics only (worker, bot) */
  http: FastifyInstance;
  /** where it listens, e.g. http://127.0.0.1:8080 ('' when started with listen: false) */
  url: string;
  close(): Promise<void>;
}

/** The parts a role runs. */
export function partsOf(role: Role): { api: boolean; poller: boolean; gateway: boolean } {
  return { api: role === 'all' || role === 'api', poller: role === 'all' || role === 'worker', gateway: role === 'all' || role === 'bot' };
}

export async function startApp(config: Config, opts: { listen?: boolean; logger?: Logger } = {}): Promise<App> {
  const logger = opts.logger ?? createLogger(config);
  const opened = await openCore(config, { logger });
  const { core } = opened;
  const closers = new ShutdownSteps(logger);
  closers.push(() => opened.close());
  const close = () => closers.close();
  const parts = partsOf(config.ROLE);
  try {
    const { createBot } = await import('./bot/index.ts');
    const bot = parts.api || parts.gateway ? await createBot(core, { gateway: parts.gateway, deliver: parts.gateway }) : null;

    // A process that runs the gateway is ready once every shard it runs is connected.
    const readiness: Record<string, () => Promise<string | null>> = {};
    if (bot && parts.gateway && config.DISCORD_TOKEN) {
      readiness.gateway = async () => (bot.gateway ? bot.gateway.problem() : 'the gateway is not connected yet');
    }
    const http = createHttpServer(core, { metrics: opened.metrics, upstreamKind: opened.upstream.kind, routes: parts.api ? 'all' : 'health', readiness });
    const interactions = parts.api ? bot?.interactionsRoute : null;
    if (interactions) await http.register(interactions);
    closers.push(() => http.close());
    let url = '';
    if (opts.listen !== false) {
      url = await http.listen({ port: config.PORT, host: config.HOST });
      url = url.replace('://0.0.0.0', '://localhost').replace('://[::]', '://localhost');
    } else {
      await http.ready();
    }
    if (interactions) logger.info('Discord interactions endpoint at POST /interactions');

    // Render workers and their fonts start now, in the background, not on the first picture.
    if (parts.api || parts.gateway) void opened.images.warm();

    if (bot) {
      await bot.start();
      closers.push(() => bot.close());
      if (parts.gateway && config.DISCORD_TOKEN) logger.info('Discord bot connected through the gateway');
    }

    if (parts.poller && config.POLLER) {
      const { Poller } = await import('./poller/index.ts');
      const poller = new Poller({ stats: opened.stats, history: opened.history, config, logger: logger.child({ component: 'poller' }) });
      // Demo mode: a few days of the simulated world recorded first, so history, logs and charts have
      // something to show right away; then the poller carries it on. A second start finds it done.
      const sim = opened.sim;
      const backfill = sim
        ? () => import('./poller/backfill.ts').then(({ demoBackfill }) => demoBackfill({ world: sim.world, store: opened.historyStore, config, nowMs: sim.clock.now(), logger }))
        : null;
      const redis = core.coordination.redis;
      if (redis) {
        // A cluster (or one process with REDIS_URL): polls are jobs on the shared queue, the
        // backfill one of them, so every worker shares the schedule and each poll runs once.
        const { PollQueue } = await import('./poller/queue.ts');
        const queue = new PollQueue({
          poller,
          history: opened.history,
          redis,
          lockMs: config.POLL_JOB_LOCK_SECONDS * 1000,
          scanMs: config.POLL_SCAN_SECONDS * 1000,
          ...(backfill ? { backfill } : {}),
          logger: logger.child({ component: 'poll-queue' }),
          metrics: opened.metrics,
        });
        queue.start();
        closers.push(() => queue.close());
        logger.info('polling as jobs on the shared queue');
      } else {
        const warmUp = backfill ? backfill() : Promise.resolve();
        const started = warmUp
          .catch((e: unknown) => logger.error({ err: e }, 'demo backfill failed; the poller starts without it'))
          .then(() => poller.start());
        closers.push(async () => {
          await started;
          await poller.stop();
        });
      }
    }

    return { core, logger, http, url, close };
  } catch (e) {
    await close();
    throw e;
  }
}
