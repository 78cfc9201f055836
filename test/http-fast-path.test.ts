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

let w: TestWorld;
let limiter: RateLimiter;
let normal: Side;
let fast: Side;

beforeAll(async () => {
  w = await startWorld({ startMs: T0, env: { RATE_LIMIT_FREE: '100000', UPSTREAM_RETRIES: '0' } });
  limiter = createRateLimiter(w.core.stores, { now: w.now });
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
async function same(path: string, route: string, headers: Record<string, string> = {}): Promise<HttpAnswer> {
  await fast.http.get(path);
  await normal.http.get(path);
  const a = await normal.http.get(path, headers);
  const before = fast.answered();
  const counted = countOf(fast.metrics, route, a.status);
  const b = await fast.http.get(path, headers);
  expect(fast.answered(), `${path}: answered on the fast path`).toBe(before + 1);

  expect(b.status, path).toBe(a.status);
  expect(comparable(b), path).toEqual(comparable(a));
  expect(b.body.equals(a.body), path).toBe(true);
  // one limiter: the fast path counted its request like the normal path counts one
  expect(Number(b.headers['ratelimit-remaining']), path).toBe(Number(a.headers['ratelimit-remaining']) - 1);
  expect(requestLine(fast.lines.at(-1)), path).toEqual(requestLine(normal.lines.at(-1)));
  expect(countOf(fast.metrics, route, b.status), path).toBe(counted + 1);
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

  it('for a picture already drawn, and its 304 without drawing', async () => {
    const path = `/players/${w.sim.world.playerTag(5).slice(1)}/image?option=1&quality=low`;
    const b = await same(path, '/players/:tag/image');
    expect(b.headers['content-type']).toBe('image/png');
    const drawn = w.images.renders;
    const nm = await same(path, '/players/:tag/image', { 'if-none-match': b.headers.etag! });
    expect(nm.status).toBe(304);
    expect(w.images.renders).toBe(drawn);
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

describe('the fast path and the rate limit', () => {
  let small: TestWorld;
  let sharedLimiter: RateLimiter;
  let a: Side;
  let b: Side;
  beforeAll(async () => {
    small = await startWorld({ startMs: T0, env: { RATE_LIMIT_FREE: '6' } });
    sharedLimiter = createRateLimiter(small.core.stores, { now: small.now });
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
