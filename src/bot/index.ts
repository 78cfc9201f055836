/**
 * The Discord bot as one object the app composes: services over the core, the router, and the
 * transports the configuration asks for.
 *
 *   const bot = await createBot(core);
 *   if (bot.interactionsRoute) await http.register(bot.interactionsRoute);  // DISCORD_PUBLIC_KEY
 *   await bot.start();    // gateway when DISCORD_TOKEN is set; leaderboard schedule
 *   ...
 *   await bot.close();
 */
import type { FastifyPluginAsync } from 'fastify';
import type { REST } from 'discord.js';
import { discordRest } from './discord-rest.ts';
import type { CommandSet } from './command.ts';
import { startGateway, type GatewayBot } from './gateway.ts';
import { interactionsRoute } from './http.ts';
import { Router, type RouterOptions } from './router.ts';
import type { Core } from '../core/index.ts';
import { createBotServices, type BotServices } from './services.ts';

export type { BotServices } from './services.ts';

export interface BotOptions extends RouterOptions {
  commands?: CommandSet;
  now?: () => number;
  /** gateway shard ids of this process and the total (default: Discord's recommendation) */
  shards?: number[];
  shardCount?: number;
  /** how often due leaderboards are looked for (default one minute) */
  boardCheckMs?: number;
}

export interface Bot {
  services: BotServices;
  router: Router;
  /** POST /interactions, when DISCORD_PUBLIC_KEY is set */
  interactionsRoute: FastifyPluginAsync | null;
  /** the gateway connection once started (DISCORD_TOKEN) */
  gateway: GatewayBot | null;
  start(): Promise<void>;
  close(): Promise<void>;
}

/** The REST client of the bot: DISCORD_API_URL as base, the bot token when there is one. */
export function botRest(core: Core): REST {
  return discordRest(core.config.DISCORD_API_URL, core.config.DISCORD_TOKEN);
}

export async function createBot(core: Core, opts: BotOptions = {}): Promise<Bot> {
  const services = await createBotServices(core, opts);
  const router = new Router(core, services, opts);
  const { DISCORD_TOKEN, DISCORD_PUBLIC_KEY, DISCORD_API_URL } = core.config;
  const rest = botRest(core);
  const bot: Bot = {
    services,
    router,
    interactionsRoute: DISCORD_PUBLIC_KEY
      ? interactionsRoute({ router, rest, publicKeyHex: DISCORD_PUBLIC_KEY, logger: core.logger, ...(opts.now ? { now: opts.now } : {}) })
      : null,
    gateway: null,
    async start() {
      if (DISCORD_TOKEN) {
        bot.gateway = await startGateway(router, services, core.logger, {
          token: DISCORD_TOKEN,
          ...(DISCORD_API_URL ? { apiUrl: DISCORD_API_URL } : {}),
          ...(opts.shards ? { shards: opts.shards, shardCount: opts.shardCount } : {}),
        });
      }
      services.boards.start(opts.boardCheckMs);
    },
    async close() {
      await services.boards.stop();
      await bot.gateway?.close();
      bot.gateway = null;
    },
  };
  return bot;
}
