/** /openapi.json, /docs, /healthz, /readyz and /metrics. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { constants, PerformanceObserver, type EntryType } from 'node:perf_hooks';
import Ajv2020 from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endpointLabel, MetricsRegistry } from '../src/http/metrics.ts';
import { createHttpServer } from '../src/http/server.ts';
import { serve, type HttpClient } from './support/http.ts';
import { startWorld, type TestWorld } from './support/world.ts';

const T0 = Date.UTC(2026, 5, 1, 12, 0, 0);

let w: TestWorld;
let http: HttpClient;
const metrics = new MetricsRegistry();

beforeAll(async () => {
  w = await startWorld({ startMs: T0, env: { RATE_LIMIT_FREE: '100000', UPSTREAM_RETRIES: '0' }, metrics });
  http = await serve(createHttpServer(w.core, { now: w.now, metrics }));
});
afterAll(async () => {
  await http?.close();
  await w?.close();
});

type Json = Record<string, any>;

describe('/openapi.json', () => {
  let doc: Json;
  beforeAll(async () => {
    const r = await http.get('/openapi.json');
    expect(r.status).toBe(200);
    doc = r.json();
  });

  it('is OpenAPI 3.1.0, version 1.2.0, with every endpoint of the interface served here', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe('1.2.0');
    expect(doc.info.description).toMatch(/not affiliated/);
    const ops = Object.entries(doc.paths as Json).flatMap(([p, m]) => Object.keys(m as Json).map((k) => `${k.toUpperCase()} ${p}`));
    for (const op of [
      'POST /generate-api-keys',
      'GET /brawlers',
      'GET /brawlers/{brawlerId}',
      'GET /players/{tag}',
      'GET /players/{tag}/battlelog',
      'GET /clubs/{tag}',
      'GET /rankings/{countryCode}/clubs',
      'GET /rankings/{countryCode}/players',
      'GET /rankings/{countryCode}/brawlers/{brawlerId}',
      'GET /game',
      'GET /game/{file}',
    ]) {
      expect(ops).toContain(op);
    }
    expect(ops.some((o) => o.includes('openapi.json') || o.includes('/docs'))).toBe(false);
  });

  it("documents parameters as the interface declares them, api_key included", () => {
    const battlelog = doc.paths['/players/{tag}/battlelog'].get;
    expect(battlelog.parameters.map((p: Json) => [p.name, p.in, p.required])).toEqual([
      ['tag', 'path', true],
      ['limit', 'query', false],
      ['api_key', 'query', false],
    ]);
    expect(battlelog.parameters[1].schema).toMatchObject({ type: 'integer', default: 25 });
    const keys = doc.paths['/generate-api-keys'].post;
    expect(keys.parameters.map((p: Json) => [p.name, p.required])).toEqual([
      ['ip', true],
      ['email', true],
      ['password', true],
    ]);
    expect(keys.parameters[2].schema.minLength).toBe(8);
    expect(doc.paths['/game'].get.parameters).toBeUndefined();
    expect(doc.paths['/game'].get.responses['422']).toBeUndefined();
  });

  it('describes every response body from the same schemas, errors included', () => {
    const rankings = doc.paths['/rankings/{countryCode}/clubs'].get.responses;
    expect(rankings['200'].content['application/json'].schema.$ref).toBe('#/components/schemas/ClubRankingResponse');
    expect(rankings['422'].content['application/json'].schema.$ref).toBe('#/components/schemas/HTTPValidationError');
    expect(rankings['429'].headers['Retry-After']).toBeDefined();
    expect(rankings['503']).toBeDefined();
    const envelope = doc.components.schemas.ClubRankingResponse;
    expect(envelope.required).toEqual(['region', 'timestamp', 'items']);
    expect(envelope.properties.items.items.$ref).toBe('#/components/schemas/ClubRankingItem');
    expect(doc.components.schemas.ClubRankingItem.required.sort()).toEqual(['badgeId', 'memberCount', 'name', 'rank', 'tag', 'trophies']);
    expect(doc.components.schemas.ValidationError.required).toEqual(['loc', 'msg', 'type']);
    expect(doc.paths['/game/{file}'].get.responses['200'].content['text/csv']).toBeDefined();
    const refs = JSON.stringify(doc).match(/#\/components\/schemas\/[\w]+/g)!;
    for (const ref of new Set(refs)) expect(doc.components.schemas[ref.split('/').pop()!], ref).toBeDefined();
  });
});

describe('/docs', () => {
  it('is Swagger UI over the same document, every script and stylesheet served here (no CDN)', async () => {
    const r = await http.get('/docs');
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(r.text).toContain('<title>Starr Stats API reference</title>');
    const assets = [...r.text.matchAll(/<(?:script src|link rel="stylesheet" type="text\/css" href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(assets).toContain('/docs/static/swagger-ui-bundle.js');
    expect(assets).toContain('/docs/static/swagger-initializer.js');
    for (const asset of assets) {
      expect(asset, 'served by this server').toMatch(/^\/docs\//);
      const a = await http.get(asset);
      expect(a.status, asset).toBe(200);
      expect(a.headers['content-type'], asset).toMatch(asset.endsWith('.js') ? /^application\/javascript/ : /^text\/css/);
    }
    expect((await http.get('/docs/static/swagger-initializer.js')).text).toContain('"docExpansion":"list"');
    expect((await http.get('/docs/json')).json()).toEqual((await http.get('/openapi.json')).json());
  });

  it('costs nothing of the rate limit to read (the page and its scripts are checked, not counted)', async () => {
    const remaining = async (path: string) => Number((await http.get(path)).headers['ratelimit-remaining']);
    const before = await remaining('/docs');
    expect(await remaining('/docs/static/swagger-ui.css')).toBe(before);
    expect(await remaining('/docs')).toBe(before);
    expect(await remaining('/brawlers')).toBe(before - 1);
  });
});

/** Makes short-lived garbage on this thread until V8 has run a minor collection of it; false if none came. */
async function minorCollection(): Promise<boolean> {
  let seen = false;
  const observer = new PerformanceObserver((list) => {
    if (list.getEntries().some((e) => (e as unknown as { detail: { kind: number } }).detail.kind === constants.NODE_PERFORMANCE_GC_MINOR)) seen = true;
  });
  observer.observe({ entryTypes: ['gc' as EntryType] });
  try {
    for (let round = 0; round < 1000 && !seen; round++) {
      let garbage: object[] = [];
      for (let i = 0; i < 50_000; i++) garbage.push({ i });
      garbage = [];
      await new Promise((r) => setImmediate(r));
    }
    // the service's own observer is told in the same turn as this one
    await new Promise((r) => setImmediate(r));
    return seen;
  } finally {
    observer.disconnect();
  }
}

