/**
 * The composition root of a running service: openCore (src/core/open.ts) + HTTP API (listening)
 * + Discord bot (when configured) + poller, and in demo mode a small backfill so history shows
 * within a minute. Front doors receive the Core; nothing below reads process.env.
 */
import type { FastifyInstance } from 'fastify';
import type { Config } from './config.ts';
import type { Core } from './core/index.ts';
import { openCore, ShutdownSteps } from './core/open.ts';
import { createHttpServer } from './http/server.ts';
import { createLogger, type Logger } from './log.ts';

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

    // Render workers and their fonts start now, in the background, not on the first picture.
    void opened.images.warm();

    await bot.start();
    closers.push(() => bot.close());
    if (config.DISCORD_TOKEN) logger.info('Discord bot connected through the gateway');
    if (bot.interactionsRoute) logger.info('Discord interactions endpoint at POST /interactions');

    if (config.POLLER) {
      const { Poller } = await import('./poller/index.ts');
      const poller = new Poller({ stats: opened.stats, history: opened.history, config, logger: logger.child({ component: 'poller' }) });
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
