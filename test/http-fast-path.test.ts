/**
 * The fast path (src/http/fast-path.ts) answers exactly what the normal path answers: two servers
 * on one core and one rate limiter, one with the fast path and one without, asked the same things
 * over real HTTP. Status, headers (names, order and values), body, the log line, the metrics and
 * the rate-limit count must match for every kind of cached GET, conditional or not.
 */
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MetricsRegistry } from '../src/http/metrics.ts';
import { createHttpServer } from '../src/http/server.ts';
import { createRateLimiter, type RateLimiter } from '../src/store/ratelimit.ts';
import { serve, type HttpAnswer, type HttpClient } from './support/http.ts';
import { startWorld, type TestWorld } from './support/world.ts';

const T0 = Date.UTC(2026, 5, 1, 12, 0, 0);

interface Side {
  http: HttpClient;
  lines: Record<string, unknown>[];
  metrics: MetricsRegistry;
  answered(): number;
  /** fast-path answers made without calling the handler (a copy still fresh in the core's memory) */
  fromMemo(): number;
}

function side(w: TestWorld, limiter: RateLimiter, fastPath: boolean): Promise<Side> {
  const lines: Record<string, unknown>[] = [];
  const logger = pino({ level: 'info', base: undefined }, { write: (s: string) => void lines.push(JSON.parse(s) as Record<string, unknown>) });
  const metrics = new MetricsRegistry();
  const app = createHttpServer(w.core, { now: w.now, limiter, logger, metrics, fastPath });
  return serve(app).then((http) => ({ http, lines, metrics, answered: () => app.starr.hot?.answered ?? 0, fromMemo: () => app.starr.hot?.fromMemo ?? 0 }));
}

/** Headers as sent, but the date (the wall clock's) and the count left (one less on the second). */
function comparable(a: HttpAnswer): [string, unknown][] {
  return Object.entries(a.headers).filter(([k]) => k !== 'date' && k !== 'ratelimit-remaining');
}

const requestLine = (line: Record<string, unknown> | undefined) => {
  const { ms, time, ...rest } = line ?? {};
  expect(typeof ms).toBe('number');
  expect(typeof time).toBe('number');
  return rest;
};

const countOf = (m: MetricsRegistry, route: string, status: number) =>
  m.counter('starr_http_requests_total', '').get({ route, method: 'GET', status: String(status) });

interface Pair {
  normal: Side;
  fast: Side;
}

/**
 * A rate limiter on the world's virtual clock that writes its counters to the store only when
 * closed. Its timer (every second of real time) also forgets windows that are over on that clock,
 * and the fast path answers only a client whose window is in memory: a tick of it between a test's
 * jump of the clock past the window and its next request sent that request through fastify instead
 * (a failed CI run, 2026-11-29), as it would in a service, but not what these tests assert.
 */
const heldLimiter = (world: TestWorld): RateLimiter => createRateLimiter(world.core.stores, { now: world.now, flushMs: 24 * 3_600_000 });

let w: TestWorld;
let limiter: RateLimiter;
let normal: Side;
let fast: Side;

beforeAll(async () => {
  w = await startWorld({ startMs: T0, env: { RATE_LIMIT_FREE: '100000', UPSTREAM_RETRIES: '0' } });
  limiter = heldLimiter(w);
  normal = await side(w, limiter, false);
  fast = await side(w, limiter, true);
});
afterAll(async () => {
  await normal?.http.close();
  await fast?.http.close();
  await limiter?.close();
  await w?.close();
});

/**
 * Asks both servers for `path` (the fast one first once, so it remembers the URL), then once each,
 * and checks the fast server answered the second time on its fast path with what the normal one said.
 */
async function same(path: string, route: string, headers: Record<string, string> = {}, pair: Pair = { normal, fast }): Promise<HttpAnswer> {
  await pair.fast.http.get(path);
  return again(path, route, headers, pair);
}

