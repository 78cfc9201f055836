/**
 * A picture already drawn is answered without work proportional to what it shows: keyed by the
 * version of the data it is drawn from (and the art's revision), a hit reads nothing of the profile,
 * asks the art store for nothing and draws nothing; a matching If-None-Match is answered the same
 * way, with no bytes. New data (a new version) draws a new picture.
 */
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
    const art = { enabled: true, revision: 3, get: async () => (artReads++, {}) } as unknown as ArtStore;
    const service = new ImageService({
      stats: { player: async () => fetched(), club: async () => Promise.reject(new Error('no clubs here')) },
      records: NO_RECORDS,
      renderer: { render: async (_job: RenderJob) => (renders++, Buffer.from(`png ${renders}`)) },
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

    // another quality is another picture; new data is a new picture
    data = profile;
    await service.playerImage(tag, 1, 'medium');
    expect(renders).toBe(2);
    version = 'v2';
    const changed = await service.playerImage(tag, 1, 'low');
    expect([changed.cached, renders]).toEqual([false, 3]);
    expect(changed.etag).not.toBe(first.etag);
  });
});
