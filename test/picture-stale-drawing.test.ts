/**
 * A picture whose data was refreshed is drawn again; while it is drawn, a caller that says how long
 * it waits (`staleAfterMs`, the HTTP API's PICTURE_STALE_WAIT_MS) is answered, past that wait, the
 * picture of the older copy still kept — marked stale (reason `drawing`), with its own ETag and
 * Age — and the drawing lands in the cache for the next read. A caller that does not say (the bot)
 * waits for the drawing. Drawings here are held by the test until it lets them go, so which came
 * first is a fact, not a race; the HTTP test at the end runs it through the real app and render
 * worker.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Fetched } from '../src/core/index.ts';
import { DRAWING, ImageService, NO_RECORDS } from '../src/core/images.ts';
import { createHttpServer } from '../src/http/server.ts';
import type { Logger } from '../src/log.ts';
import type { RenderJob } from '../src/render/types.ts';
import { Player } from '../src/upstream/schemas.ts';
import { fixtureSubjects, fixtureWorld, T0 } from './fixtures/render/cases.ts';
import { serve, type HttpClient } from './support/http.ts';
import { startWorld, type TestWorld } from './support/world.ts';

type PlayerData = ReturnType<typeof Player.parse>;

/** A renderer whose drawings wait until the test lets them go (or fails them). */
function heldRenderer() {
  const waiting: { job: RenderJob; go: () => void; fail: (e: Error) => void }[] = [];
  let n = 0;
  return {
    waiting,
    drawn: () => n,
    renderer: {
      render: (job: RenderJob) =>
        new Promise<Buffer>((resolve, reject) => {
          const png = Buffer.from(`png ${++n}`);
          waiting.push({ job, go: () => resolve(png), fail: reject });
        }),
    },
  };
}

function setup() {
  const world = fixtureWorld();
  const tag = fixtureSubjects(world).player;
  const profile = Player.parse(world.player(tag, T0));
  const copy = { version: 'v1', fetchedAt: T0 };
  let now = T0;
  const fetched = (): Fetched<PlayerData> => ({
    data: profile,
    fetchedAt: copy.fetchedAt,
    expiresAt: copy.fetchedAt + 120_000,
    stale: false,
    ageSeconds: Math.floor((now - copy.fetchedAt) / 1000),
    version: copy.version,
    source: 'memory',
    key: `player:${tag}`,
  });
  const held = heldRenderer();
  const warnings: string[] = [];
  const logger = { warn: (_o: unknown, msg: string) => warnings.push(msg) } as unknown as Logger;
  const service = new ImageService({
    stats: { player: async () => fetched(), club: async () => Promise.reject(new Error('no clubs here')) },
    records: NO_RECORDS,
    renderer: held.renderer,
    now: () => now,
    logger,
  });
  /** the copy refreshed: new data (a new version) fetched `afterMs` after the first */
  const refresh = (version: string, afterMs: number) => {
    copy.version = version;
    copy.fetchedAt = T0 + afterMs;
    now = T0 + afterMs;
  };
  return { tag, service, held, refresh, warnings };
}

/** The first picture, drawn from copy v1 while nothing older is kept. */
async function firstPicture(s: ReturnType<typeof setup>) {
  const asked = s.service.playerImage(s.tag, 1, 'low', { staleAfterMs: 5 });
  await vi.waitFor(() => expect(s.held.waiting.length).toBe(1));
  // nothing older to answer with: it waits for its drawing, however long
  await new Promise((r) => setTimeout(r, 30));
  s.held.waiting.shift()!.go();
  const first = await asked;
  expect([first.freshness.stale, first.png.toString()]).toEqual([false, 'png 1']);
  return first;
}

