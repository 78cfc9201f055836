/**
 * The image and chart endpoints over real HTTP on 127.0.0.1, with the service composed as in
 * production (simulated world → UpstreamClient → StatsService → ImageService on the worker pool):
 * PNG bodies of the documented sizes, defaults, caching headers, 404 JSON for unknown tags and
 * pydantic-style 422 bodies for option, quality and dates. Recorded history is what the core
 * itself recorded while answering.
 */
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseChartDate } from '../src/http/routes/images.ts';
import { createHttpServer } from '../src/http/server.ts';
import { PLAYER_IMAGE_OPTIONS } from '../src/render/catalogue.ts';
import { fixtureSubjects, fixtureWorld, T0 } from './fixtures/render/cases.ts';
import { startWorld, type TestWorld } from './support/world.ts';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  json(): any;
}

let base = { port: 0 };
function get(path: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: base.port, path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const body = Buffer.concat(chunks);
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body, json: () => JSON.parse(body.toString('utf8')) });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

const world = fixtureWorld();
const subjects = fixtureSubjects(world);
const tag = (t: string) => encodeURIComponent(t);
let w: TestWorld;
let app: ReturnType<typeof createHttpServer>;

beforeAll(async () => {
  // the same seed and size as the fixture world, so the records match the players served
  w = await startWorld({ startMs: T0, seed: world.seed, players: world.playerCount, clubs: world.clubCount, env: { RATE_LIMIT_FREE: '100000' } });
  app = createHttpServer(w.core, { now: w.now });
  await app.listen({ port: 0, host: '127.0.0.1' });
  base = { port: (app.server.address() as AddressInfo).port };
});

afterAll(async () => {
  await app?.close();
  await w?.close();
});

function png(r: Answer): PNG {
  expect(r.status, r.body.toString('utf8').slice(0, 300)).toBe(200);
  expect(r.headers['content-type']).toBe('image/png');
  return PNG.sync.read(r.body);
}

