/**
 * Durable and loss-tolerant data on their own backends, end to end over the HTTP API and the bot
 * (the real discord.js client against the fake Discord): with DATABASE_URL and REDIS_URL set, API
 * accounts and keys, guild settings with their sealed keys and boards, and links live in
 * PostgreSQL (this suite's own schema); the cache and the rate limits in Redis (this suite's own
 * prefix). Wiping every Redis key of the suite — what a restarted Redis without persistence
 * (FLUSHALL) does — and restarting the service loses none of them.
 *
 * Runs whenever both variables are set (.ci/run sets them), and always in CI; fails when they are
 * unset there or unusable.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PermissionFlagsBits } from 'discord-api-types/v10';
import type { FastifyInstance } from 'fastify';
import { createClient } from '@keyv/redis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBot } from '../src/bot/index.ts';
import { main } from '../src/cli.ts';
import { LinkStore } from '../src/bot/links.ts';
import { cacheUrl, loadConfig } from '../src/config.ts';
import { openCore } from '../src/core/open.ts';
import { silentLogger } from '../src/log.ts';
import { ApiKeyStore } from '../src/store/apikeys.ts';
import { HistoryStore } from '../src/store/history-store.ts';
import { createHttpServer } from '../src/http/server.ts';
import { DURABLE_NAMESPACES, isDurable, openKeyvStores } from '../src/store/keyv.ts';
import { startBotHarness, type BotHarness } from './support/fake-discord-bot.ts';
import { serve, type HttpClient } from './support/http.ts';
import { IN_CI } from './support/stores.ts';
import { startWorld, type TestWorld } from './support/world.ts';
import { IDENTIFY_TURN_MS } from '../src/bot/identify.ts';

const START = Date.UTC(2026, 5, 1, 12);
const ADMIN = PermissionFlagsBits.ManageGuild | PermissionFlagsBits.ViewChannel | PermissionFlagsBits.SendMessages;
// Under CI=true without the variables the suite fails (startWorld names the missing one), never skips.
const ON = Boolean(process.env.DATABASE_URL && process.env.REDIS_URL) || IN_CI;

describe('which namespaces are durable', () => {
  it('is declared once: what users saved, never the cache, limits or component state', () => {
    expect([...DURABLE_NAMESPACES].sort()).toEqual(['apikeys', 'feeds', 'guilds', 'links', 'starr']);
    for (const ns of ['cache', 'ratelimit', 'components', 'gamedata', 'health']) expect(isDurable(ns)).toBe(false);
  });

  it('refuses Redis as the durable store', async () => {
    await expect(openKeyvStores({ cache: 'redis://127.0.0.1:6379', durable: 'redis://127.0.0.1:6379' })).rejects.toThrow(/never kept in Redis/);
  });
});

describe('an installation from before the split', () => {
  it('finds the keys and links it kept in the cache file in the durable store, copied once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'starr-legacy-'));
    try {
      const config = loadConfig({ DATA_DIR: dir, SIM_PLAYERS: '20', SIM_CLUBS: '2', LOG_LEVEL: 'silent' });
      const scrypt = { N: 1024, r: 8, p: 1 };
      // What an earlier version wrote: every namespace in DATA_DIR/cache.sqlite.
      const old = await openKeyvStores(cacheUrl(config));
      const { key } = await ApiKeyStore.open(old, { scrypt }).issue({ email: 'old@example.com', password: 'an old password', ip: '127.0.0.1' });
      await new LinkStore(old.namespace('links')).link('42', '#2PP', true);
      await old.close();

      const first = await openCore(config, { logger: silentLogger, scrypt, renderWorkers: 1 });
      try {
        expect(first.stores.durable.location).toBe(join(dir, 'settings.sqlite'));
        expect(await first.keys.verify(key)).not.toBeNull();
        const links = new LinkStore(first.stores.namespace('links'));
        expect(await links.defaultTag('42')).toBe('#2PP');
        await links.unlink('42');
      } finally {
        await first.close();
      }
      expect(existsSync(join(dir, 'settings.sqlite'))).toBe(true);

      // The link removed since stays removed: the old copy is not read again.
      const second = await openCore(config, { logger: silentLogger, scrypt, renderWorkers: 1 });
      try {
        expect(await new LinkStore(second.stores.namespace('links')).defaultTag('42')).toBeUndefined();
        expect(await second.keys.verify(key)).not.toBeNull();
      } finally {
        await second.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe.runIf(ON)('saved data on PostgreSQL, the cache on Redis', () => {
  let w: TestWorld;
  let h: BotHarness;
  let app: FastifyInstance;
  let http: HttpClient;
  let apiKey = '';
  let member: ReturnType<BotHarness['fake']['addUser']>;

  const slash = (text: string, o: Parameters<BotHarness['fake']['commandInteraction']>[1] = {}) =>
    h.send(h.fake.commandInteraction(text, { guild: h.guild, ...o }));

  async function rows(): Promise<{ key: string }[]> {
    const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await client.connect();
    try {
      return (await client.query<{ key: string }>(`SELECT key FROM ${w.config.DATABASE_SCHEMA}.keyv ORDER BY key`)).rows;
    } finally {
      await client.end();
    }
  }

  beforeAll(async () => {
    w = await startWorld({ startMs: START, postgres: true, redis: true, env: { RATE_LIMIT_FREE: '1000' } });
    app = createHttpServer(w.core, { now: w.now });
    http = await serve(app);
    h = await startBotHarness(w.core, { now: w.now, config: { STARR_SECRET: 'durable-test-secret-value' } });
  });

  afterAll(async () => {
    await h?.close();
    await http?.close();
    await w?.close();
  });

  it('saves keys, settings, links and boards in PostgreSQL and only loss-tolerant data in Redis', async () => {
    expect((await http.get('/healthz')).json()).toMatchObject({ cacheStore: 'redis', durableStore: 'postgres' });

    const issued = await http.post(`/generate-api-keys?ip=127.0.0.1&email=durable%40example.com&password=${encodeURIComponent('a long password')}`);
    expect(issued.status, issued.text).toBe(200);
    apiKey = issued.json().api_key;
    expect((await http.get(`/players/${encodeURIComponent(w.sim.world.playerTag(2))}/log?api_key=${apiKey}`)).status).toBe(200);

    const botKey = (await w.keys.issue({ email: 'server@example.com', password: 'another long password', ip: '127.0.0.1' })).key;
    const set = h.fake.answer(await slash(`/settings apikey set key:${botKey}`, { permissions: ADMIN }));
    expect(set.embeds[0]!.title).toBe('API key registered');
    member = h.fake.addUser('linked-member');
    expect(h.fake.answer(await slash(`/link tag:${w.sim.world.playerTag(5)}`, { user: member })).embeds[0]!.title).toBe('Account linked');
    const boards = h.fake.channel(h.guild, 'boards');
    const made = h.fake.answer(await slash(`/leaderboard create channel:${boards.id} club:${w.sim.world.clubTag(3)} interval:30`, { permissions: ADMIN }));
    expect(made.embeds[0]!.title).toBe('Leaderboard created');

    const saved = (await rows()).map((r) => r.key.split(':')[0]);
    for (const ns of ['apikeys', 'guilds', 'links']) expect(saved).toContain(ns);
    expect(saved.every((ns) => isDurable(ns!))).toBe(true);

    // Redis holds the cache and the limits, and nothing a user saved.
    const wiped = await w.wipeRedis();
    expect(wiped).toBeGreaterThan(0);
  });

  it('copies the keys and links an earlier version kept in Redis into PostgreSQL', async () => {
    let legacyKey = '';
    const earlier = await startWorld({
      startMs: START,
      postgres: true,
      redis: true,
      players: 20,
      clubs: 2,
      beforeOpen: async ({ config, cachePrefix }) => {
        const old = await openKeyvStores({ cache: config.CACHE_URL!, durable: config.CACHE_URL!, earlier: true, cachePrefix: cachePrefix! });
        legacyKey = (await ApiKeyStore.open(old, { scrypt: { N: 1024, r: 8, p: 1 } }).issue({ email: 'redis@example.com', password: 'kept in redis', ip: '127.0.0.1' })).key;
        await new LinkStore(old.namespace('links')).link('7', '#2PP', true);
        await old.close();
      },
    });
    try {
      expect(await earlier.keys.verify(legacyKey)).not.toBeNull();
      expect(await new LinkStore(earlier.stores.namespace('links')).defaultTag('7')).toBe('#2PP');
      // now only in PostgreSQL: Redis may go
      await earlier.wipeRedis();
      await earlier.restart();
      expect(await earlier.keys.verify(legacyKey)).not.toBeNull();
      expect(await new LinkStore(earlier.stores.namespace('links')).defaultTag('7')).toBe('#2PP');
    } finally {
      await earlier.close();
    }
  });

  it('has starr migrate copy the keys and links an earlier version kept in Redis into PostgreSQL, counted', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'starr-migrate-redis-'));
    const schema = `starr_mr_${process.pid}_${Date.now().toString(36)}`;
    const prefix = `${schema}:`;
    const redisUrl = process.env.REDIS_URL!;
    const scrypt = { N: 1024, r: 8, p: 1 };
    try {
      await (await HistoryStore.open({ dir })).close();
      const old = await openKeyvStores({ cache: redisUrl, durable: redisUrl, earlier: true, cachePrefix: prefix });
      const { key } = await ApiKeyStore.open(old, { scrypt }).issue({ email: 'cli@example.com', password: 'kept in redis too', ip: '127.0.0.1' });
      await new LinkStore(old.namespace('links')).link('11', '#2PP', true);
      await old.close();

      const out: string[] = [];
      const err: string[] = [];
      const env = { DATA_DIR: dir, CACHE_URL: redisUrl, REDIS_PREFIX: prefix };
      const code = await main(['migrate', '--to', process.env.DATABASE_URL!, '--schema', schema, '--quiet'], { out: (l) => out.push(l), err: (l) => err.push(l), env, cwd: dir });
      expect(code, err.join('\n')).toBe(0);
      const text = out.join('\n');
      expect(text).toMatch(/^Redis \(CACHE_URL\):$/m);
      expect(text).toMatch(/^ {2}links +1 entries, 1 copied, 0 already there$/m);
      expect(text).toMatch(/^ {2}apikeys +\d+ entries, \d+ copied, 0 already there$/m);
      expect(text).toMatch(/Everything matches/);

      const moved = await openCore(loadConfig({ DATA_DIR: dir, DATABASE_URL: process.env.DATABASE_URL!, DATABASE_SCHEMA: schema, LOG_LEVEL: 'silent' }), { logger: silentLogger, scrypt, renderWorkers: 1 });
      try {
        expect(await moved.keys.verify(key)).not.toBeNull();
        expect(await new LinkStore(moved.stores.namespace('links')).defaultTag('11')).toBe('#2PP');
      } finally {
        await moved.close();
      }
    } finally {
      const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).finally(() => client.end());
      const redis = createClient({ url: redisUrl });
      await redis.connect();
      for await (const keys of redis.scanIterator({ MATCH: `${prefix}*`, COUNT: 500 })) {
        const batch = ([] as string[]).concat(keys);
        if (batch.length > 0) await redis.del(batch);
      }
      await redis.quit();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('brings settings.sqlite over when DATABASE_URL moves the durable store to PostgreSQL', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'starr-move-'));
    const schema = `starr_move_${process.pid}_${Date.now().toString(36)}`;
    const scrypt = { N: 1024, r: 8, p: 1 };
    const env = { DATA_DIR: dir, SIM_PLAYERS: '20', SIM_CLUBS: '2', LOG_LEVEL: 'silent' };
    try {
      const onSqlite = await openCore(loadConfig(env), { logger: silentLogger, scrypt, renderWorkers: 1 });
      let key = '';
      try {
        key = (await onSqlite.keys.issue({ email: 'mover@example.com', password: 'moving house', ip: '127.0.0.1' })).key;
        await new LinkStore(onSqlite.stores.namespace('links')).link('9', '#2PP', true);
      } finally {
        await onSqlite.close();
      }
      const config = loadConfig({ ...env, DATABASE_URL: process.env.DATABASE_URL!, DATABASE_SCHEMA: schema });
      const onPostgres = await openCore(config, { logger: silentLogger, scrypt, renderWorkers: 1 });
      try {
        expect(onPostgres.stores.durable.kind).toBe('postgres');
        expect(await onPostgres.keys.verify(key)).not.toBeNull();
        expect(await new LinkStore(onPostgres.stores.namespace('links')).defaultTag('9')).toBe('#2PP');
      } finally {
        await onPostgres.close();
      }
    } finally {
      const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).finally(() => client.end());
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('loses no API key, setting, link or board when Redis loses everything and the service restarts', async () => {
    await w.wipeRedis();
    await h.bot.close();
    await http.close();
    await w.restart();
    // Discord takes one IDENTIFY per shard bucket per 5 s: the restart comes after the turn the last one held.
    h.fake.advance(IDENTIFY_TURN_MS);

    app = createHttpServer(w.core, { now: w.now });
    http = await serve(app);
    h.core = { ...w.core, config: h.core.config };
    h.bot = await createBot(h.core, { now: w.now, shards: [0], shardCount: 1, boardCheckMs: 3_600_000 });
    await h.bot.start();

    // the API key still opens a premium endpoint
    const log = await http.get(`/players/${encodeURIComponent(w.sim.world.playerTag(2))}/log?api_key=${apiKey}`);
    expect(log.status, log.text).toBe(200);
    // the server's registered key still unlocks premium views
    const status = h.fake.answer(await slash('/settings apikey status', { permissions: ADMIN }));
    expect(status.embeds[0]!.fields![0]!.value).toContain('premium views are unlocked');
    // the link still answers /player without a tag
    const me = h.fake.answer(await slash('/player', { user: member }));
    expect(me.embeds[0]!.title).toContain(w.sim.world.playerTag(5));
    // the board is still listed and still refreshes
    expect(await h.bot.services.boards.list(h.guild.id)).toHaveLength(1);
    w.clock.advance(31 * 60_000);
    expect((await h.bot.services.boards.tick()).refreshed).toBe(1);
  });
});
