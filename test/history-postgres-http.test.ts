/**
 * The history API end to end on PostgreSQL (runs when DATABASE_URL is set, as in CI): the store in
 * a fresh schema, reached through a TCP proxy the test can cut. While the database is away the
 * history endpoints answer 503 with Retry-After; once it is back they answer again, and nothing
 * committed before is lost.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HistoryService } from '../src/core/history.ts';
import { createHttpServer } from '../src/http/server.ts';
import { HistoryStore } from '../src/store/history-store.ts';
import type { PlayerRankingItem } from '../src/upstream/schemas.ts';
import { serve, type HttpClient } from './support/http.ts';
import { backends, DATABASE_URL, type BackendFixture } from './support/stores.ts';
import { startTcpProxy, type TcpProxy } from './support/tcp-proxy.ts';
import { startWorld, type TestWorld } from './support/world.ts';

const T0 = Date.UTC(2026, 5, 3, 15, 0, 0);

describe.skipIf(!DATABASE_URL)('history API on PostgreSQL', () => {
  let w: TestWorld;
  let pg: BackendFixture;
  let proxy: TcpProxy;
  let store: HistoryStore;
  let history: HistoryService;
  let http: HttpClient;

  beforeAll(async () => {
    pg = backends().find((b) => b.name === 'postgres')!;
    const where = pg.fresh() as { url: string; schema: string };
    const target = new URL(where.url);
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
    target.host = `127.0.0.1:${proxy.port}`;
    w = await startWorld({ startMs: T0, players: 100, clubs: 10 });
    store = await HistoryStore.open({ url: target.toString(), schema: where.schema });
    history = new HistoryService({ store, stats: w.stats, config: w.config, now: w.now });
    const rows: PlayerRankingItem[] = [
      { tag: '#PGJ1', name: 'Jérôme Postgres', trophies: 900, rank: 1 },
      { tag: '#PGJ2', name: 'jerome', trophies: 100, rank: 2 },
    ];
    await store.record([{ kind: 'playerRanking', atMs: T0, region: 'global', data: rows }]);
    http = await serve(createHttpServer({ ...w.core, history }, { now: w.now }));
  });
  afterAll(async () => {
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
});
