/**
 * Caching headers, ETag/304, stale copies during a maintenance window of the simulated world, and
 * 503 when the game API is down with nothing cached.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cacheControl, PREPARED_BYTES, preparedBytes } from '../src/http/route.ts';
import { createHttpServer } from '../src/http/server.ts';
import { serve, type HttpClient } from './support/http.ts';
import { startWorld, type TestWorld } from './support/world.ts';

const T0 = Date.UTC(2026, 5, 1, 12, 0, 0);

let w: TestWorld;
let http: HttpClient;

beforeAll(async () => {
  w = await startWorld({ startMs: T0, env: { RATE_LIMIT_FREE: '100000', UPSTREAM_RETRIES: '0' } });
  http = await serve(createHttpServer(w.core, { now: w.now }));
});
afterAll(async () => {
  await http?.close();
  await w?.close();
});

describe('caching headers', () => {
  it('sends Cache-Control with the seconds left, Age and an ETag; 304 on If-None-Match', async () => {
    const path = `/players/${w.sim.world.playerTag(11).slice(1)}`;
    const first = await http.get(path);
    expect(first.status).toBe(200);
    expect(first.headers['cache-control']).toBe('public, max-age=120');
    expect(first.headers.age).toBe('0');
    const etag = first.headers.etag!;
    expect(etag).toMatch(/^"[\w-]+"$/);

    w.clock.advance(30_000);
    const later = await http.get(path);
    expect(later.headers['cache-control']).toBe('public, max-age=90');
    expect(later.headers.age).toBe('30');
    expect(later.headers.etag).toBe(etag);
    expect(later.text).toBe(first.text);

    for (const inm of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const nm = await http.get(path, { 'if-none-match': inm });
      expect(nm.status, inm).toBe(304);
      expect(nm.text).toBe('');
      expect(nm.headers.etag).toBe(etag);
      expect(nm.headers['ratelimit-limit']).toBeDefined();
    }
    expect((await http.get(path, { 'if-none-match': '"something-else"' })).status).toBe(200);
  });

  it('gives each parameter variant its own ETag', async () => {
    const tag = w.sim.world.playerTag(11).slice(1);
    const a = await http.get(`/players/${tag}/battlelog?limit=1`);
    const b = await http.get(`/players/${tag}/battlelog?limit=2`);
    expect(a.headers.etag).not.toBe(b.headers.etag);
    expect((await http.get(`/players/${tag}/battlelog?limit=1`, { 'if-none-match': b.headers.etag! })).status).toBe(200);
  });

  it('keeps at most PREPARED_BYTES of serialized bodies; one pushed out is made again, the same bytes and ETag', async () => {
    // profiles and battle logs of the test world's players (~30 KB each) until 1.5 × the bound was sent
    const paths = [...Array(300).keys()].flatMap((i) => [`/players/${w.sim.world.playerTag(i).slice(1)}`, `/players/${w.sim.world.playerTag(i).slice(1)}/battlelog`]);
    const path = (i: number) => paths[i]!;
    const first = await http.get(path(0));
    let sent = first.text.length;
    for (let i = 1; sent < 1.5 * PREPARED_BYTES; i++) {
      const r = await http.get(path(i));
      expect(r.status).toBe(200);
      sent += r.text.length;
    }
    expect(preparedBytes()).toBeGreaterThan(PREPARED_BYTES / 2);
    expect(preparedBytes()).toBeLessThanOrEqual(PREPARED_BYTES);
    w.clock.advance(5_000);
    const again = await http.get(path(0));
    expect(again.headers.age).toBe('5'); // the core's copy, not a new fetch
    expect(again.text).toBe(first.text);
    expect(again.headers.etag).toBe(first.headers.etag);
    expect((await http.get(path(0), { 'if-none-match': first.headers.etag! })).status).toBe(304);
  });

  it('serves fresh data with a new ETag once the copy expires', async () => {
    const later = 2 * 24 * 3600_000;
    const now = w.now();
    // A player whose trophies move in the next two days of the simulated world.
    const i = [...Array(40).keys()].find(
      (k) => w.sim.world.player(w.sim.world.playerTag(k + 20), now)!.trophies !== w.sim.world.player(w.sim.world.playerTag(k + 20), now + later)!.trophies,
    )!;
    const tag = w.sim.world.playerTag(i + 20);
    const first = await http.get(`/players/${tag.slice(1)}`);
    expect(first.json().trophies).toBe(w.sim.world.player(tag, now)!.trophies);
    w.clock.advance(later);
    const second = await http.get(`/players/${tag.slice(1)}`);
    expect(second.status).toBe(200);
    expect(second.headers.age).toBe('0');
    expect(second.headers['cache-control']).toBe('public, max-age=120');
    expect(second.json().trophies).toBe(w.sim.world.player(tag, now + later)!.trophies);
    expect(second.headers.etag).not.toBe(first.headers.etag);
  });
});

describe('when the game API is down', () => {
  it('serves the last good copy marked stale during a maintenance window', async () => {
    const path = `/clubs/${w.sim.world.clubTag(4).slice(1)}`;
    const fresh = await http.get(path);
    expect(fresh.status).toBe(200);
    w.clock.advance(10 * 60_000);
    w.sim.faults.set({ maintenance: true });
    try {
      const stale = await http.get(path);
      expect(stale.status).toBe(200);
      expect(stale.text).toBe(fresh.text);
      expect(stale.headers.warning).toBe('110 - "Response is Stale"');
      expect(stale.headers['x-cache']).toBe('STALE');
      expect(stale.headers['cache-control']).toBe('public, max-age=0');
      expect(Number(stale.headers.age)).toBeGreaterThanOrEqual(600);
    } finally {
      w.sim.faults.set({ maintenance: false });
    }
    // The core leaves the game API alone for a while after seeing maintenance.
    w.clock.advance(60_000);
    const back = await http.get(path);
    expect(back.headers['x-cache']).toBeUndefined();
    expect(back.headers.warning).toBeUndefined();
  });

  it('answers 503 with Retry-After when nothing is cached', async () => {
    w.sim.faults.set({ maintenance: true });
    try {
      const r = await http.get(`/players/${w.sim.world.playerTag(99).slice(1)}`);
      expect(r.status).toBe(503);
      expect(r.headers['retry-after']).toBe('120');
      expect(r.json()).toEqual({
        detail: "The game's API is in maintenance and no cached copy of this resource exists. Try again later.",
      });
      const ranking = await http.get('/rankings/JP/players');
      expect(ranking.status).toBe(503);
    } finally {
      w.sim.faults.set({ maintenance: false });
    }
    w.clock.advance(60_000);
    expect((await http.get(`/players/${w.sim.world.playerTag(99).slice(1)}`)).status).toBe(200);
  });
});

describe('cacheControl', () => {
  it('is `public, max-age=N` for every max-age, kept or made, in any order', () => {
    for (const n of [0, 1, 59, 3600, 3601, 86_400, 86_400, 86_399, 86_400, 120, 120, 7200, 2.5, -1, 7200]) expect(cacheControl(n)).toBe(`public, max-age=${n}`);
  });
});