describe('a picture drawn again while the older one is kept', () => {
  it('is answered, past the wait, with the older picture marked stale; then the new one', async () => {
    const s = setup();
    const first = await firstPicture(s);

    s.refresh('v2', 130_000);
    const a = await s.service.playerImage(s.tag, 1, 'low', { staleAfterMs: 5 });
    expect(s.held.waiting.length).toBe(1);
    expect(a.png.equals(first.png)).toBe(true);
    expect(a.etag).toBe(first.etag);
    expect([a.maxAge, a.cached, a.again]).toEqual([0, true, undefined]);
    // its age is the older copy's: fetched at T0, 130 s ago
    expect(a.freshness).toEqual({ stale: true, ageSeconds: 130, staleReason: DRAWING });

    // a second request while the same drawing is under way: the same older picture; no second
    // drawing; and no wait of its own once the drawing has outlasted its wait (counted from the
    // drawing's start): answered before the event loop's next turn, where a timer could fire
    await new Promise((r) => setTimeout(r, 30));
    let answered = false;
    const pending = s.service.playerImage(s.tag, 1, 'low', { staleAfterMs: 20 }).then((r) => ((answered = true), r));
    await new Promise((r) => setImmediate(r));
    expect(answered).toBe(true);
    const b = await pending;
    expect([b.etag, b.freshness.staleReason, s.held.waiting.length, s.held.drawn()]).toEqual([first.etag, DRAWING, 1, 2]);
    // If-None-Match of the older picture: a 304 of it, stale too
    const nm = await s.service.playerImage(s.tag, 1, 'low', { ifNoneMatch: first.etag, staleAfterMs: 5 });
    expect([nm.notModified, nm.png.length, nm.etag, nm.freshness.stale]).toEqual([true, 0, first.etag, true]);

    // the drawing lands: the new picture, fresh, from the cache
    s.held.waiting.shift()!.go();
    await vi.waitFor(async () => expect((await s.service.playerImage(s.tag, 1, 'low', { staleAfterMs: 5 })).freshness.stale).toBe(false));
    const c = await s.service.playerImage(s.tag, 1, 'low', { staleAfterMs: 5 });
    expect([c.png.toString(), c.cached, s.held.drawn()]).toEqual(['png 2', true, 2]);
    expect(c.etag).not.toBe(first.etag);
    expect(c.again).toBeDefined();
  });

  it('is waited for by a caller that sets no wait (the bot), and within the wait', async () => {
    const s = setup();
    const first = await firstPicture(s);

    s.refresh('v2', 130_000);
    const bot = s.service.playerImage(s.tag, 1, 'low');
    await vi.waitFor(() => expect(s.held.waiting.length).toBe(1));
    let settled = false;
    void bot.then(() => (settled = true));
    await new Promise((r) => setTimeout(r, 30));
    expect(settled).toBe(false);
    s.held.waiting.shift()!.go();
    const drawn = await bot;
    expect([drawn.png.toString(), drawn.freshness.stale]).toEqual(['png 2', false]);
    expect(drawn.etag).not.toBe(first.etag);

    // a drawing done within the wait is answered itself
    s.refresh('v3', 260_000);
    const within = s.service.playerImage(s.tag, 1, 'low', { staleAfterMs: 60_000 });
    await vi.waitFor(() => expect(s.held.waiting.length).toBe(1));
    s.held.waiting.shift()!.go();
    expect((await within).png.toString()).toBe('png 3');
    expect((await within).freshness.stale).toBe(false);
  });

  it('is another picture for another quality: nothing older of it to answer with', async () => {
    const s = setup();
    await firstPicture(s);
    s.refresh('v2', 130_000);
    const medium = s.service.playerImage(s.tag, 1, 'medium', { staleAfterMs: 5 });
    await vi.waitFor(() => expect(s.held.waiting.length).toBe(1));
    await new Promise((r) => setTimeout(r, 30));
    s.held.waiting.shift()!.go();
    expect((await medium).freshness.stale).toBe(false);
  });

  it('is another picture for a chart of another range', async () => {
    const s = setup();
    const day = 86_400_000;
    const chart = (from: number) => s.service.playerChart(s.tag, 1, { from, to: from + 7 * day }, 'high', { staleAfterMs: 5 });
    const a = chart(T0 - 30 * day);
    await vi.waitFor(() => expect(s.held.waiting.length).toBe(1));
    s.held.waiting.shift()!.go();
    expect((await a).freshness.stale).toBe(false);
    // the same copy, another range: nothing older of that chart, so it waits for its drawing
    const b = chart(T0 - 20 * day);
    await vi.waitFor(() => expect(s.held.waiting.length).toBe(1));
    await new Promise((r) => setTimeout(r, 30));
    s.held.waiting.shift()!.go();
    const drawn = await b;
    expect([drawn.freshness.stale, drawn.png.toString()]).toEqual([false, 'png 2']);
  });

  it('that fails is logged once; the next read draws again and still has the older picture meanwhile', async () => {
    const s = setup();
    const first = await firstPicture(s);
    s.refresh('v2', 130_000);
    const a = await s.service.playerImage(s.tag, 1, 'low', { staleAfterMs: 5 });
    expect(a.etag).toBe(first.etag);
    await s.service.playerImage(s.tag, 1, 'low', { staleAfterMs: 5 });
    s.held.waiting.shift()!.fail(new Error('the worker died'));
    await vi.waitFor(() => expect(s.warnings).toEqual(['a picture drawn while an older one was answered failed']));

    const again = await s.service.playerImage(s.tag, 1, 'low', { staleAfterMs: 5 });
    expect([again.etag, again.freshness.staleReason, s.held.waiting.length]).toEqual([first.etag, DRAWING, 1]);
    s.held.waiting.shift()!.go();
    await vi.waitFor(async () => expect((await s.service.playerImage(s.tag, 1, 'low', { staleAfterMs: 5 })).png.toString()).toBe('png 3'));
  });
});

