/**
 * The bot under test, wired to the fake Discord: the real discord.js Client over the gateway
 * (an explicit shard count, as the real `auto` would ask discord.com), or the HTTP interactions
 * endpoint on a real port, with the commands deployed through the fake's REST API first.
 *
 * Timing is the test's: the router's deadlines (deferral, autocomplete budget) fire only through
 * `h.deadlines.fire()`, and the fake counts Discord's 3 s only when the test advances its clock, so
 * every reply is the same on an idle and on a busy machine. `realTime` restores production timing
 * for benchmarks.
 */
import type { AddressInfo } from 'node:net';
import { discordRest } from '../../src/bot/discord-rest.ts';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../../src/config.ts';
import { createHttpServer } from '../../src/http/server.ts';
import type { Core } from '../../src/core/index.ts';
import { createBot, type Bot, type BotOptions } from '../../src/bot/index.ts';
import { loadCommands } from '../../src/bot/command.ts';
import { deployCommands } from '../../src/bot/deploy.ts';
import { FakeDiscord, type FakeDiscordOptions, type FakeGuild, type InteractionRecord } from './fake-discord.ts';
import { ManualSchedule } from './manual-schedule.ts';

export interface BotHarness {
  fake: FakeDiscord;
  bot: Bot;
  core: Core;
  /** POST /interactions URL when the HTTP transport is on */
  endpoint?: string;
  guild: FakeGuild;
  /** the router's deadlines; they fire when the test calls `fire()` (unused with `realTime`) */
  deadlines: ManualSchedule;
  /** dispatches (gateway) or posts (HTTP) an interaction and waits for its final answer */
  send(rec: InteractionRecord): Promise<InteractionRecord>;
  close(): Promise<void>;
}

export interface HarnessOptions extends Omit<BotOptions, 'shardCount'> {
  transport?: 'gateway' | 'http';
  /** extra settings over the core's config (STARR_SECRET, ...) */
  config?: Partial<Config>;
  /**
   * shards the bot runs, all in this process (default one); 'config' leaves it to SHARD_IDS /
   * SHARD_COUNT in `config`, else Discord's recommendation (the fake's `recommendedShards`)
   */
  shardCount?: number | 'config';
  /** puts something in front of the fake's REST API (a REST proxy): returns the bot's DISCORD_API_URL */
  through?: (fake: FakeDiscord) => Promise<string>;
  /** how the fake Discord plays (recommended shards, max_concurrency) */
  fake?: Omit<FakeDiscordOptions, 'realTimeDeadlines'>;
  /** the router's deadlines on the wall clock and Discord's 3 s in real time, as in production (benchmarks) */
  realTime?: boolean;
}

export async function startBotHarness(core: Core, opts: HarnessOptions = {}): Promise<BotHarness> {
  const realTime = opts.realTime ?? false;
  const fake = await FakeDiscord.start({ ...opts.fake, realTimeDeadlines: realTime });
  const deadlines = new ManualSchedule();
  const guild = fake.addGuild({ name: 'Starr Test Server', channels: [{ name: 'general' }, { name: 'boards' }] });
  const transport = opts.transport ?? 'gateway';
  const config = {
    ...core.config,
    DISCORD_TOKEN: fake.token,
    DISCORD_API_URL: opts.through ? await opts.through(fake) : fake.apiUrl,
    DISCORD_PUBLIC_KEY: transport === 'http' ? fake.publicKeyHex : undefined,
    ...opts.config,
  } as Config;
  const botCore: Core = { ...core, config };
  const commands = opts.commands ?? (await loadCommands());
  const rest = discordRest(fake.apiUrl, fake.token);
  await deployCommands({ rest, appId: fake.appId, guildId: guild.id, definitions: commands.definitions() });

  const { shardCount = 1, fake: _fake, through: _through, ...botOpts } = opts;
  const bot = await createBot(botCore, {
    deferAfterMs: 1000,
    boardCheckMs: 3_600_000,
    feedCheckMs: 3_600_000,
    roleSyncMs: 3_600_000,
    ...(realTime ? {} : { schedule: deadlines.schedule }),
    ...botOpts,
    commands,
    ...(shardCount === 'config' ? {} : { shards: Array.from({ length: shardCount }, (_, i) => i), shardCount }),
  });

  let endpoint: string | undefined;
  let http: FastifyInstance | undefined;
  if (transport === 'http') {
    // The service's own HTTP server, as the app runs it: the route sits beside the API.
    http = createHttpServer(botCore);
    await http.register(bot.interactionsRoute!);
    await http.listen({ port: 0, host: '127.0.0.1' });
    endpoint = `http://127.0.0.1:${(http.server.address() as AddressInfo).port}/interactions`;
  }
  // The gateway also runs in HTTP mode: it holds the bot token for leaderboards.
  await bot.start();

  return {
    fake,
    bot,
    core: botCore,
    endpoint,
    guild,
    deadlines,
    async send(rec) {
      if (transport === 'http') await fake.post(endpoint!, rec);
      else fake.dispatchInteraction(rec);
      return fake.settled(rec);
    },
    async close() {
      await bot.close();
      await http?.close();
      await fake.close();
    },
  };
}

/**
 * Resolves once `ready()` holds, checking it now and after each `event` of the bot's discord.js
 * client: a gateway dispatch reaches the client's cache when it reaches it, so wait for it rather
 * than sleep and poll.
 */
export function whenClient(client: { on(event: string, f: () => void): unknown; off(event: string, f: () => void): unknown }, event: string, ready: () => boolean): Promise<void> {
  if (ready()) return Promise.resolve();
  return new Promise((resolve) => {
    const check = () => {
      if (!ready()) return;
      client.off(event, check);
      resolve();
    };
    client.on(event, check);
  });
}
