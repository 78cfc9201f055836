/**
 * The history API end to end on PostgreSQL (runs when DATABASE_URL is set, as in CI): the store in
 * a fresh schema, reached through a TCP proxy the test can cut. While the database is away the
 * history endpoints answer 503 with Retry-After and the bot (the real discord.js client against the
 * fake Discord) a short reply saying so; once it is back both answer again, and nothing committed
 * before is lost. API keys on the same database: a valid key meets 503 (not 401) while it is away.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HistoryService } from '../src/core/history.ts';
import { createHttpServer } from '../src/http/server.ts';
import { HistoryStore } from '../src/store/history-store.ts';
import type { PlayerRankingItem } from '../src/upstream/schemas.ts';
import { startBotHarness, type BotHarness } from './support/fake-discord-bot.ts';
import { serve, type HttpClient } from './support/http.ts';
import { backends, DATABASE_URL, RUN_POSTGRES, type BackendFixture } from './support/stores.ts';
import { startTcpProxy, type TcpProxy } from './support/tcp-proxy.ts';
import { startWorld, type TestWorld } from './support/world.ts';

const T0 = Date.UTC(2026, 5, 3, 15, 0, 0);

/** A fresh schema on the PostgreSQL of DATABASE_URL, reached through a TCP proxy the test can cut. */
async function behindProxy(): Promise<{ pg: BackendFixture; proxy: TcpProxy; url: string; schema: string }> {
  const pg = backends().find((b) => b.name === 'postgres')!;
  const where = pg.fresh() as { url: string; schema: string };
  const target = new URL(where.url);
  const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
  target.host = `127.0.0.1:${proxy.port}`;
  return { pg, proxy, url: target.toString(), schema: where.schema };
}

describe.runIf(RUN_POSTGRES)('history API on PostgreSQL', () => {
  let w: TestWorld;
  let pg: BackendFixture;
  let proxy: TcpProxy;
  let store: HistoryStore;
  let history: HistoryService;
  let http: HttpClient;
  let bot: BotHarness;

  beforeAll(async () => {
    let url: string;
    let schema: string;
    ({ pg, proxy, url, schema } = await behindProxy());
    w = await startWorld({ startMs: T0, players: 100, clubs: 10 });
    store = await HistoryStore.open({ url, schema });
    history = new HistoryService({ store, stats: w.stats, config: w.config, now: w.now });
    const rows: PlayerRankingItem[] = [
      { tag: '#PGJ1', name: 'Jérôme Postgres', trophies: 900, rank: 1 },
      { tag: '#PGJ2', name: 'jerome', trophies: 100, rank: 2 },
    ];
    await store.record([{ kind: 'playerRanking', atMs: T0, region: 'global', data: rows }]);
    http = await serve(createHttpServer({ ...w.core, history }, { now: w.now }));
    bot = await startBotHarness({ ...w.core, history }, { now: w.now });
  });
  afterAll(async () => {
    await bot?.close();
    await http?.close();
    await history?.close();
    await store?.close();
    await proxy?.close();
    await w?.close();
    await pg?.dropAll();
  });

  const names = async () => {
    const r = await http.get('/players/search?name=JEROME');
    return { status: r.status, names: r.status === 200 ? r.json().items.map((i: { name: string }) => i.name) : r.json(), retryAfter: r.headers['retry-after'] };
  };

  it('answers searches from the PostgreSQL store', async () => {
    expect((await names()).names).toEqual(['jerome', 'Jérôme Postgres']);
  });

  it('answers 503 with Retry-After while the database is away, and again once it is back', async () => {
    await proxy.cut();
    const down = await names();
    expect(down.status).toBe(503);
    expect(down.names).toEqual({ detail: 'The statistics database is unavailable; try again shortly.' });
    expect(Number(down.retryAfter)).toBeGreaterThan(0);
    await proxy.restore();
    expect((await names()).names).toEqual(['jerome', 'Jérôme Postgres']);
  });

  it('has the bot say briefly that history is unavailable while the database is away', async () => {
    // /map reads the maps this store recorded (none here)
    const ask = async () => bot.fake.answer(await bot.send(bot.fake.commandInteraction('/map name:Hard Rock Mine', { guild: bot.guild })));
    expect((await ask()).embeds[0]!.title).toBe('Unknown map');
    await proxy.cut();
    const down = await ask();
    expect(down.embeds[0]!.title).toBe('History is unavailable');
    expect(down.embeds[0]!.description).toBe('Our statistics database is not answering right now. Try again in a minute.');
    await proxy.restore();
    expect((await ask()).embeds[0]!.title).toBe('Unknown map');
  });
});

describe.runIf(RUN_POSTGRES)('API keys on PostgreSQL while the database is away', () => {
  let w: TestWorld;
  let pg: BackendFixture;
  let proxy: TcpProxy;
  let http: HttpClient;

  beforeAll(async () => {
    let url: string;
    let schema: string;
    ({ pg, proxy, url, schema } = await behindProxy());
    w = await startWorld({ startMs: T0, players: 100, clubs: 10, env: { DATABASE_URL: url, DATABASE_SCHEMA: schema } });
    http = await serve(createHttpServer(w.core, { now: w.now }));
  });
  afterAll(async () => {
    await http?.close();
    await proxy?.close();
    await w?.close();
    await pg?.dropAll();
  });

  it('answers 503 with Retry-After for a valid key, not 401, and accepts the key once the database is back', async () => {
    const issued = await http.post('/generate-api-keys?ip=203.0.113.7&email=keys%40example.com&password=correct%20horse');
    expect(issued.status).toBe(200);
    const key = issued.json().api_key as string;
    await proxy.cut();
    const down = await http.get(`/brawlers?api_key=${key}`);
    expect(down.status).toBe(503);
    expect(down.json()).toEqual({ detail: 'The API key store is unavailable; try again shortly.' });
    expect(Number(down.headers['retry-after'])).toBeGreaterThan(0);
    await proxy.restore();
    const back = await http.get(`/brawlers?api_key=${key}`);
    expect(back.status).toBe(200);
    expect(back.headers['ratelimit-limit']).toBe(w.config.RATE_LIMIT_KEY.toString());
    expect((await http.get('/brawlers?api_key=starr_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA')).status).toBe(401);
  });
});
