/**
 * API keys, plans and rate limits over real HTTP: POST /generate-api-keys, using a key, wrong
 * passwords, invalid keys, premium endpoints, the free and keyed limits, X-Forwarded-For, and logs
 * that never show a secret.
 */
import { Writable } from 'node:stream';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { createHttpServer } from '../src/http/server.ts';
import { defineRoute, json, routeGroup } from '../src/http/route.ts';
import { z } from 'zod';
import { serve, type HttpClient } from './support/http.ts';
import { startWorld, type TestWorld } from './support/world.ts';
import { RUN_REDIS } from './support/stores.ts';

const T0 = Date.UTC(2026, 5, 1, 12, 0, 0);

/** A premium endpoint declared with the helper, as the history endpoints will be. */
const premiumRoutes = routeGroup('test-premium', [
  defineRoute({
    method: 'GET',
    url: '/test/players/:tag/log',
    operationId: 'testLog',
    summary: 'premium',
    tags: ['Players'],
    premium: true,
    params: { tag: z.string() },
    query: { limit: z.int().default(25) },
    response: z.unknown(),
    handler: async ({ auth, query }) => json({ plan: auth.kind === 'key' ? auth.key.plan.name : 'free', limit: query.limit }),
  }),
]);

function capture() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { lines, logger: pino({ level: 'debug' }, stream) };
}

async function generate(http: HttpClient, email: string, password: string, ip = '203.0.113.7') {
  return http.post(`/generate-api-keys?ip=${ip}&email=${encodeURIComponent(email)}&password=${encodeURIComponent(password)}`);
}