/** `same` without asking the fast server first: it has answered `path` before. */
async function again(path: string, route: string, headers: Record<string, string> = {}, pair: Pair = { normal, fast }): Promise<HttpAnswer> {
  const { normal: n, fast: f } = pair;
  await n.http.get(path);
  const a = await n.http.get(path, headers);
  const before = f.answered();
  const counted = countOf(f.metrics, route, a.status);
  const b = await f.http.get(path, headers);
  expect(f.answered(), `${path}: answered on the fast path`).toBe(before + 1);

  expect(b.status, path).toBe(a.status);
  expect(comparable(b), path).toEqual(comparable(a));
  expect(b.body.equals(a.body), path).toBe(true);
  // one limiter: the fast path counted its request like the normal path counts one
  expect(Number(b.headers['ratelimit-remaining']), path).toBe(Number(a.headers['ratelimit-remaining']) - 1);
  expect(requestLine(f.lines.at(-1)), path).toEqual(requestLine(n.lines.at(-1)));
  expect(countOf(f.metrics, route, b.status), path).toBe(counted + 1);
  return b;
}

describe('the fast path answers what the normal path answers', () => {
  it('for cached JSON of every shape: catalogue, one brawler, player, battle log, club, rankings', async () => {
    const tag = w.sim.world.playerTag(3).slice(1);
    const club = w.sim.world.clubTag(2).slice(1);
    const cases: [string, string][] = [
      ['/brawlers', '/brawlers'],
      ['/brawlers/16000001', '/brawlers/:brawlerId'],
      [`/players/${tag}`, '/players/:tag'],
      [`/players/%23${tag.toLowerCase()}`, '/players/:tag'],
      [`/players/${tag}/battlelog?limit=3`, '/players/:tag/battlelog'],
      [`/clubs/${club}`, '/clubs/:tag'],
      ['/rankings/global/players?limit=5', '/rankings/:countryCode/players'],
      ['/rankings/FR/clubs', '/rankings/:countryCode/clubs'],
    ];
    for (const [path, route] of cases) {
      const memo = fast.fromMemo();
      const b = await same(path, route);
      // the second time, and every time after, without calling the handler
      expect(fast.fromMemo(), path).toBe(memo + 1);
      expect(b.status, path).toBe(200);
      expect(fast.lines.at(-1)).toMatchObject({ cache: 'hit', status: 200, route });
      // and the 304 of a matching If-None-Match, without a body
      const nm = await same(path, route, { 'if-none-match': b.headers.etag! });
      expect(nm.status, path).toBe(304);
      expect(nm.body.length).toBe(0);
      expect(fast.fromMemo(), path).toBe(memo + 3);
    }
  });

  it('answers a copy still fresh from memory with its age now, and one past its freshness through the handler', async () => {
    const path = `/players/${w.sim.world.playerTag(6).slice(1)}`;
    const first = await same(path, '/players/:tag');
    let memo = fast.fromMemo();
    w.clock.advance(30_000);
    const b = await same(path, '/players/:tag');
    expect(fast.fromMemo()).toBe(memo + 2);
    expect([b.headers.age, b.headers['cache-control'], b.headers.etag]).toEqual(['30', 'public, max-age=90', first.headers.etag]);
    expect(b.headers['last-modified']).toBe(first.headers['last-modified']);

    // past the TTL: the handler refreshes it (the fast path still answers, not from the memo)
    w.clock.advance(100_000);
    memo = fast.fromMemo();
    const answered = fast.answered();
    const c = await fast.http.get(path);
    expect([fast.answered(), fast.fromMemo()]).toEqual([answered + 1, memo]);
    expect(c.status).toBe(200);
    expect([c.headers.age, c.headers['cache-control']]).toEqual(['0', 'public, max-age=120']);
    expect(c.headers['last-modified']).not.toBe(first.headers['last-modified']);
    expect(fast.lines.at(-1)).toMatchObject({ cache: 'miss', status: 200 });

    // the new copy is the memo now, the same answer as the normal path's
    const d = await same(path, '/players/:tag');
    expect(fast.fromMemo()).toBe(memo + 2);
    expect(d.headers['last-modified']).toBe(c.headers['last-modified']);
    expect(d.body.equals(c.body)).toBe(true);
  });

  it('with the age and max-age of the moment it answers', async () => {
    const path = `/players/${w.sim.world.playerTag(4).slice(1)}`;
    await same(path, '/players/:tag');
    w.clock.advance(45_000);
    const memo = fast.fromMemo();
    const b = await same(path, '/players/:tag');
    expect(fast.fromMemo()).toBe(memo + 2);
    expect(b.headers.age).toBe('45');
    expect(b.headers['cache-control']).toBe('public, max-age=75');
  });

  it('for a picture already drawn, and its 304 without drawing, without calling the handler', async () => {
    const cases: [string, string][] = [
      [`/players/${w.sim.world.playerTag(5).slice(1)}/image?option=1&quality=low`, '/players/:tag/image'],
      [`/clubs/${w.sim.world.clubTag(3).slice(1)}/image?quality=low`, '/clubs/:tag/image'],
    ];
    for (const [path, route] of cases) {
      const memo = fast.fromMemo();
      const b = await same(path, route);
      expect(fast.fromMemo(), path).toBe(memo + 1);
      expect(b.headers['content-type']).toBe('image/png');
      expect(fast.lines.at(-1)).toMatchObject({ cache: 'hit', status: 200, route });
      const drawn = w.images.renders;
      const nm = await same(path, route, { 'if-none-match': b.headers.etag! });
      expect(nm.status).toBe(304);
      expect(nm.body.length).toBe(0);
      expect(fast.fromMemo(), path).toBe(memo + 3);
      expect(w.images.renders).toBe(drawn);
    }
  });

  it('for a chart, through its handler every time (a picture of recorded history has no memo)', async () => {
    const path = `/players/${w.sim.world.playerTag(5).slice(1)}/chart`;
    const memo = fast.fromMemo();
    const b = await same(path, '/players/:tag/chart');
    expect(b.headers['content-type']).toBe('image/png');
    expect(fast.fromMemo()).toBe(memo);
  });

  it('logs the URL without secrets', async () => {
    const path = `/brawlers?email=someone%40example.com`;
    await same(path, '/brawlers');
    expect(fast.lines.at(-1)).toMatchObject({ url: '/brawlers?email=***' });
  });

  it('leaves requests with an API key, HEAD and unknown URLs to fastify', async () => {
    const made = await normal.http.post('/generate-api-keys?ip=203.0.113.7&email=fast%40example.com&password=a-long-password');
    const key = (made.json() as { api_key: string }).api_key;
    const before = fast.answered();
    for (let i = 0; i < 2; i++) {
      const r = await fast.http.get(`/brawlers?api_key=${key}`);
      expect(r.status).toBe(200);
      expect(r.headers['ratelimit-limit']).toBe(String(w.core.config.RATE_LIMIT_KEY));
      expect((await fast.http.call('HEAD', '/brawlers')).status).toBe(200);
      expect((await fast.http.get('/nowhere')).status).toBe(404);
    }
    expect(fast.answered()).toBe(before);
    expect(fast.lines.at(-3)).toMatchObject({ url: '/brawlers?api_key=***', route: '/brawlers' });
  });
});

