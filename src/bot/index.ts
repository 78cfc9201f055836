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
import type { CommandSet } from './command.ts';
import type { GatewayBot } from './gateway.ts';
import { Router, type RouterOptions } from './router.ts';
import type { Core } from '../core/index.ts';
import type { Schedule } from '../lib/schedule.ts';
import { createBotServices, type BotServices } from './services.ts';

export type { BotServices } from './services.ts';

export interface BotOptions extends RouterOptions {
  commands?: CommandSet;
  now?: () => number;
  /** gateway shard ids of this process and the total (default SHARD_IDS / SHARD_COUNT, else Discord's recommendation) */
  shards?: number[];
  shardCount?: number;
  /** the identify throttler's waits (default the wall clock) */
  identifySchedule?: Schedule;
  /** how often due leaderboards are looked for (default BOARD_CHECK_SECONDS, one minute) */
  boardCheckMs?: number;
  /** connect the gateway when DISCORD_TOKEN is set (default true; false in ROLE=api) */
  gateway?: boolean;
  /** how often club feeds look for new changes (default FEED_CHECK_SECONDS, one minute) */
  feedCheckMs?: number;
  /** deliver scheduled work: leaderboards, club feeds and automatic roles (default true; false in ROLE=api) */
  deliver?: boolean;
  /** how often automatic roles are synced (default ROLE_SYNC_MS, five minutes) */
  roleSyncMs?: number;
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

/**
 * The REST client of the bot: DISCORD_API_URL as base, the bot token when there is one. discord.js
 * and its REST client are loaded here, when a token or a public key asks for them, not with the
 * module: a service without either (the API alone, the default) then never loads them, which kept
 * 13.6 MB of V8 heap and about 35 MB of RSS (its modules' code, its own undici) in every such
 * process (node --expose-gc, heap used after a full collection, 2026-11-24).
 */
export async function botRest(core: Core): Promise<REST> {
  const { discordRest } = await import('./discord-rest.ts');
  return discordRest(core.config.DISCORD_API_URL, core.config.DISCORD_TOKEN);
}

export async function createBot(core: Core, opts: BotOptions = {}): Promise<Bot> {
  const services = await createBotServices(core, opts);
  const router = new Router(core, services, opts);
  const { DISCORD_TOKEN, DISCORD_PUBLIC_KEY, DISCORD_API_URL, SHARD_IDS, SHARD_COUNT } = core.config;
  const shards = opts.shards ?? SHARD_IDS;
  const shardCount = opts.shards ? opts.shardCount : (opts.shardCount ?? SHARD_COUNT);
  const rest = DISCORD_TOKEN || DISCORD_PUBLIC_KEY ? await botRest(core) : null;
  // Roles need only the token: the HTTP transport manages them too; the gateway replaces this with
  // one that knows which servers its shards hold.
  if (DISCORD_TOKEN && rest) {
    const { RestRoles } = await import('./discord-rest.ts');
    services.roles.setApi(new RestRoles(rest));
  }
  let interactions: FastifyPluginAsync | null = null;
  if (DISCORD_PUBLIC_KEY && rest) {
    const { interactionsRoute } = await import('./http.ts');
    interactions = interactionsRoute({ router, rest, publicKeyHex: DISCORD_PUBLIC_KEY, logger: core.logger, ...(opts.now ? { now: opts.now } : {}) });
  }
  const bot: Bot = {
    services,
    router,
    interactionsRoute: interactions,
    gateway: null,
    async start() {
      if (DISCORD_TOKEN && opts.gateway !== false) {
        const { startGateway } = await import('./gateway.ts');
        bot.gateway = await startGateway(router, services, core.logger, {
          token: DISCORD_TOKEN,
          ...(DISCORD_API_URL ? { apiUrl: DISCORD_API_URL } : {}),
          ...(shards ? { shards } : {}),
          ...(shardCount ? { shardCount } : {}),
          coordination: core.coordination,
          ...(opts.identifySchedule ? { identifySchedule: opts.identifySchedule } : {}),
        });
      }
      if (opts.deliver !== false) {
        services.boards.start(opts.boardCheckMs ?? core.config.BOARD_CHECK_SECONDS * 1000);
        services.feeds.start(opts.feedCheckMs ?? core.config.FEED_CHECK_SECONDS * 1000);
        services.roles.start(opts.roleSyncMs);
      }
    },
    async close() {
      await services.boards.stop();
      await services.feeds.stop();
      await services.roles.stop();
      await bot.gateway?.close();
      bot.gateway = null;
    },
  };
  return bot;
}