describe('health and metrics', () => {
  // first: later tests put the simulated API in maintenance
  it('/metrics says what holds the memory: the main thread, each render worker after a picture, the caches', async () => {
    const picture = await http.get(`/players/${encodeURIComponent(w.sim.world.playerTag(0))}/image?quality=low`);
    expect(picture.status).toBe(200);
    // the service runs on this thread: garbage until it has had a minor collection (whether one had
    // happened by now depended on the Node version's young generation)
    expect(await minorCollection()).toBe(true);
    const r = await http.get('/metrics');
    const value = (re: RegExp) => Number(re.exec(r.text)?.[1] ?? NaN);
    expect(value(/^starr_process_memory_bytes\{thread="main",kind="heap_used"\} (\d+)$/m)).toBeGreaterThan(1e6);
    expect(value(/^starr_process_memory_bytes\{thread="main",kind="heap_total"\} (\d+)$/m)).toBeGreaterThanOrEqual(value(/^starr_process_memory_bytes\{thread="main",kind="heap_used"\} (\d+)$/m));
    const young = value(/^starr_process_memory_bytes\{thread="main",kind="young_total"\} (\d+)$/m);
    expect(young).toBeGreaterThan(0);
    expect(young).toBeLessThan(value(/^starr_process_memory_bytes\{thread="main",kind="heap_total"\} (\d+)$/m));
    expect(value(/^starr_process_memory_bytes\{thread="render1",kind="heap_used"\} (\d+)$/m)).toBeGreaterThan(1e6);
    // its sprite cache: the card's brawler portraits and icons (its backdrop is painted, not kept)
    expect(value(/^starr_process_memory_bytes\{thread="render1",kind="sprites"\} (\d+)$/m)).toBeGreaterThan(0);
    // the pictures it handed over still alive, as it counted them before its last one (pool.ts)
    expect(value(/^starr_process_memory_bytes\{thread="render1",kind="handed_over"\} (\d+)$/m)).toBeGreaterThanOrEqual(0);
    // the profile (about 60 KB as JSON) is in the answers' cache, the picture in the pictures'
    expect(value(/^starr_cache_memory_bytes\{cache="answers"\} (\d+)$/m)).toBeGreaterThan(50_000);
    expect(value(/^starr_cache_memory_bytes\{cache="pictures"\} (\d+)$/m)).toBe(picture.body.length);
    // and in its file, written in the background of the answer
    let files = 0;
    for (let i = 0; i < 100 && files !== picture.body.length; i++) {
      await new Promise((res) => setTimeout(res, 20));
      files = Number(/^starr_picture_files_bytes (\d+)$/m.exec((await http.get('/metrics')).text)?.[1] ?? NaN);
    }
    expect(files).toBe(picture.body.length);
    // the worker that drew it is still running (it is ended after 60 s without a picture)
    expect(value(/^starr_render_workers (\d+)$/m)).toBe(1);
    // the main thread's collections, counted as they happen (the service has collected garbage by now)
    expect(value(/^starr_gc_pauses_total\{kind="minor"\} (\d+)$/m)).toBeGreaterThan(0);
    expect(value(/^starr_gc_pause_seconds_total\{kind="minor"\} (\S+)$/m)).toBeGreaterThan(0);
  });

  it("/metrics shows the event loop's longest block since the previous scrape", async () => {
    const loop = async () => {
      const text = (await http.get('/metrics')).text;
      const stat = (s: string) => Number(new RegExp(`^starr_event_loop_delay_seconds\\{stat="${s}"\\} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
      return { p50: stat('p50'), p99: stat('p99'), max: stat('max') };
    };
    await loop(); // the readings so far, reset
    // the service runs on this thread: hold it for half a second, then let its timer run
    const until = performance.now() + 500;
    while (performance.now() < until);
    await new Promise((r) => setTimeout(r, 30));
    const blocked = await loop();
    expect(blocked.max).toBeGreaterThanOrEqual(0.45);
    expect(blocked.max).toBeGreaterThanOrEqual(blocked.p99);
    expect(blocked.p99).toBeGreaterThanOrEqual(blocked.p50);
    // read and reset: the next scrape no longer holds that block
    expect((await loop()).max).toBeLessThan(blocked.max);
  });

  it('/healthz says the process is alive, which upstream and store it uses', async () => {
    const r = await http.get('/healthz');
    expect(r.status).toBe(200);
    expect(r.json()).toMatchObject({ status: 'ok', upstream: 'simulated', cacheStore: 'sqlite', durableStore: 'sqlite' });
    expect(Number.isInteger(r.json().uptimeSeconds)).toBe(true);
  });

  it('/readyz is ready while the store and the game API answer, 503 while the game API is down with nothing fresh', async () => {
    const ready = await http.get('/readyz');
    expect(ready.status).toBe(200);
    // one process on SQLite: no PostgreSQL or Redis to check
    expect(ready.json()).toEqual({ status: 'ready', role: 'all', checks: { store: { ok: true }, upstream: { ok: true } } });

    w.clock.advance(3600_000);
    w.sim.faults.set({ maintenance: true });
    try {
      const down = await http.get('/readyz');
      expect(down.status).toBe(503);
      expect(down.json()).toMatchObject({ status: 'not ready', checks: { store: { ok: true }, upstream: { ok: false } } });
    } finally {
      w.sim.faults.set({ maintenance: false });
    }
  });

  it('/metrics counts requests by route and status, latency, cache and upstream outcomes', async () => {
    await http.get('/brawlers');
    await http.get('/brawlers/abc');
    await http.get('/nowhere');
    const r = await http.get('/metrics');
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(r.text).toMatch(/^starr_http_requests_total\{route="\/brawlers",method="GET",status="200"\} \d+$/m);
    expect(r.text).toMatch(/^starr_http_requests_total\{route="\/brawlers\/:brawlerId",method="GET",status="422"\} 1$/m);
    expect(r.text).toMatch(/^starr_http_requests_total\{route="unmatched",method="GET",status="404"\} 1$/m);
    expect(r.text).toMatch(/^starr_http_request_duration_seconds_bucket\{route="\/brawlers",le="\+Inf"\} \d+$/m);
    expect(r.text).toMatch(/^# TYPE starr_http_request_duration_seconds histogram$/m);
    // the core's cache and upstream counters and the client's attempts, in the same registry
    expect(r.text).toMatch(/^starr_core_reads_total\{resource="brawlers",source="upstream"\} 1$/m);
    expect(r.text).toMatch(/^starr_core_reads_total\{resource="brawlers",source="stale"\} \d+$/m);
    expect(r.text).toMatch(/^starr_core_upstream_calls_total\{resource="brawlers",result="ok"\} 1$/m);
    expect(r.text).toMatch(/^starr_core_upstream_calls_total\{resource="brawlers",result="maintenance"\} \d+$/m);
    expect(r.text).toMatch(/^starr_upstream_requests_total\{endpoint="\/brawlers",outcome="ok"\} 1$/m);
    expect(r.text).toMatch(/^starr_upstream_requests_total\{endpoint="\/brawlers",outcome="maintenance"\} \d+$/m);
  });
});

describe('metric labels', () => {
  it('name upstream endpoints without tags, ids or countries, so label values stay few', () => {
    expect(endpointLabel('/players/%232PP0GQ9LU/battlelog')).toBe('/players/{tag}/battlelog');
    expect(endpointLabel('/clubs/%23ABC?x=1')).toBe('/clubs/{tag}');
    expect(endpointLabel('/rankings/KR/brawlers/16000000?limit=200')).toBe('/rankings/{countryCode}/brawlers/{id}');
    expect(endpointLabel('/brawlers/16000000')).toBe('/brawlers/{id}');
    expect(endpointLabel('/events/rotation')).toBe('/events/rotation');
  });
});

describe('the document describes what the server sends', () => {
  it('every JSON body validates against the schema documented for its path and status', async () => {
    const doc = (await http.get('/openapi.json')).json();
    const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
    ajv.addSchema(doc, 'openapi');
    // The core leaves the game API alone for a while after the maintenance of an earlier test.
    w.clock.advance(60_000);
    const player = w.sim.world.playerTag(5).slice(1);
    const club = w.sim.world.clubTag(2).slice(1);
    // [method, URL, documented path, the status this call must get]
    const calls: [string, string, string, number][] = [
      ['GET', '/', '/', 200],
      ['GET', '/brawlers', '/brawlers', 200],
      ['GET', '/brawlers/16000002', '/brawlers/{brawlerId}', 200],
      ['GET', '/brawlers/1', '/brawlers/{brawlerId}', 404],
      ['GET', `/players/${player}`, '/players/{tag}', 200],
      ['GET', `/players/${player}/battlelog?limit=5`, '/players/{tag}/battlelog', 200],
      ['GET', '/players/x!/battlelog?limit=y', '/players/{tag}/battlelog', 422],
      ['GET', `/clubs/${club}`, '/clubs/{tag}', 200],
      ['GET', '/rankings/global/players?limit=20', '/rankings/{countryCode}/players', 200],
      ['GET', '/rankings/de/clubs', '/rankings/{countryCode}/clubs', 200],
      ['GET', '/rankings/global/brawlers/16000003', '/rankings/{countryCode}/brawlers/{brawlerId}', 200],
      ['GET', '/game', '/game', 200],
      ['GET', '/game/none.csv', '/game/{file}', 404],
      ['GET', '/healthz', '/healthz', 200],
      ['GET', '/readyz', '/readyz', 200],
      ['POST', '/generate-api-keys?ip=::1&email=schema%40example.com&password=password1', '/generate-api-keys', 200],
      ['POST', '/generate-api-keys?ip=::1&email=schema%40example.com&password=password2', '/generate-api-keys', 401],
      ['POST', '/generate-api-keys', '/generate-api-keys', 422],
      ['GET', '/brawlers?api_key=wrong', '/brawlers', 401],
    ];
    for (const [method, url, template, status] of calls) {
      const r = await http.call(method, url);
      expect(r.status, `${method} ${url}`).toBe(status);
      const response = doc.paths[template][method.toLowerCase()].responses[String(r.status)];
      expect(response, `${method} ${url} answered ${r.status}, which is not documented`).toBeDefined();
      const schema = response.content['application/json'].schema;
      const validate = ajv.compile({ $ref: `openapi${schema.$ref}` });
      expect(validate(r.json()), `${method} ${url} (${r.status}): ${ajv.errorsText(validate.errors)}`).toBe(true);
    }
  });

  it('documents the 503 of a game API outage with the same error schema it sends', async () => {
    const doc = (await http.get('/openapi.json')).json();
    w.sim.faults.set({ maintenance: true });
    try {
      const r = await http.get(`/players/${w.sim.world.playerTag(77).slice(1)}`);
      expect(r.status).toBe(503);
      expect(doc.paths['/players/{tag}'].get.responses['503'].content['application/json'].schema.$ref).toBe('#/components/schemas/HTTPError');
      expect(Object.keys(r.json())).toEqual(['detail']);
    } finally {
      w.sim.faults.set({ maintenance: false });
      w.clock.advance(60_000);
    }
  });
});

describe('/readyz of a process whose Redis does not answer', () => {
  let down: TestWorld;
  let client: HttpClient;
  let cacheDir = '';
  beforeAll(async () => {
    // REDIS_URL points where nothing listens; the cache stays on SQLite, so only Redis is missing
    cacheDir = mkdtempSync(join(tmpdir(), 'starr-readyz-'));
    down = await startWorld({ startMs: T0, cacheUrl: `sqlite://${join(cacheDir, 'cache.sqlite')}`, env: { REDIS_URL: 'redis://127.0.0.1:9', ROLE: 'worker' } });
    const app = createHttpServer(down.core, { routes: 'health' });
    client = await serve(app);
  });
  afterAll(async () => {
    await client?.close();
    await down?.close();
    rmSync(cacheDir, { recursive: true, force: true });
  });

  it('is 503 naming Redis, with the role; the health-only server has nothing else', async () => {
    const r = await client.get('/readyz');
    expect(r.status).toBe(503);
    expect(r.json()).toMatchObject({
      status: 'not ready',
      role: 'worker',
      checks: { store: { ok: true }, upstream: { ok: true }, redis: { ok: false, detail: 'Redis (REDIS_URL) does not answer' } },
    });
    expect((await client.get('/healthz')).status).toBe(200);
    expect((await client.get('/brawlers')).status).toBe(404);
  });
});