describe('a picture answered from the memo', () => {
  // a picture cache of 1 MB: a few pictures of other players push one out
  let pw: TestWorld;
  let pictures: Pair;
  let pl: RateLimiter;
  const route = '/players/:tag/image';
  let tag: string;
  let path: string;
  beforeAll(async () => {
    pw = await startWorld({ startMs: T0, env: { RATE_LIMIT_FREE: '100000', UPSTREAM_RETRIES: '0', RENDER_CACHE_MB: '1' } });
    pl = heldLimiter(pw);
    pictures = { normal: await side(pw, pl, false), fast: await side(pw, pl, true) };
    tag = pw.sim.world.playerTag(7);
    path = `/players/${tag.slice(1)}/image`;
  });
  afterAll(async () => {
    await pictures?.normal.http.close();
    await pictures?.fast.http.close();
    await pl?.close();
    await pw?.close();
  });

  /** The fast server's GET of `path`, and whether it came from the memo. */
  const fastGet = async (headers: Record<string, string> = {}) => {
    const { fast: f } = pictures;
    const [answered, memo] = [f.answered(), f.fromMemo()];
    const r = await f.http.get(path, headers);
    expect(f.answered()).toBe(answered + 1);
    return { r, memo: f.fromMemo() === memo + 1 };
  };

  it('counts the reads the handler counts, and answers a 304 from the memo', async () => {
    const first = await same(path, route, {}, pictures);
    const { fast: f, normal: n } = pictures;
    const reads = () => {
      const s = pw.stats.stats();
      return [s.reads, s.memoryHits];
    };
    const r0 = reads();
    await n.http.get(path);
    const r1 = reads();
    const { r, memo } = await fastGet();
    expect(memo).toBe(true);
    expect(r.body.equals(first.body)).toBe(true);
    const r2 = reads();
    expect([r2[0]! - r1[0]!, r2[1]! - r1[1]!]).toEqual([r1[0]! - r0[0]!, r1[1]! - r0[1]!]);
    expect(r1[1]! - r0[1]!).toBe(1);
    const memo304 = f.fromMemo();
    const nm = await again(path, route, { 'if-none-match': first.headers.etag! }, pictures);
    expect([nm.status, f.fromMemo()]).toEqual([304, memo304 + 1]);
  });

  it('goes back to the handler once the copy was refreshed, and a changed profile is a new picture', async () => {
    const before = (await fastGet()).r;
    const t0 = JSON.stringify(pw.sim.world.player(tag, pw.now()));
    pw.clock.advance(6 * 3_600_000);
    // the simulated player has played meanwhile: a new version of the profile
    expect(JSON.stringify(pw.sim.world.player(tag, pw.now()))).not.toBe(t0);
    const drawn = pw.images.renders;
    const { r, memo } = await fastGet();
    expect(memo).toBe(false);
    expect([r.status, r.headers.age, r.headers['cache-control']]).toEqual([200, '0', 'public, max-age=120']);
    expect(r.headers.etag).not.toBe(before.headers.etag);
    expect(r.body.equals(before.body)).toBe(false);
    expect(pw.images.renders).toBe(drawn + 1);
    expect(pictures.fast.lines.at(-1)).toMatchObject({ cache: 'miss', status: 200 });
    // the new picture is the memo now
    const memo2 = pictures.fast.fromMemo();
    const b = await again(path, route, {}, pictures);
    expect(pictures.fast.fromMemo()).toBe(memo2 + 1);
    expect(b.headers.etag).toBe(r.headers.etag);
  });

  it('keeps a picture answered from the memo in the picture cache, as a hit through the handler does', async () => {
    await fastGet();
    // other players' pictures, more than the picture cache holds, each followed by a hit from the memo
    let bytes = 0;
    for (let i = 40; bytes <= 1024 * 1024; i++) {
      bytes += (await pictures.normal.http.get(`/players/${pw.sim.world.playerTag(i).slice(1)}/image`)).body.length;
      const drawn = pw.images.renders;
      expect((await fastGet()).memo).toBe(true);
      expect(pw.images.renders).toBe(drawn);
    }
  });

  it('goes back to the handler once the picture was dropped from the picture cache (which reads it back from its file)', async () => {
    const before = (await fastGet()).r;
    expect(before.body.length).toBeGreaterThan(100_000);
    // other players' pictures, more than the picture cache holds after this one
    let bytes = 0;
    for (let i = 20; bytes <= 1024 * 1024; i++) {
      const other = await pictures.normal.http.get(`/players/${pw.sim.world.playerTag(i).slice(1)}/image`);
      expect(other.status).toBe(200);
      bytes += other.body.length;
    }
    const drawn = pw.images.renders;
    const { r, memo } = await fastGet();
    expect(memo).toBe(false);
    // not in memory any more, but kept as a file (RENDER_DISK_CACHE_MB): read back, not drawn
    expect(pw.images.renders).toBe(drawn);
    expect(r.headers.etag).toBe(before.headers.etag);
    expect(r.body.equals(before.body)).toBe(true);
    const memo2 = pictures.fast.fromMemo();
    await again(path, route, {}, pictures);
    expect(pictures.fast.fromMemo()).toBe(memo2 + 1);
  });

  it('never answers a stale copy from the memo', async () => {
    const fresh = (await fastGet()).r;
    pw.clock.advance(121_000);
    pw.sim.faults.set({ maintenance: true });
    try {
      const { r, memo } = await fastGet();
      expect(memo).toBe(false);
      expect([r.status, r.headers['x-cache'], r.headers['cache-control'], r.headers.age]).toEqual([200, 'STALE', 'public, max-age=0', '121']);
      expect(r.body.equals(fresh.body)).toBe(true);
      // a stale answer leaves no memo: the next is the handler's again, the same as the normal path's
      const memo2 = pictures.fast.fromMemo();
      const b = await again(path, route, {}, pictures);
      expect(pictures.fast.fromMemo()).toBe(memo2);
      expect(b.headers.warning).toBe('110 - "Response is Stale"');
    } finally {
      pw.sim.faults.set({ maintenance: false });
    }
  });
});

