/**
 * A picture already drawn is answered without work proportional to what it shows: keyed by the
 * version of the data it is drawn from (and the art's revision), a hit reads nothing of the profile,
 * asks the art store for nothing and draws nothing; a matching If-None-Match is answered the same
 * way, with no bytes. New data (a new version) draws a new picture.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import type { Fetched } from '../src/core/index.ts';
import { ImageService, NO_RECORDS } from '../src/core/images.ts';
import type { ArtStore } from '../src/render/assets.ts';
import type { RenderJob } from '../src/render/types.ts';
import { Player } from '../src/upstream/schemas.ts';
import { fixtureSubjects, fixtureWorld, T0 } from './fixtures/render/cases.ts';

type PlayerData = ReturnType<typeof Player.parse>;

/** The profile, or a stand-in that fails the test if anything of it is read. */
const untouchable = () =>
  new Proxy({} as PlayerData, {
    get: (_t, k) => {
      throw new Error(`the profile's ${String(k)} was read on a picture hit`);
    },
    ownKeys: () => {
      throw new Error("the profile's keys were listed on a picture hit");
    },
  });

describe('a picture hit', () => {
  it('reads nothing of its input, asks the art store for nothing and draws nothing; nor does a 304', async () => {
    const world = fixtureWorld();
    const tag = fixtureSubjects(world).player;
    const profile = Player.parse(world.player(tag, T0));
    let data: PlayerData = profile;
    let version = 'v1';
    const fetched = (): Fetched<PlayerData> => ({ data, fetchedAt: T0, expiresAt: T0 + 120_000, stale: false, ageSeconds: 0, version, source: 'memory' });
    let renders = 0;
    let artReads = 0;
    let asks = 0;
    const art = { enabled: true, revision: 3, get: async () => (artReads++, {}) } as unknown as ArtStore;
    const service = new ImageService({
      stats: { player: async () => fetched(), club: async () => Promise.reject(new Error('no clubs here')) },
      records: NO_RECORDS,
      renderer: { render: async (_job: RenderJob) => (renders++, Buffer.from(`png ${renders}`)), asked: () => asks++ },
      art,
      now: () => T0,
    });

    const first = await service.playerImage(tag, 1, 'low');
    expect([first.cached, renders, artReads]).toEqual([false, 1, 1]);

    data = untouchable();
    const hit = await service.playerImage(tag, 1, 'low');
    expect(hit.cached).toBe(true);
    expect(hit.png.equals(first.png)).toBe(true);
    expect(hit.etag).toBe(first.etag);
    const nm = await service.playerImage(tag, 1, 'low', { ifNoneMatch: `W/"x", ${first.etag}` });
    expect([nm.notModified, nm.png.length, nm.etag]).toEqual([true, 0, first.etag]);
    expect([renders, artReads]).toEqual([1, 1]);
    // each picture asked for is told to the renderer, drawn or not (it keeps its workers while pictures are asked for)
    expect(asks).toBe(3);

    // another quality is another picture; new data is a new picture
    data = profile;
    await service.playerImage(tag, 1, 'medium');
    expect(renders).toBe(2);
    version = 'v2';
    const changed = await service.playerImage(tag, 1, 'low');
    expect([changed.cached, renders]).toEqual([false, 3]);
    expect(changed.etag).not.toBe(first.etag);
  });

  it('can be had again synchronously while the service would answer with the same picture', async () => {
    const world = fixtureWorld();
    const tag = fixtureSubjects(world).player;
    const profile = Player.parse(world.player(tag, T0));
    let stale = false;
    const fetched = (): Fetched<PlayerData> => ({ data: profile, fetchedAt: T0, expiresAt: T0 + 120_000, stale, ageSeconds: 0, version: 'v1', source: 'memory', key: `player:${tag}` });
    let renders = 0;
    let asks = 0;
    const art = { enabled: true, revision: 3, get: async () => ({}) } as unknown as ArtStore;
    const service = new ImageService({
      stats: { player: async () => fetched(), club: async () => Promise.reject(new Error('no clubs here')) },
      records: NO_RECORDS,
      // 100 KB pictures in a cache of 250 KB: the third pushes the first out
      renderer: { render: async (_job: RenderJob) => (renders++, Buffer.alloc(100_000, renders)), asked: () => asks++ },
      art,
      cacheBytes: 250_000,
      now: () => T0,
    });

    const first = await service.playerImage(tag, 1, 'low');
    expect([first.again?.key, first.again?.fetchedAt]).toEqual([`player:${tag}`, T0]);
    expect(first.again!.png()).toBe(first.png);
    // a 304 gives the same picture again, and the picture a hit gives
    const nm = await service.playerImage(tag, 1, 'low', { ifNoneMatch: first.etag });
    expect(nm.again!.png()).toBe(first.png);

    // new art: the same copy would be drawn (and keyed) anew
    (art as { revision: number }).revision++;
    expect(first.again!.png()).toBeUndefined();
    const redrawn = await service.playerImage(tag, 1, 'low');
    expect([redrawn.cached, renders]).toEqual([false, 2]);
    expect(redrawn.again!.png()).toBe(redrawn.png);

    // pushed out of the picture cache by two others (the first push drops the oldest, the art's old picture)
    const medium = await service.playerImage(tag, 1, 'medium');
    const high = await service.playerImage(tag, 1, 'high');
    expect(renders).toBe(4);
    expect(redrawn.again!.png()).toBeUndefined();
    // png() moves nothing: the next picture pushes out the older one
    expect(medium.again!.png()).toBe(medium.png);
    const low = await service.playerImage(tag, 1, 'low');
    expect([low.cached, renders]).toEqual([false, 5]);
    expect(medium.again!.png()).toBeUndefined();
    // answered() moves it to the most recently used end, as a hit does: the next pushes out the other;
    // and it is a picture asked for, as the renderer is told (png() alone tells it nothing)
    const asked = asks;
    high.again!.png();
    expect(asks).toBe(asked);
    high.again!.answered();
    expect(asks).toBe(asked + 1);
    await service.playerImage(tag, 3, 'low');
    expect(high.again!.png()).toBe(high.png);
    expect(low.again!.png()).toBeUndefined();

    // a stale copy, and a picture of recorded history, cannot be had again
    stale = true;
    expect((await service.playerImage(tag, 1, 'low')).again).toBeUndefined();
    stale = false;
    expect((await service.playerChart(tag, 1)).again).toBeUndefined();
  });

  it('had again, holds nothing of the copy it was drawn from', async () => {
    // the fast path keeps `again` in a URL's memo for as long as it remembers the URL: holding the
    // copy there would keep copies the answers' layer has let go
    const world = fixtureWorld();
    const tag = fixtureSubjects(world).player;
    let copy: WeakRef<object> | undefined;
    const service = new ImageService({
      stats: {
        player: async () => {
          const data = Player.parse(world.player(tag, T0));
          copy = new WeakRef(data);
          return { data, fetchedAt: T0, expiresAt: T0 + 120_000, stale: false, ageSeconds: 0, version: 'v1', source: 'memory', key: `player:${tag}` } as Fetched<PlayerData>;
        },
        club: async () => Promise.reject(new Error('no clubs here')),
      },
      records: NO_RECORDS,
      renderer: { render: async (_job: RenderJob) => Buffer.from('png') },
      now: () => T0,
    });
    const { again } = await service.playerImage(tag, 1, 'low');
    expect(again!.png()!.toString()).toBe('png');
    // a WeakRef's target is kept until the current job ends
    await new Promise((r) => setTimeout(r, 0));
    setFlagsFromString('--expose-gc');
    (runInNewContext('gc') as () => void)();
    expect(copy).toBeDefined();
    expect(copy!.deref()).toBeUndefined();
    expect(again!.png()!.toString()).toBe('png');
  });
});