describe('keys and plans', () => {
  let w: TestWorld;
  let http: HttpClient;
  const log = capture();

  beforeAll(async () => {
    w = await startWorld({ startMs: T0, env: { RATE_LIMIT_FREE: '1000', RATE_LIMIT_KEY: '5000' } });
    const app = createHttpServer(w.core, { now: w.now, logger: log.logger });
    await app.register(premiumRoutes);
    http = await serve(app);
  });
  afterAll(async () => {
    await http?.close();
    await w?.close();
  });

  it('creates an account and a key on first use; the key raises the limit', async () => {
    const r = await generate(http, 'Dev@Example.com', 'correct horse');
    expect(r.status).toBe(200);
    expect(r.headers['cache-control']).toBe('no-store');
    const body = r.json();
    expect(body).toMatchObject({
      email: 'Dev@example.com',
      plan: 'developer',
      premium: true,
      accountCreated: true,
      rateLimit: { requests: 5000, windowSeconds: 60 },
    });
    expect(body.api_key).toMatch(/^starr_/);

    const free = await http.get('/brawlers');
    expect(free.headers['ratelimit-limit']).toBe('1000');
    expect(free.headers['ratelimit-policy']).toBe('1000;w=60');
    const keyed = await http.get(`/brawlers?api_key=${body.api_key}`);
    expect(keyed.status).toBe(200);
    expect(keyed.headers['ratelimit-limit']).toBe('5000');
    expect(keyed.headers['ratelimit-remaining']).toBe('4999');
    // each limit its own policy (made once per limit, server.ts `policyOf`)
    expect(keyed.headers['ratelimit-policy']).toBe('5000;w=60');
    expect((await http.get('/brawlers')).headers['ratelimit-policy']).toBe('1000;w=60');
  });

  it('issues another key for the right password and answers 401 for a wrong one', async () => {
    await generate(http, 'second@example.com', 'password-one');
    const again = await generate(http, 'SECOND@example.com', 'password-one', '2001:db8::1');
    expect(again.status).toBe(200);
    expect(again.json().accountCreated).toBe(false);
    const wrong = await generate(http, 'second@example.com', 'password-two');
    expect(wrong.status).toBe(401);
    expect(wrong.json()).toEqual({ detail: 'Wrong password for this email.' });
  });

  it('answers 422 like pydantic for missing, invalid email, invalid IP and short password', async () => {
    const none = await http.post('/generate-api-keys');
    expect(none.status).toBe(422);
    expect(none.json()).toEqual({
      detail: ['ip', 'email', 'password'].map((n) => ({ type: 'missing', loc: ['query', n], msg: 'Field required', input: null })),
    });
    const bad = await http.post('/generate-api-keys?ip=300.1.1.1&email=dev%40localhost&password=short');
    expect(bad.json()).toEqual({
      detail: [
        { type: 'ip_any_address', loc: ['query', 'ip'], msg: 'value is not a valid IPv4 or IPv6 address', input: '300.1.1.1' },
        {
          type: 'value_error',
          loc: ['query', 'email'],
          msg: 'value is not a valid email address: The part after the @-sign is not valid. It should have a period.',
          input: 'dev@localhost',
          ctx: { reason: 'The part after the @-sign is not valid. It should have a period.' },
        },
        { type: 'string_too_short', loc: ['query', 'password'], msg: 'String should have at least 8 characters', input: 'short', ctx: { min_length: 8 } },
      ],
    });
  });

  it('ignores a request body of any type', async () => {
    const r = await http.post(
      '/generate-api-keys?ip=203.0.113.9&email=body%40example.com&password=password1',
      { 'content-type': 'application/json' },
      '{not json',
    );
    expect(r.status).toBe(200);
  });

  it('answers 401 for an invalid key, on any endpoint that takes one', async () => {
    for (const key of ['nope', '', 'starr_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA']) {
      const r = await http.get(`/brawlers?api_key=${key}`);
      expect(r.status).toBe(401);
      expect(r.json()).toEqual({ detail: 'Invalid API key.' });
      expect(r.headers['ratelimit-limit']).toBe('1000');
    }
  });

  it('premium endpoints: 422 on ["query","api_key"] without a key, 200 with one, 403 on a plan without them', async () => {
    const without = await http.get('/test/players/ABC/log?limit=x');
    expect(without.status).toBe(422);
    expect(without.json()).toEqual({
      detail: [
        { type: 'missing', loc: ['query', 'api_key'], msg: 'Field required', input: null },
        { type: 'int_parsing', loc: ['query', 'limit'], msg: 'Input should be a valid integer, unable to parse string as an integer', input: 'x' },
      ],
    });

    const { api_key: key } = (await generate(http, 'premium@example.com', 'password1')).json();
    const ok = await http.get(`/test/players/ABC/log?api_key=${key}`);
    expect(ok.status).toBe(200);
    expect(ok.json()).toEqual({ plan: 'developer', limit: 25 });

    const { api_key: basicKey } = (await generate(http, 'basic@example.com', 'password1')).json();
    await w.core.keys.setPlan('basic@example.com', 'basic');
    const refused = await http.get(`/test/players/ABC/log?api_key=${basicKey}`);
    expect(refused.status).toBe(403);
    expect(refused.json()).toEqual({ detail: 'The basic plan of this API key does not include premium endpoints.' });
    expect((await http.get(`/brawlers?api_key=${basicKey}`)).status).toBe(200);
  });

  it('never writes a key, a password or an email into the logs', async () => {
    const r = await generate(http, 'secret.person@example.com', 'my secret password');
    const key = r.json().api_key as string;
    await http.get(`/brawlers?api_key=${key}`);
    const all = log.lines.join('');
    expect(all).toContain('/generate-api-keys');
    expect(all).toContain('api_key=***');
    for (const secret of [key, 'my%20secret%20password', 'my secret password', 'secret.person']) expect(all).not.toContain(secret);
  });

  it('writes one line per request: method, URL, route, status, time and where the answer came from', async () => {
    const lines = () =>
      log.lines
        .join('')
        .split('\n')
        .filter((l) => l.includes('/brawlers?one-line'))
        .map((l) => JSON.parse(l) as Record<string, unknown>);
    await http.get('/brawlers?one-line=1');
    await http.get('/brawlers?one-line=1');
    await http.get('/brawlers/1?one-line=1');
    const got = lines();
    expect(got).toHaveLength(2);
    for (const l of got) {
      expect(l).toMatchObject({ level: 30, msg: 'request', method: 'GET', url: '/brawlers?one-line=1', route: '/brawlers', status: 200, cache: 'hit' });
      expect(typeof l.ms).toBe('number');
    }
    const missing = log.lines.join('').split('\n').filter((l) => l.includes('/brawlers/1?one-line'));
    expect(missing).toHaveLength(1);
    expect(JSON.parse(missing[0]!)).toMatchObject({ route: '/brawlers/:brawlerId', status: 404 });
  });
});