describe('the HTTP API while a refreshed picture is drawn', () => {
  const TTL_MS = 120_000;
  let w: TestWorld;
  let http: HttpClient;

  beforeAll(async () => {
    // no wait at all: every drawing of a picture whose older one is kept is answered with that one
    w = await startWorld({ startMs: Date.UTC(2026, 10, 30, 12), env: { RATE_LIMIT_FREE: '1000000', PICTURE_STALE_WAIT_MS: '0' } });
    http = await serve(createHttpServer(w.core, { now: w.now }));
  });
  afterAll(async () => {
    await http?.close();
    await w?.close();
  });

  it('answers the older picture with the stale headers (X-Stale-Reason: drawing), then the new one', async () => {
    const tag = encodeURIComponent(w.sim.world.playerTag(3));
    const url = `/players/${tag}/image?option=1&quality=low`;
    const first = await http.get(url);
    expect(first.status).toBe(200);
    expect(first.headers['x-cache']).toBeUndefined();

    // the copy refreshed (the world moved on): a new picture to draw
    w.clock.advance(TTL_MS + 1_000);
    const during = await http.get(url);
    expect(during.status).toBe(200);
    expect(during.headers['content-type']).toBe('image/png');
    expect(during.headers.etag).toBe(first.headers.etag);
    expect(during.body.equals(first.body)).toBe(true);
    expect(during.headers['x-cache']).toBe('STALE');
    expect(during.headers['x-stale-reason']).toBe('drawing');
    expect(during.headers.warning).toBe('110 - "Response is Stale"');
    expect(during.headers['cache-control']).toBe('public, max-age=0');
    expect(during.headers.age).toBe('121');
    // the JSON it is drawn from is the new copy, fresh
    const json = await http.get(`/players/${tag}`);
    expect([json.status, json.headers['x-cache']]).toEqual([200, undefined]);

    // once drawn: the new picture, fresh
    await vi.waitFor(async () => expect((await http.get(url)).headers['x-cache']).toBeUndefined(), { timeout: 30_000 });
    const after = await http.get(url);
    expect(after.status).toBe(200);
    // drawn from the new copy (fetched just now): its own ETag, its age 0
    expect(after.headers.etag).not.toBe(first.headers.etag);
    expect([after.headers.age, after.headers['cache-control']]).toEqual(['0', 'public, max-age=120']);
  });
});