describe('image endpoints answer PNG', () => {
  it('player image: default option 1 at high quality, 1200×675, with caching headers', async () => {
    const r = await get(`/players/${tag(subjects.player)}/image`);
    const p = png(r);
    expect([p.width, p.height]).toEqual([1200, 675]);
    expect(r.headers['cache-control']).toBe('public, max-age=120');
    expect(r.headers.etag).toMatch(/^"/);
    const again = await get(`/players/${tag(subjects.player)}/image`, { 'if-none-match': String(r.headers.etag) });
    expect(again.status).toBe(304);
  });

  it('player image: every option at every quality has its documented size', async () => {
    for (const [o, spec] of Object.entries(PLAYER_IMAGE_OPTIONS)) {
      for (const [q, scale] of [['low', 0.5], ['medium', 0.75], ['high', 1]] as const) {
        const p = png(await get(`/players/${tag(subjects.player)}/image?option=${o}&quality=${q}`));
        expect({ o, q, w: p.width, h: p.height }).toEqual({ o, q, w: Math.round(spec.size.width * scale), h: Math.round(spec.size.height * scale) });
      }
    }
  });

  it('club image: default option 2; 200 is portrait; every quality', async () => {
    const def = png(await get(`/clubs/${tag(subjects.club)}/image`));
    expect([def.width, def.height]).toEqual([1200, 675]);
    for (const [q, w, h] of [['low', 450, 800], ['medium', 675, 1200], ['high', 900, 1600]] as const) {
      const p = png(await get(`/clubs/${tag(subjects.club)}/image?option=200&quality=${q}`));
      expect([p.width, p.height]).toEqual([w, h]);
    }
  });

  it('charts: every option of both endpoints, with and without dates', async () => {
    for (const o of [1, 2, 3, 4, 5, 6, 7, 8, 9]) {
      const p = png(await get(`/players/${tag(subjects.player)}/chart?option=${o}`));
      expect([p.width, p.height]).toEqual([1200, 675]);
    }
    for (const o of [1, 2, 3]) {
      const p = png(await get(`/clubs/${tag(subjects.club)}/chart?option=${o}&from=01.06.26&to=20.06.2026`));
      expect([p.width, p.height]).toEqual([1200, 675]);
    }
    expect(png(await get(`/players/${tag(subjects.player)}/chart`)).width).toBe(1200);
  });

  it('draws labels in the language of lang: another picture and ETag per language; an unknown one is English', async () => {
    const path = `/clubs/${tag(subjects.club)}/image?option=2&quality=low`;
    const en = await get(path);
    const ru = await get(`${path}&lang=ru`);
    const mx = await get(`${path}&lang=es-MX`);
    const es = await get(`${path}&lang=es-419`);
    const unknown = await get(`${path}&lang=xx-YY`);
    for (const r of [en, ru, mx, es, unknown]) png(r);
    expect(ru.body.equals(en.body)).toBe(false);
    expect(ru.headers.etag).not.toBe(en.headers.etag);
    expect(mx.body.equals(es.body)).toBe(true);
    expect(unknown.body.equals(en.body)).toBe(true);
    expect(png(await get(`/players/${tag(subjects.player)}/chart?option=2&lang=ja`)).width).toBe(1200);
    const spec = JSON.parse((await get('/openapi.json')).body.toString('utf8'));
    const params = spec.paths['/players/{tag}/image'].get.parameters as { name: string; required?: boolean }[];
    expect(params.find((x) => x.name === 'lang')).toMatchObject({ required: false });
  });

  it('the same request twice renders once (content cache)', async () => {
    const before = w.images.renders;
    const a = await get(`/clubs/${tag(subjects.club)}/image?option=2&quality=low`);
    const b = await get(`/clubs/${tag(subjects.club)}/image?option=2&quality=low`);
    expect(w.images.renders - before).toBeLessThanOrEqual(1);
    expect(b.body.equals(a.body)).toBe(true);
  });

  it('50 concurrent requests for different pictures all complete', async () => {
    const paths = Array.from({ length: 50 }, (_, i) => {
      const o = [1, 8, 9, 4][i % 4];
      const q = ['low', 'medium'][Math.floor(i / 4) % 2];
      return `/players/${tag(world.playerTag(i % 12))}/image?option=${o}&quality=${q}`;
    });
    const answers = await Promise.all(paths.map((p) => get(p)));
    const statuses = answers.map((a) => a.status);
    // the pool queues up to 64; nothing here should be refused
    expect(statuses.every((s) => s === 200)).toBe(true);
  });
});

describe('errors', () => {
  it('an unknown tag is a 404 JSON body on every endpoint', async () => {
    for (const path of ['/players/%232222222222/image', '/players/%232222222222/chart', '/clubs/%232222222222/image', '/clubs/%232222222222/chart']) {
      const r = await get(path);
      expect(r.status).toBe(404);
      expect(r.headers['content-type']).toMatch(/^application\/json/);
      expect(r.json().detail).toMatch(/not found/i);
    }
  });

  it('an option outside its table is a 422 literal_error', async () => {
    const r = await get(`/players/${tag(subjects.player)}/image?option=2`);
    expect(r.status).toBe(422);
    expect(r.json()).toEqual({
      detail: [
        {
          type: 'literal_error',
          loc: ['query', 'option'],
          msg: 'Input should be 1, 3, 4, 6, 8, 9, 10, 13, 14 or 41',
          input: '2',
          ctx: { expected: '1, 3, 4, 6, 8, 9, 10, 13, 14 or 41' },
        },
      ],
    });
    const club = await get(`/clubs/${tag(subjects.club)}/image?option=1`);
    expect(club.json().detail[0]).toMatchObject({ type: 'literal_error', loc: ['query', 'option'], ctx: { expected: '2, 3 or 200' } });
    const chart = await get(`/clubs/${tag(subjects.club)}/chart?option=4`);
    expect(chart.json().detail[0]).toMatchObject({ type: 'literal_error', ctx: { expected: '1, 2 or 3' } });
    const notInt = await get(`/players/${tag(subjects.player)}/chart?option=x`);
    expect(notInt.status).toBe(422);
    expect(notInt.json().detail[0]).toMatchObject({ loc: ['query', 'option'], input: 'x' });
  });

  it('quality must be low, medium or high', async () => {
    const r = await get(`/players/${tag(subjects.player)}/image?quality=ultra`);
    expect(r.status).toBe(422);
    expect(r.json().detail).toEqual([
      {
        type: 'literal_error',
        loc: ['query', 'quality'],
        msg: "Input should be 'low', 'medium' or 'high'",
        input: 'ultra',
        ctx: { expected: "'low', 'medium' or 'high'" },
      },
    ]);
  });

  it('dates must be DD.MM.YY or DD.MM.YYYY, real days, from not after to; all problems at once', async () => {
    for (const bad of ['2026-06-01', '1.6.26', '31.02.26', '32.01.2026', '01.13.26', 'yesterday', '01.06.026']) {
      const r = await get(`/players/${tag(subjects.player)}/chart?from=${encodeURIComponent(bad)}`);
      expect({ bad, status: r.status }).toEqual({ bad, status: 422 });
      expect(r.json().detail[0]).toMatchObject({ type: 'value_error', loc: ['query', 'from'], input: bad });
    }
    const both = await get(`/clubs/${tag(subjects.club)}/chart?option=9&from=x&to=y`);
    expect(both.json().detail.map((d: { loc: string[] }) => d.loc)).toEqual([
      ['query', 'option'],
      ['query', 'from'],
      ['query', 'to'],
    ]);
    const reversed = await get(`/players/${tag(subjects.player)}/chart?from=10.06.26&to=01.06.26`);
    expect(reversed.status).toBe(422);
    expect(reversed.json().detail).toEqual([
      { type: 'value_error', loc: ['query', 'from'], msg: 'Value error, from must not be after to', input: '10.06.26', ctx: { error: {} } },
    ]);
    expect((await get(`/players/${tag(subjects.player)}/chart?from=10.06.26&to=10.06.26`)).status).toBe(200);
  });

  it('parses both date spellings as UTC days', () => {
    expect(parseChartDate('01.06.26')).toBe(Date.UTC(2026, 5, 1));
    expect(parseChartDate('29.02.2024')).toBe(Date.UTC(2024, 1, 29));
    expect(parseChartDate('29.02.2025')).toBeNull();
  });

  it('documents the endpoints as image/png in the OpenAPI document', async () => {
    const doc = (await get('/openapi.json')).json();
    for (const p of ['/players/{tag}/image', '/players/{tag}/chart', '/clubs/{tag}/image', '/clubs/{tag}/chart']) {
      expect(Object.keys(doc.paths[p].get.responses['200'].content)).toEqual(['image/png']);
    }
    const option = doc.paths['/players/{tag}/image'].get.parameters.find((x: { name: string }) => x.name === 'option');
    expect(option.description).toMatch(/Mastery \(historic\).*victories/s);
  });
});

describe('charts without from/to end at the newest data, not the clock', () => {
  it('the same data is drawn once; a new recording makes a new chart', async () => {
    const player = world.playerTag(7);
    const path = `/players/${tag(player)}/chart?option=1`;
    // the look-up records a profile; written before the chart reads the history
    expect((await get(`/players/${tag(player)}`)).status).toBe(200);
    await w.history.flush();
    const first = await get(path);
    png(first);
    const drawn = w.images.renders;

    // later, the same data: the cached chart, not a new one ending at the new "now"
    w.clock.advance(30_000);
    const again = await get(path);
    expect(again.headers.etag).toBe(first.headers.etag);
    expect(again.body.equals(first.body)).toBe(true);
    expect((await get(path, { 'if-none-match': String(first.headers.etag) })).status).toBe(304);
    expect(w.images.renders).toBe(drawn);

    // a day later the profile is fetched and recorded again: the chart shows it
    w.clock.advance(86_400_000);
    expect((await get(`/players/${tag(player)}`)).status).toBe(200);
    await w.history.flush();
    const later = await get(path, { 'if-none-match': String(first.headers.etag) });
    expect(later.status).toBe(200);
    expect(later.headers.etag).not.toBe(first.headers.etag);
    expect(w.images.renders).toBe(drawn + 1);
  });
});

describe('pictures are keyed by the versions of the data they show', () => {
  it('a known ETag gets a 304 without drawing; a drawn picture is served again; new data, new ETag', async () => {
    const path = `/players/${tag(world.playerTag(3))}/image?quality=low`;
    const first = await get(path);
    png(first);
    const etag = String(first.headers.etag);
    const drawn = w.images.renders;

    const again = await get(path);
    expect(again.body.equals(first.body)).toBe(true);
    expect(again.headers.etag).toBe(etag);
    const notModified = await get(path, { 'if-none-match': etag });
    expect(notModified.status).toBe(304);
    expect(notModified.body.length).toBe(0);
    expect(notModified.headers.etag).toBe(etag);
    expect(w.images.renders).toBe(drawn);

    // another quality of the same data is another picture
    const medium = await get(path.replace('low', 'medium'));
    expect(medium.headers.etag).not.toBe(etag);

    // two days later the profile has changed: a new picture, and the old ETag no longer matches
    w.clock.advance(2 * 86_400_000);
    const later = await get(path, { 'if-none-match': etag });
    expect(later.status).toBe(200);
    expect(later.headers.etag).not.toBe(etag);
    expect(later.body.equals(first.body)).toBe(false);
  });
});
