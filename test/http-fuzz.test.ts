/**
 * Property: whatever path, query string, encoding, method or header a client sends, the server
 * answers without a 500 (nor a 415: no route takes a body), and every error comes with a JSON body
 * `{"detail": ...}`. Below it, the defects earlier runs found, as examples.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpServer } from '../src/http/server.ts';
import { serve, type HttpClient } from './support/http.ts';
import { startWorld, type TestWorld } from './support/world.ts';

let w: TestWorld;
let http: HttpClient;

beforeAll(async () => {
  w = await startWorld({ startMs: Date.UTC(2026, 5, 1), env: { RATE_LIMIT_FREE: '1000000', UPSTREAM_RETRIES: '0' } });
  http = await serve(createHttpServer(w.core, { now: w.now }));
});
afterAll(async () => {
  await http?.close();
  await w?.close();
});

const hex = fc.integer({ min: 0, max: 255 }).map((n) => `%${n.toString(16).padStart(2, '0').toUpperCase()}`);
/** Characters of a request line: mostly printable ASCII, sometimes raw latin1 bytes (which Node's parser refuses). */
const rawChar = fc
  .oneof(
    { weight: 12, arbitrary: fc.integer({ min: 0x21, max: 0x7e }) },
    { weight: 1, arbitrary: fc.integer({ min: 0x80, max: 0xff }) },
  )
  .filter((c) => c !== 0x3f && c !== 0x23)
  .map((c) => String.fromCharCode(c));

const segment = fc.oneof(
  fc.constantFrom('players', 'clubs', 'rankings', 'brawlers', 'game', 'battlelog', 'global', 'kr', 'XX', 'players.csv', 'brawlers.csv', '16000000', '-1', '-16000000', '..', '.', ''),
  fc.constantFrom('%23', '%2F', '%', '%%', '%zz', '%E0%A4%A', '%C3%28', '%F0%9F%98%80', '%00', '%23%23'),
  fc.array(fc.oneof(rawChar, hex), { minLength: 1, maxLength: 12 }).map((a) => a.join('')),
  // real tags of the world, so requests also reach the core and the simulated API
  fc.integer({ min: 0, max: 60 }).map((i) => `%23${w.sim.world.playerTag(i).slice(1)}`),
);

/** Paths shaped like the API's routes with arbitrary parameters, and paths of anything at all. */
const template = fc.constantFrom(
  '/players/$/battlelog',
  '/players/$',
  '/clubs/$',
  '/brawlers/$',
  '/rankings/$/players',
  '/rankings/$/clubs',
  '/rankings/$/brawlers/$',
  '/game/$',
  '/generate-api-keys',
  '/game',
  '/',
  '/openapi.json',
  '/healthz',
);
const path = fc.oneof(
  fc.tuple(template, segment, segment).map(([t, a, b]) => t.replace('$', a).replace('$', b)),
  fc.array(segment, { minLength: 0, maxLength: 5 }).map((s) => `/${s.join('/')}`),
);

const queryValue = fc.oneof(
  fc.constantFrom('', '1', '-1', '25', '%205%20', '+5+', '5.0', '5.5', '1_000', '99999999999999999999999', 'abc', '%', '%zz', '+', '%2B', 'global'),
  fc.array(fc.oneof(rawChar.filter((c) => c !== '&'), hex), { maxLength: 10 }).map((a) => a.join('')),
);
const queryKey = fc.constantFrom('limit', 'api_key', 'name', 'offset', 'ip', 'email', 'password', 'option', 'x', '', 'limit%00', 'api%5Fkey');
const query = fc.array(fc.tuple(queryKey, queryValue, fc.boolean()), { maxLength: 5 }).map((pairs) =>
  pairs.length === 0 ? '' : `?${pairs.map(([k, v, eq]) => (eq ? `${k}=${v}` : k)).join('&')}`,
);

const method = fc.constantFrom('GET', 'GET', 'GET', 'POST', 'HEAD', 'DELETE', 'OPTIONS', 'PUT', 'PATCH');
const headers = fc.record(
  {
    'if-none-match': fc.constantFrom('*', '"x"', 'W/"y"', '', ',,,'),
    'content-type': fc.constantFrom('application/json', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'nonsense', 'foo', ''),
    'x-forwarded-for': fc.constantFrom('1.2.3.4', 'garbage', ''),
    accept: fc.constantFrom('text/html', 'application/xml', '*/*'),
  },
  { requiredKeys: [] },
);
const body = fc.option(fc.constantFrom('{', '{"a":1}', 'a=b', '\u0000\u0001', 'x'.repeat(70_000)), { nil: undefined });

describe('the server under arbitrary requests', () => {
  it('never answers 500 and always explains an error in JSON', async () => {
    await fc.assert(
      fc.asyncProperty(method, path, query, headers, body, async (m, p, q, h, b) => {
        const sendBody = b !== undefined && m !== 'GET' && m !== 'HEAD';
        const { 'content-type': contentType, ...rest } = h;
        const r = await http.call(m, p + q, sendBody && contentType ? { ...rest, 'content-type': contentType } : rest, sendBody ? b : undefined);
        expect(r.status, `${m} ${p}${q}`).toBeLessThan(500);
        expect(r.status, `${m} ${p}${q} content-type ${contentType}`).not.toBe(415);
        if (r.status >= 400 && m !== 'HEAD') {
          expect(r.headers['content-type'], `${m} ${p}${q}`).toMatch(/^application\/json/);
          expect(r.json(), `${m} ${p}${q}`).toHaveProperty('detail');
        } else if (m !== 'HEAD' && r.status !== 304 && String(r.headers['content-type']).startsWith('application/json')) {
          expect(() => r.json()).not.toThrow();
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('defects found by fuzzing', () => {
  it('answers a negative brawler id 404 like /brawlers/0, without asking the game API', async () => {
    const zero = await http.get('/brawlers/0');
    expect(zero.status).toBe(404);
    const before = w.sim.faults.requests;
    for (const path of ['/brawlers/-1', '/brawlers/-16000000', '/rankings/global/brawlers/-1', '/rankings/kr/brawlers/-1']) {
      const r = await http.get(path);
      expect(r.status, path).toBe(404);
      expect(r.json(), path).toEqual(zero.json());
    }
    expect(w.sim.faults.requests).toBe(before);
  });

  it.each(['foo', 'nonsense', '', 'text/plain', 'application/json'])(
    'issues a key whatever Content-Type a POST /generate-api-keys names (%j), as FastAPI ignores it',
    async (contentType) => {
      const email = `fuzz-${Math.random().toString(36).slice(2)}@example.com`;
      const ok = await http.post(`/generate-api-keys?ip=203.0.113.7&email=${email}&password=a-long-password`, { 'content-type': contentType });
      expect(ok.status, ok.text).toBe(200);
      expect(ok.json().api_key).toMatch(/^starr_/);
      const withBody = await http.post('/generate-api-keys', { 'content-type': contentType }, '{"ip":"203.0.113.7"}');
      expect(withBody.status).toBe(422);
      expect(withBody.json().detail.map((d: { loc: string[] }) => d.loc.join('.'))).toEqual(['query.ip', 'query.email', 'query.password']);
    },
  );
});