describe('the fast path and the rate limit', () => {
  let small: TestWorld;
  let sharedLimiter: RateLimiter;
  let a: Side;
  let b: Side;
  beforeAll(async () => {
    small = await startWorld({ startMs: T0, env: { RATE_LIMIT_FREE: '6' } });
    sharedLimiter = heldLimiter(small);
    a = await side(small, sharedLimiter, false);
    b = await side(small, sharedLimiter, true);
  });
  afterAll(async () => {
    await a?.http.close();
    await b?.http.close();
    await sharedLimiter?.close();
    await small?.close();
  });

  it('counts every answer once and leaves the 429 to fastify, with the same body and headers', async () => {
    const seen: [number, string][] = [];
    for (let i = 0; i < 4; i++) {
      const r = await b.http.get('/brawlers');
      seen.push([r.status, String(r.headers['ratelimit-remaining'])]);
    }
    expect(b.answered()).toBe(3);
    const refusedFast = await b.http.get('/brawlers');
    const refusedNormal = (await Promise.all([a.http.get('/brawlers'), a.http.get('/brawlers')]))[1]!;
    expect(seen).toEqual([
      [200, '5'],
      [200, '4'],
      [200, '3'],
      [200, '2'],
    ]);
    expect(refusedFast.status).toBe(200);
    expect(refusedFast.headers['ratelimit-remaining']).toBe('1');
    expect(refusedNormal.status).toBe(429);
    const over = await b.http.get('/brawlers');
    expect(over.status).toBe(429);
    expect(over.headers['retry-after']).toBe(refusedNormal.headers['retry-after']);
    expect(comparable(over)).toEqual(comparable(refusedNormal));
    expect(over.text).toBe(refusedNormal.text);
    expect(b.answered()).toBe(4);
    small.clock.advance(60_000);
    const again = await b.http.get('/brawlers');
    expect([again.status, again.headers['ratelimit-remaining']]).toEqual([200, '5']);
    expect(b.answered()).toBe(5);
  });
});