describe('rate limits', () => {
  let w: TestWorld;
  let http: HttpClient;

  afterEach(async () => {
    await http?.close();
    await w?.close();
  });

  async function start(env: Record<string, string>) {
    w = await startWorld({ startMs: T0, env });
    http = await serve(createHttpServer(w.core, { now: w.now }));
  }

  it('limits the free plan per client IP: the N+1th request is a 429 with Retry-After', async () => {
    await start({ RATE_LIMIT_FREE: '3' });
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await http.get('/brawlers'));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 429]);
    expect(answers.map((a) => a.headers['ratelimit-remaining'])).toEqual(['2', '1', '0', '0']);
    for (const a of answers) {
      expect(a.headers['ratelimit-limit']).toBe('3');
      expect(a.headers['ratelimit-reset']).toBe('60');
    }
    const over = answers[3]!;
    expect(over.headers['retry-after']).toBe('60');
    expect(over.json()).toEqual({ detail: 'Rate limit exceeded: 3 requests per minute without an API key. Try again in 60 seconds.' });

    // Every response counts and carries the headers, errors included; a new window opens after a minute.
    expect((await http.get('/nope')).status).toBe(429);
    w.clock.advance(45_000);
    expect((await http.get('/brawlers')).headers['retry-after']).toBe('15');
    w.clock.advance(15_000);
    expect((await http.get('/brawlers')).status).toBe(200);
  });

  it('ignores X-Forwarded-For unless TRUST_PROXY is set', async () => {
    await start({ RATE_LIMIT_FREE: '1' });
    expect((await http.get('/brawlers', { 'x-forwarded-for': '198.51.100.1' })).status).toBe(200);
    expect((await http.get('/brawlers', { 'x-forwarded-for': '198.51.100.2' })).status).toBe(429);
  });

  it('counts per forwarded client IP behind a trusted proxy', async () => {
    await start({ RATE_LIMIT_FREE: '1', TRUST_PROXY: 'true' });
    expect((await http.get('/brawlers', { 'x-forwarded-for': '198.51.100.1' })).status).toBe(200);
    expect((await http.get('/brawlers', { 'x-forwarded-for': '198.51.100.2' })).status).toBe(200);
    expect((await http.get('/brawlers', { 'x-forwarded-for': '198.51.100.1' })).status).toBe(429);
  });

  it('limits a key on its own count, apart from the free plan of the same IP', async () => {
    await start({ RATE_LIMIT_FREE: '2', RATE_LIMIT_KEY: '3' });
    const { api_key: key } = (await generate(http, 'limits@example.com', 'password1')).json();
    const keyed = [];
    for (let i = 0; i < 4; i++) keyed.push(await http.get(`/brawlers?api_key=${key}`));
    expect(keyed.map((a) => a.status)).toEqual([200, 200, 200, 429]);
    expect(keyed[3]!.json().detail).toBe('Rate limit exceeded: 3 requests per minute for this API key. Try again in 60 seconds.');
    expect(keyed[3]!.headers['retry-after']).toBe('60');
    // The free bucket of this IP had one request (the key request above), so one is left.
    expect((await http.get('/brawlers')).status).toBe(200);
    expect((await http.get('/brawlers')).status).toBe(429);
  });

  it('keeps counting across a restart of the server', async () => {
    await start({ RATE_LIMIT_FREE: '2' });
    expect((await http.get('/brawlers')).status).toBe(200);
    await http.close();
    http = await serve(createHttpServer(w.core, { now: w.now }));
    expect((await http.get('/brawlers')).headers['ratelimit-remaining']).toBe('0');
    expect((await http.get('/brawlers')).status).toBe(429);
  });

  it('shows the limit on health checks without counting them', async () => {
    await start({ RATE_LIMIT_FREE: '2' });
    for (let i = 0; i < 5; i++) {
      const r = await http.get('/healthz');
      expect(r.status).toBe(200);
      expect(r.headers['ratelimit-remaining']).toBe('2');
    }
  });
});

describe.runIf(RUN_REDIS)('rate limits on Redis', () => {
  it('are shared by every instance of the server', async () => {
    const w = await startWorld({ startMs: T0, cacheUrl: process.env.REDIS_URL!, env: { RATE_LIMIT_FREE: '3', TRUST_PROXY: 'true' } });
    const a = await serve(createHttpServer(w.core, { now: w.now }));
    const b = await serve(createHttpServer({ ...w.core }, { now: w.now }));
    try {
      // A client address of its own, so runs never share a window in the shared Redis.
      const client = { 'x-forwarded-for': `10.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}` };
      const statuses = [];
      for (const server of [a, b, a, b]) statuses.push((await server.get('/', client)).status);
      expect(statuses).toEqual([200, 200, 200, 429]);
    } finally {
      await a.close();
      await b.close();
      await w.close();
    }
  });
});
