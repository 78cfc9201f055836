/**
 * The history store's interface, backend against backend: the same observations recorded into
 * SQLite and PostgreSQL give the same answers (snapshots, battle log, club log, maps, best builds,
 * rotation, search ranking, poll schedule, pruning), and each backend keeps the poll schedule's
 * rules. On PostgreSQL, a lost connection is retried and a server that stays away is an error that
 * says so. PostgreSQL runs when DATABASE_URL is set (CI), each store in a fresh schema.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HistoryStore } from '../src/store/history-store.ts';
import { StoreUnavailableError } from '../src/store/sql.ts';
import { answers, fill, world } from './support/history-answers.ts';
import { backends, DATABASE_URL, RUN_POSTGRES, openStore, terminateConnections, type BackendFixture } from './support/stores.ts';

const T0 = Date.UTC(2026, 5, 10, 0);
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

const BACKENDS = backends();
afterAll(async () => {
  for (const b of BACKENDS) await b.dropAll();
});

describe.each(BACKENDS)('poll schedule on $name', (backend: BackendFixture) => {
  let store: HistoryStore;
  beforeAll(async () => {
    store = await openStore(backend.fresh());
  });
  afterAll(async () => store?.close());

  it('polls a viewed entity until its view expires, a pinned one until unpinned, most overdue first', async () => {
    const [a, b, c] = [world.playerTag(1), world.playerTag(2), world.playerTag(3)];
    await store.track('player', a, T0 + DAY, T0);
    await store.track('player', a, T0 + HOUR, T0); // never shortens
    await store.pin('player', b, 'link:42', T0 - HOUR);
    await store.track('player', c, T0 + 2 * HOUR, T0 + 10);
    expect((await store.due('player', T0 + 10_000, 10)).map((d) => d.tag)).toEqual([b, a, c]);
    // when each became due: the cluster's poll jobs are named by it
    expect((await store.due('player', T0 + 10_000, 10)).map((d) => d.dueAt)).toEqual([T0 - HOUR, T0, T0]);
    expect((await store.tracking('player', a, T0)).until).toBe(T0 + DAY);

    const ids = (await store.due('player', T0 + 10_000, 10)).map((d) => d.id);
    await store.markPolled('player', ids, T0 + 10_000, T0 + 30 * 60_000);
    expect(await store.due('player', T0 + 20_000, 10)).toEqual([]);
    expect(await store.nextDue('player', T0 + 20_000)).toBe(T0 + 30 * 60_000);
    expect((await store.tracking('player', b, T0 + 20_000)).lastPollMs).toBe(T0 + 10_000);

    // A day later only the pinned one is due; unpinned, nothing is.
    expect((await store.due('player', T0 + DAY + 1000, 10)).map((d) => d.tag)).toEqual([b]);
    expect(await store.trackedTags(T0 + DAY + 1000)).toEqual({ player: [b], club: [] });
    await store.unpin('player', b, 'link:42');
    expect(await store.due('player', T0 + DAY + 1000, 10)).toEqual([]);
    expect(await store.nextDue('player', T0 + DAY + 1000)).toBeNull();
  });

  it('replaces a reason’s pins as a whole', async () => {
    const tags = [world.playerTag(10), world.playerTag(11), world.playerTag(12)];
    await store.replacePins('player', 'ranking', tags, T0);
    await store.replacePins('player', 'ranking', tags.slice(1), T0);
    expect((await store.tracking('player', tags[0]!, T0 + 2 * DAY)).pins).toEqual([]);
    expect((await store.tracking('player', tags[1]!, T0 + 2 * DAY)).pins).toEqual(['ranking']);
    expect(await store.trackedCount('player', T0 + 3 * DAY)).toBe(2);
  });
});

describe.runIf(RUN_POSTGRES)('PostgreSQL against SQLite', () => {
  const [sqlite, postgres] = BACKENDS;
  let a: HistoryStore;
  let b: HistoryStore;
  beforeAll(async () => {
    [a, b] = await Promise.all([openStore(sqlite!.fresh()), openStore(postgres!.fresh())]);
    await fill(a);
    await fill(b);
  }, 120_000);
  afterAll(async () => {
    await a?.close();
    await b?.close();
  });

  it('gives the same answers to the same observations', async () => {
    const [x, y] = [await answers(a, T0 + 1000), await answers(b, T0 + 1000)];
    expect(Object.keys(x).length).toBeGreaterThan(100);
    expect((x.clubEvents as unknown[]).length).toBeGreaterThan(0);
    expect((x.maps as unknown[]).length).toBeGreaterThan(0);
    expect((x.battleSummary as [string, { battles: number }][]).some(([, s]) => s.battles > 0)).toBe(true);
    expect(Object.keys(x).filter((k) => JSON.stringify(x[k]) !== JSON.stringify(y[k]))).toEqual([]);
    expect(y).toEqual(x);
  });

  it('prunes the same rows and answers the same afterwards', async () => {
    const [ra, rb] = [await a.prune(T0 + 1000, 1), await b.prune(T0 + 1000, 1)];
    expect(ra.snapshots).toBeGreaterThan(0);
    expect(rb).toEqual(ra);
    expect(await answers(b, T0 + 1000)).toEqual(await answers(a, T0 + 1000));
  });
});

describe.runIf(RUN_POSTGRES)('PostgreSQL connection loss', () => {
  it('retries a batch whose connections were cut and loses nothing committed', async () => {
    const pg = BACKENDS.find((x) => x.name === 'postgres')!;
    const where = pg.fresh() as { url: string; schema: string };
    const store = await openStore(where);
    const body = (t: number) => world.playerBody(5, t) as never;
    await store.record([{ kind: 'player', atMs: T0, data: body(T0) }]);
    expect(await terminateConnections(where.url, where.schema)).toBeGreaterThan(0);
    const r = await store.record([{ kind: 'player', atMs: T0 + DAY, data: body(T0 + DAY) }]);
    expect(r.playerSnapshots).toBe(1);
    await terminateConnections(where.url, where.schema);
    expect((await store.snapshots('player', world.playerTag(5))).map((s) => s.t)).toEqual([(T0 + DAY) / 1000, T0 / 1000]);
    await store.close();
  });

  it('reports a server that cannot be reached as unavailable', async () => {
    const url = new URL(DATABASE_URL!);
    url.port = '1'; // nothing listens there
    await expect(openStore({ url: url.toString(), schema: 'starr_unreachable' })).rejects.toBeInstanceOf(StoreUnavailableError);
  });
});
