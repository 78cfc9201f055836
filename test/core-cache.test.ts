/**
 * The core's building blocks on their own: the two-level cache over a real SQLite keyv file
 * (memory bound, promotion from the store, the sweep of expired copies) and single-flight.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Sharing, stamp, TieredCache } from '../src/core/cache.ts';
import { SingleFlight } from '../src/core/singleflight.ts';
import { openKeyvStores, type KeyvStores } from '../src/store/keyv.ts';

let dir: string;
let stores: KeyvStores;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'starr-core-cache-'));
});
afterEach(async () => {
  await stores?.close();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function open(name: string): Promise<KeyvStores> {
  stores = await openKeyvStores(`sqlite://${join(dir, `${name}.sqlite`)}`);
  return stores;
}

describe('TieredCache', () => {
  it('keeps at most memoryBytes of content in memory and finds the rest in the store', async () => {
    // each entry: 1,002 bytes of JSON plus the 256-byte allowance per entry, so three fit in 4,000
    const cache = new TieredCache({ store: (await open('bound')).namespace('cache'), memoryBytes: 4_000, retainMs: 60_000 });
    const data = (i: number) => `${i}`.padEnd(1_000, 'x');
    for (let i = 0; i < 10; i++) {
      await cache.set(`k${i}`, { fetchedAt: i, data: data(i) });
      expect(cache.memoryBytes).toBeLessThanOrEqual(4_000);
    }
    expect(cache.memorySize).toBe(3);
    expect(cache.peek('k0')).toBeUndefined();
    expect(cache.peek('k9')).toMatchObject({ fetchedAt: 9, data: data(9), bytes: 1_002 });
    expect(await cache.get('k0')).toMatchObject({ entry: { fetchedAt: 0, data: data(0) }, from: 'store' });
    // Promoted: the next read of k0 is a memory hit, and the bound still holds.
    expect((await cache.get('k0'))?.from).toBe('memory');
    expect(cache.memorySize).toBe(3);
    // one entry larger than the whole layer stays in the store only, and evicts nothing
    await cache.set('big', { fetchedAt: 10, data: 'y'.repeat(5_000) });
    expect(cache.peek('big')).toBeUndefined();
    expect(cache.memorySize).toBe(3);
    expect((await cache.get('big'))?.from).toBe('store');
  });

  it('stamps each entry once with a version that depends on its content only', async () => {
    const a = stamp({ fetchedAt: 1, data: { name: 'Mortis', trophies: 700 } });
    const b = stamp({ fetchedAt: 2, data: { name: 'Mortis', trophies: 700 } });
    const c = stamp({ fetchedAt: 1, data: { name: 'Mortis', trophies: 701 } });
    expect(a.version).toBe(b.version);
    expect(a.version).not.toBe(c.version);
    expect(stamp({ fetchedAt: 1, missing: { message: 'gone' } }).version).not.toBe(stamp({ fetchedAt: 1, data: null }).version);
    // what the store hands back (a copy written with its version) keeps it
    const stored = { fetchedAt: 1, data: { x: 1 }, version: 'v-from-store', bytes: 7 };
    expect(stamp(stored).version).toBe('v-from-store');
  });

  it('holds what copies in memory repeat once, without changing their JSON, version or size', async () => {
    const cache = new TieredCache({ store: (await open('sharing')).namespace('cache'), memoryBytes: 1_000_000, retainMs: 60_000 });
    const profile = (tag: string) =>
      JSON.parse(
        JSON.stringify({
          tag,
          name: `player ${tag}`,
          brawlers: [
            { id: 1, name: 'SHELLY', gadgets: [{ id: 10, name: 'FAST FORWARD' }], gears: [] },
            { id: 2, name: 'COLT', gadgets: [{ id: 11, name: 'SPEEDLOADER' }], gears: [{ id: 5, name: 'DAMAGE', level: 3 }] },
          ],
          description: 'x'.repeat(200),
        }),
      ) as { name: string; brawlers: { name: string; gadgets: { id: number; name: string }[]; gears: { name: string }[] }[]; description: string };
    const a = profile('#A');
    const b = profile('#B');
    const json = [JSON.stringify(a), JSON.stringify(b)];
    await cache.set('a', { fetchedAt: 1, data: a });
    await cache.set('b', { fetchedAt: 1, data: b });
    const [ma, mb] = [cache.peek('a')!, cache.peek('b')!];
    expect([JSON.stringify(ma.data), JSON.stringify(mb.data)]).toEqual(json);
    expect(ma.version).toBe(stamp({ fetchedAt: 1, data: JSON.parse(json[0]!) }).version);
    expect(ma.bytes).toBe(json[0]!.length);
    const [pa, pb] = [ma.data as typeof a, mb.data as typeof b];
    // the gadget objects are one object, frozen; the brawlers (not leaves) stay each copy's own
    expect(pa.brawlers[0]!.gadgets[0]).toBe(pb.brawlers[0]!.gadgets[0]);
    expect(Object.isFrozen(pa.brawlers[1]!.gears[0])).toBe(true);
    expect(pa.brawlers[0]).not.toBe(pb.brawlers[0]);
    expect(() => {
      (pa.brawlers[0]!.gadgets[0] as { name: string }).name = 'changed';
    }).toThrow(TypeError);
    // the store keeps the same JSON, and a copy read back from it is shared the same way
    cache.clearMemory();
    const back = (await cache.get('b'))!;
    expect(back.from).toBe('store');
    expect(JSON.stringify(back.entry.data)).toBe(json[1]);
  });

  it('Sharing: equal small objects become one, long strings and larger objects are left alone, twice is once', () => {
    const sharing = new Sharing();
    const long = 'y'.repeat(100);
    const one = sharing.share({ items: [{ id: 1, name: 'A' }, { id: 1, name: 'A' }, { text: long }, { big: 'z'.repeat(200) }] });
    const two = sharing.share({ items: [{ id: 1, name: 'A' }, { id: 2, name: 'A' }] });
    expect(one.items[0]).toBe(one.items[1]);
    expect(two.items[0]).toBe(one.items[0]);
    expect(two.items[1]).not.toBe(two.items[0]);
    expect(Object.isFrozen(one.items[3])).toBe(false);
    expect(sharing.share(one)).toBe(one);
    expect(one).toEqual({ items: [{ id: 1, name: 'A' }, { id: 1, name: 'A' }, { text: long }, { big: 'z'.repeat(200) }] });
    expect(sharing.share('text')).toBe('text');
    expect(sharing.share(null)).toBe(null);
  });

  it('works without a memory layer, and without a store', async () => {
    const storeOnly = new TieredCache({ store: (await open('nomem')).namespace('cache'), memoryBytes: 0, retainMs: 60_000 });
    await storeOnly.set('a', { fetchedAt: 1, data: 'x' });
    expect(storeOnly.memorySize).toBe(0);
    expect((await storeOnly.get('a'))?.from).toBe('store');
    const memoryOnly = new TieredCache({ memoryBytes: 1_000_000, retainMs: 60_000 });
    await memoryOnly.set('a', { fetchedAt: 1, data: 'x' });
    expect((await memoryOnly.get('a'))?.from).toBe('memory');
    expect(await memoryOnly.get('b')).toBeUndefined();
  });

  it('sweeps copies past their retention from SQLite, and only its own namespace', async () => {
    const kv = await open('sweep');
    const other = kv.namespace('apikeys');
    await other.set('keep', 'me', 1);
    const cache = new TieredCache({ store: kv.namespace('cache'), memoryBytes: 0, retainMs: 1_000 });
    // Sweep as of the instant before the writes: every row then has its whole second of
    // retention left, however long the writes took on a busy machine.
    const before = Date.now();
    for (let i = 0; i < 5; i++) await cache.set(`p${i}`, { fetchedAt: i, data: i });
    expect(await cache.sweep(before)).toBe(0);
    expect(await cache.sweep(Date.now() + 2_000)).toBe(5);
    expect(await cache.get('p0')).toBeUndefined();
    const raw = kv.namespace('apikeys').store as { query(sql: string): Promise<{ n: number }[]> };
    expect((await raw.query("SELECT count(*) AS n FROM keyv WHERE key = 'apikeys:keep'"))[0]!.n).toBe(1);
  });
});

describe('SingleFlight', () => {
  it('shares one load among concurrent callers of a key, and forgets it once settled', async () => {
    const flights = new SingleFlight<number>();
    let loads = 0;
    let release!: (v: number) => void;
    const load = () => {
      loads++;
      return new Promise<number>((r) => (release = r));
    };
    const waiting = [flights.run('a', load), flights.run('a', load), flights.run('a', load)];
    const other = flights.run('b', async () => 7);
    expect(loads).toBe(1);
    expect(flights.size).toBe(2);
    release(42);
    expect(await Promise.all(waiting)).toEqual([42, 42, 42]);
    expect(await other).toBe(7);
    expect(flights.size).toBe(0);
  });

  it('shares a failure, and a synchronous throw becomes a rejection', async () => {
    const flights = new SingleFlight<number>();
    const boom = () => {
      throw new Error('boom');
    };
    const [a, b] = await Promise.allSettled([flights.run('x', boom), flights.run('x', boom)]);
    expect(a).toMatchObject({ status: 'rejected', reason: new Error('boom') });
    expect(b).toMatchObject({ status: 'rejected', reason: new Error('boom') });
    expect(flights.size).toBe(0);
  });
});
