/**
 * StatsService over the simulated world (real HTTP, real SQLite keyv): cache hit/miss, TTL expiry on
 * a virtual clock, the shared store layer, single-flight, stale-if-error through a maintenance window
 * and recovery after it, bounded memory, rankings, observers. Upstream calls are counted where they
 * land: at a recording proxy in front of the sim.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { MetricsRegistry } from '../src/http/metrics.ts';
import { StatsService, type CoreObserver, type StatsServiceOptions } from '../src/core/service.ts';
import { SimClock, startSim, type SimServer } from '../src/sim/index.ts';
import { openKeyvStores, type KeyvStores } from '../src/store/keyv.ts';
import { UpstreamClient } from '../src/upstream/client.ts';
import { AccessDeniedError, MaintenanceError, NotFoundError, UnavailableError } from '../src/upstream/errors.ts';
import * as S from '../src/upstream/schemas.ts';
import { InvalidTagError } from '../src/upstream/tags.ts';
import { startRecordingProxy, type RecordingProxy } from './support/recording-proxy.ts';
import { ManualSchedule } from './support/manual-schedule.ts';
import { RUN_REDIS } from './support/stores.ts';

const T0 = Date.UTC(2026, 10, 21, 9, 0, 0);
const MINUTE = 60_000;
const plain = (v: unknown) => JSON.parse(JSON.stringify(v));

let sim: SimServer;
let clock: SimClock;
let proxy: RecordingProxy;
let dir: string;
const cleanup: (() => Promise<void>)[] = [];

beforeAll(async () => {
  clock = new SimClock(T0);
  sim = await startSim({ seed: 'core', players: 300, clubs: 30, clock });
  proxy = await startRecordingProxy(sim.url);
  dir = mkdtempSync(join(tmpdir(), 'starr-core-'));
});

afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
  sim.faults.reset();
  clock.set(T0);
  proxy.requests.length = 0;
});

afterAll(async () => {
  await proxy?.close();
  await sim?.close();
  rmSync(dir, { recursive: true, force: true });
});

let storeCount = 0;
async function stores(): Promise<KeyvStores> {
  const s = await openKeyvStores(`sqlite://${join(dir, `cache-${++storeCount}.sqlite`)}`);
  cleanup.push(() => s.close());
  return s;
}

function upstream(tokens = [sim.token]): UpstreamClient {
  const c = new UpstreamClient({ baseUrl: proxy.url, tokens, kind: 'simulated', rps: 1000, retries: 0 });
  cleanup.push(() => c.close());
  return c;
}

async function service(opts: Partial<StatsServiceOptions> & { kv?: KeyvStores } = {}): Promise<StatsService> {
  const { kv, ...rest } = opts;
  const cache = rest.cache ?? (kv ?? (await stores())).namespace('cache');
  // The waits for a slow upstream end only when a test fires them: under CPU load a refresh took
  // longer than the real 1 s stale wait and a fresh read came back as the stale copy.
  const s = new StatsService({ upstream: upstream(), now: () => clock.now(), schedule: new ManualSchedule().schedule, ...rest, cache });
  cleanup.push(() => s.close());
  return s;
}

const calls = () => proxy.requests.length;

describe('cache', () => {
  it('a miss asks upstream once; hits within the TTL do not; after the TTL it asks again', async () => {
    const metrics = new MetricsRegistry();
    const stats = await service({ metrics });
    const tag = sim.world.playerTag(5);
    const first = await stats.player(tag);
    expect(first).toMatchObject({ stale: false, ageSeconds: 0, fetchedAt: T0, expiresAt: T0 + 120_000 });
    expect(plain(first.data)).toEqual(plain(S.Player.parse(sim.world.player(tag, T0))));
    expect(calls()).toBe(1);

    clock.advance(MINUTE);
    const hit = await stats.player(tag.slice(1).toLowerCase());
    expect(hit.data).toBe(first.data);
    expect(hit).toMatchObject({ stale: false, ageSeconds: 60, fetchedAt: T0 });
    expect(calls()).toBe(1);

    clock.advance(MINUTE + 1_000);
    const refreshed = await stats.player(tag);
    expect(refreshed).toMatchObject({ stale: false, ageSeconds: 0, fetchedAt: T0 + 121_000 });
    expect(plain(refreshed.data)).toEqual(plain(S.Player.parse(sim.world.player(tag, T0 + 121_000))));
    expect(calls()).toBe(2);
    expect(stats.stats()).toMatchObject({ reads: 3, memoryHits: 1, upstreamCalls: 2 });
    const reads = metrics.counter('starr_core_reads_total', '');
    expect([reads.get({ resource: 'player', source: 'memory' }), reads.get({ resource: 'player', source: 'upstream' })]).toEqual([1, 2]);
  });

  it('TTLs can differ per resource', async () => {
    const stats = await service({ ttlSeconds: { player: 10, brawlers: 3600 } });
    const tag = sim.world.playerTag(6);
    await stats.player(tag);
    await stats.brawlers();
    clock.advance(11_000);
    await stats.player(tag);
    await stats.brawlers();
    expect(proxy.requests.map((r) => r.path.replace(/%23\w+/, 'TAG'))).toEqual(['/v1/players/TAG', '/v1/brawlers', '/v1/players/TAG']);
  });

  it('a rotation is fresh until its first active event ends, not a full TTL past it', async () => {
    const ends = (at: number) =>
      (sim.world.eventRotation(at) as { endTime: string }[]).map((e) => S.parseApiTime(e.endTime)).filter((t) => t > at);
    const firstEnd = Math.min(...ends(T0));
    clock.set(firstEnd - 30_000);
    const stats = await service();
    const before = await stats.eventRotation();
    expect(before.expiresAt).toBe(firstEnd);
    clock.set(firstEnd - 1_000);
    expect((await stats.eventRotation()).data).toBe(before.data);
    expect(calls()).toBe(1);

    // the event has ended: the next read asks upstream again instead of showing it for 90 s more
    clock.set(firstEnd + 1_000);
    const after = await stats.eventRotation();
    expect(calls()).toBe(2);
    expect(after.fetchedAt).toBe(firstEnd + 1_000);
    expect(after.expiresAt).toBeLessThanOrEqual(firstEnd + 1_000 + 120_000);
    expect(after.expiresAt).toBeGreaterThanOrEqual(firstEnd + 1_000 + 5_000);
  });

  it('the keyv store serves another instance (a restart, another process) without upstream', async () => {
    const kv = await stores();
    const tag = sim.world.clubTag(2);
    const a = await service({ kv });
    const fromUpstream = await a.club(tag);
    clock.advance(30_000);
    const b = await service({ kv, memoryBytes: 0 });
    const fromStore = await b.club(tag);
    expect(plain(fromStore.data)).toEqual(plain(fromUpstream.data));
    expect(fromStore).toMatchObject({ fetchedAt: T0, ageSeconds: 30, stale: false });
    expect(calls()).toBe(1);
    expect(b.stats()).toMatchObject({ storeHits: 1, upstreamCalls: 0 });
  });

  it('remembers a 404 for one TTL, so a mistyped tag asked again costs nothing upstream', async () => {
    const stats = await service();
    await expect(stats.player('#2PP2PP2PP2')).rejects.toBeInstanceOf(NotFoundError);
    await expect(stats.player('#2pp2pp2pp2')).rejects.toBeInstanceOf(NotFoundError);
    expect(calls()).toBe(1);
    clock.advance(121_000);
    await expect(stats.player('#2PP2PP2PP2')).rejects.toBeInstanceOf(NotFoundError);
    expect(calls()).toBe(2);
  });

  it('an invalid tag fails before the cache and upstream', async () => {
    const stats = await service();
    await expect(stats.club('#NOPE')).rejects.toBeInstanceOf(InvalidTagError);
    expect(calls()).toBe(0);
  });

  it('a fresh read (the poller) skips the cache but refreshes it', async () => {
    const stats = await service();
    const tag = sim.world.playerTag(8);
    await stats.battlelog(tag);
    clock.advance(10_000);
    const polled = await stats.battlelog(tag, { fresh: true, priority: 'poll' });
    expect(polled.fetchedAt).toBe(T0 + 10_000);
    expect(calls()).toBe(2);
    expect((await stats.battlelog(tag)).fetchedAt).toBe(T0 + 10_000);
    expect(calls()).toBe(2);
  });
});

describe('single-flight', () => {
  it('N concurrent identical reads make one upstream call and share its answer', async () => {
    sim.faults.set({ latency: { minMs: 30, maxMs: 30 } });
    const stats = await service();
    const tag = sim.world.playerTag(9);
    const spellings = [tag, tag.slice(1), tag.toLowerCase(), `%23${tag.slice(1)}`];
    const all = await Promise.all(Array.from({ length: 24 }, (_, i) => stats.player(spellings[i % spellings.length]!)));
    expect(calls()).toBe(1);
    expect(new Set(all.map((f) => f.data)).size).toBe(1);
    expect(stats.stats()).toMatchObject({ reads: 24, upstreamCalls: 1, inflight: 0 });
  });

  it('concurrent reads of different resources are not merged', async () => {
    const stats = await service();
    await Promise.all([stats.player(sim.world.playerTag(1)), stats.player(sim.world.playerTag(2)), stats.battlelog(sim.world.playerTag(1))]);
    expect(calls()).toBe(3);
  });

  it('failures are shared too', async () => {
    sim.faults.set({ maintenance: true });
    const stats = await service();
    const results = await Promise.allSettled(Array.from({ length: 10 }, () => stats.eventRotation()));
    expect(results.every((r) => r.status === 'rejected' && r.reason instanceof MaintenanceError)).toBe(true);
    expect(calls()).toBe(1);
  });
});

describe('stale-if-error', () => {
  it('serves the last good copy through a maintenance window, leaves upstream alone, and recovers after it', async () => {
    const stats = await service();
    const seen = sim.world.playerTag(12);
    const unseen = sim.world.playerTag(13);
    const good = await stats.player(seen);
    expect(calls()).toBe(1);

    clock.advance(5 * MINUTE);
    const windowEnd = clock.now() + 20 * MINUTE;
    sim.faults.set({ maintenance: windowEnd });

    const during = await stats.player(seen);
    expect(during).toMatchObject({ stale: true, staleReason: 'maintenance', ageSeconds: 300, fetchedAt: T0 });
    expect(during.data).toBe(good.data);
    expect(calls()).toBe(2);
    // Nothing cached: the maintenance error, without asking upstream again so soon.
    await expect(stats.player(unseen)).rejects.toBeInstanceOf(MaintenanceError);
    clock.advance(10_000);
    expect(await stats.player(seen)).toMatchObject({ stale: true, ageSeconds: 310 });
    expect(calls()).toBe(2);

    // After the hold, one read probes upstream again (still in maintenance).
    clock.advance(25_000);
    expect(await stats.player(seen)).toMatchObject({ stale: true, ageSeconds: 335 });
    expect(calls()).toBe(3);

    clock.set(windowEnd + 1_000);
    const after = await stats.player(seen);
    expect(after).toMatchObject({ stale: false, ageSeconds: 0, fetchedAt: windowEnd + 1_000 });
    expect(after.staleReason).toBeUndefined();
    expect((await stats.player(unseen)).stale).toBe(false);
    expect(calls()).toBe(5);
    expect(stats.stats().staleServed).toBe(3);
  });

  it('hides a 5xx outage too, but not for longer than the retention', async () => {
    const stats = await service({ retainSeconds: 3600 });
    const tag = sim.world.clubTag(4);
    await stats.club(tag);
    sim.faults.set({ errorRate: 1 });
    clock.advance(10 * MINUTE);
    expect(await stats.club(tag)).toMatchObject({ stale: true, staleReason: 'unavailable', ageSeconds: 600 });
    clock.advance(2 * 3600_000);
    await expect(stats.club(tag)).rejects.toBeInstanceOf(UnavailableError);
  });

  it('does not hide an access problem (the operator must see it)', async () => {
    const kv = await stores();
    const tag = sim.world.playerTag(20);
    await (await service({ kv })).player(tag);
    clock.advance(10 * MINUTE);
    const denied = new StatsService({ upstream: upstream(['revoked-token']), cache: kv.namespace('cache'), now: () => clock.now() });
    await expect(denied.player(tag)).rejects.toBeInstanceOf(AccessDeniedError);
  });
});

describe('bounded memory', () => {
  it('the in-memory layer never holds more bytes than its bound; older entries come back from the store', async () => {
    const limit = 300_000;
    const stats = await service({ memoryBytes: limit });
    const tags = Array.from({ length: 20 }, (_, i) => sim.world.playerTag(i + 30));
    for (const t of tags) {
      await stats.player(t);
      expect(stats.stats().memoryBytes).toBeLessThanOrEqual(limit);
    }
    const held = stats.stats().memoryItems;
    // profiles of a few tens of KB each: some, not all, of the 20 fit
    expect(held).toBeGreaterThan(1);
    expect(held).toBeLessThan(20);
    expect(stats.stats()).toMatchObject({ memoryLimit: limit, upstreamCalls: 20 });
    // the oldest were evicted: they come from the store, not upstream
    for (const t of tags.slice(0, 20 - held)) await stats.player(t);
    expect(stats.stats()).toMatchObject({ upstreamCalls: 20, storeHits: 20 - held });
    expect(stats.stats().memoryBytes).toBeLessThanOrEqual(limit);
    expect(calls()).toBe(20);
  });
});

describe('rankings', () => {
  it('answers {region, timestamp, items} with the limit applied to one cached list', async () => {
    const stats = await service();
    const top10 = await stats.playerRankings('global', 10);
    expect(top10.data.region).toBe('global');
    expect(top10.data.timestamp).toBe(Math.floor(T0 / 1000));
    expect(top10.data.items.map((i) => i.rank)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    const all = await stats.playerRankings('GLOBAL');
    expect(all.data.items).toHaveLength(200);
    expect(calls()).toBe(1);

    const country = sim.world.countryCodes[1]!;
    const clubs = await stats.clubRankings(country.toLowerCase(), 3);
    expect(clubs.data.region).toBe(country);
    expect(plain(clubs.data.items)).toEqual(plain(sim.world.clubRankings(country, T0)!.slice(0, 3)));
    const brawler = await stats.brawlerRankings(country, 16000000, 5);
    expect(plain(brawler.data.items)).toEqual(plain(sim.world.brawlerRankings(country, 16000000, T0)!.slice(0, 5)));
    await expect(stats.playerRankings('USA')).rejects.toBeInstanceOf(NotFoundError);
    expect(calls()).toBe(3);
  });
});

describe('observers', () => {
  it('viewed for user look-ups (not polling); fetched once per upstream answer, not for cache hits', async () => {
    const viewed: string[] = [];
    const fetched: [string, string, number][] = [];
    const obs: CoreObserver = {
      viewed: (kind, tag) => viewed.push(`${kind}:${tag}`),
      fetched: (kind, key, _data, at) => fetched.push([kind, key, at]),
    };
    const stats = await service({ observers: [obs] });
    const p = sim.world.playerTag(3);
    const c = sim.world.clubTag(3);
    await stats.player(p);
    await stats.player(p);
    await stats.battlelog(p, { priority: 'poll' });
    await stats.club(c, { viewed: false });
    await stats.clubRankings('global');
    await stats.eventRotation();
    await stats.brawlers();
    expect(viewed).toEqual([`player:${p}`, `player:${p}`]);
    expect(fetched).toEqual([
      ['player', p, T0],
      ['battlelog', p, T0],
      ['club', c, T0],
      ['rankings', 'clubs:global', T0],
      ['rotation', 'rotation', T0],
      ['brawlers', 'brawlers', T0],
    ]);
  });

  it('peekFresh counts a view of the player or club its key names, each time, and reads nothing upstream', async () => {
    const viewed: string[] = [];
    const stats = await service({ observers: [{ viewed: (kind, tag) => viewed.push(`${kind}:${tag}`) }], ttlSeconds: 120 });
    const p = sim.world.playerTag(5);
    const c = sim.world.clubTag(5);
    const reads = [await stats.player(p), await stats.battlelog(p), await stats.club(c), await stats.brawlers()];
    viewed.length = 0;
    const before = calls();
    clock.advance(30_000);
    for (let i = 0; i < 2; i++) {
      for (const f of reads) expect(stats.peekFresh(f.key!, f.fetchedAt)).toEqual({ expiresAt: f.fetchedAt + 120_000, ageSeconds: 30 });
    }
    expect(viewed).toEqual([`player:${p}`, `player:${p}`, `club:${c}`, `player:${p}`, `player:${p}`, `club:${c}`]);
    // another fetch time is another copy; past the TTL nothing is fresh (and nothing is viewed)
    expect(stats.peekFresh(reads[0]!.key!, reads[0]!.fetchedAt - 1)).toBeUndefined();
    clock.advance(91_000);
    for (const f of reads) expect(stats.peekFresh(f.key!, f.fetchedAt)).toBeUndefined();
    expect(viewed).toHaveLength(6);
    expect(calls()).toBe(before);
  });

  it('an observer that throws does not break reads', async () => {
    const stats = await service();
    const off = stats.observe({
      viewed: () => {
        throw new Error('history is down');
      },
      fetched: async () => {
        throw new Error('history is down');
      },
    });
    expect((await stats.player(sim.world.playerTag(4))).stale).toBe(false);
    off();
  });
});

describe.runIf(RUN_REDIS)('on Redis', () => {
  it('a copy fetched by one instance serves another through Redis, stale included', async () => {
    const kv = await openKeyvStores(process.env.REDIS_URL!);
    cleanup.push(() => kv.close());
    // A namespace of its own, so parallel runs on the same Redis never share entries.
    const cache = kv.namespace(`cache-test-${process.pid}-${Date.now()}`);
    const tag = sim.world.playerTag(40);
    const a = await service({ cache });
    const first = await a.player(tag);
    const b = await service({ cache, memoryBytes: 0 });
    clock.advance(30_000);
    expect(plain((await b.player(tag)).data)).toEqual(plain(first.data));
    expect(calls()).toBe(1);
    clock.advance(10 * MINUTE);
    sim.faults.set({ maintenance: true });
    expect(await b.player(tag)).toMatchObject({ stale: true, staleReason: 'maintenance', ageSeconds: 630 });
    expect(await b.sweep()).toBe(0);
    await cache.clear();
  });
});
