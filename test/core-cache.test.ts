/**
 * The core's building blocks on their own: the two-level cache over a real SQLite keyv file
 * (memory bound, promotion from the store, the sweep of expired copies) and single-flight.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { TieredCache } from '../src/core/cache.ts';
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

function open(name: string): KeyvStores {
  stores = openKeyvStores(`sqlite://${join(dir, `${name}.sqlite`)}`);
  return stores;
}

describe('TieredCache', () => {
  it('keeps at most memoryItems in memory and finds the rest in the store', async () => {
    const cache = new TieredCache({ store: open('bound').namespace('cache'), memoryItems: 3, retainMs: 60_000 });
    for (let i = 0; i < 10; i++) {
      await cache.set(`k${i}`, { fetchedAt: i, data: { i } });
      expect(cache.memorySize).toBeLessThanOrEqual(3);
    }
    expect(cache.peek('k0')).toBeUndefined();
    expect(cache.peek('k9')).toEqual({ fetchedAt: 9, data: { i: 9 } });
    expect(await cache.get('k0')).toEqual({ entry: { fetchedAt: 0, data: { i: 0 } }, from: 'store' });
    // Promoted: the next read of k0 is a memory hit, and the bound still holds.
    expect((await cache.get('k0'))?.from).toBe('memory');
    expect(cache.memorySize).toBe(3);
  });

  it('works without a memory layer, and without a store', async () => {
    const storeOnly = new TieredCache({ store: open('nomem').namespace('cache'), memoryItems: 0, retainMs: 60_000 });
    await storeOnly.set('a', { fetchedAt: 1, data: 'x' });
    expect(storeOnly.memorySize).toBe(0);
    expect((await storeOnly.get('a'))?.from).toBe('store');
    const memoryOnly = new TieredCache({ memoryItems: 2, retainMs: 60_000 });
    await memoryOnly.set('a', { fetchedAt: 1, data: 'x' });
    expect((await memoryOnly.get('a'))?.from).toBe('memory');
    expect(await memoryOnly.get('b')).toBeUndefined();
  });

  it('sweeps copies past their retention from SQLite, and only its own namespace', async () => {
    const kv = open('sweep');
    const other = kv.namespace('apikeys');
    await other.set('keep', 'me', 1);
    const cache = new TieredCache({ store: kv.namespace('cache'), memoryItems: 0, retainMs: 1_000 });
    for (let i = 0; i < 5; i++) await cache.set(`p${i}`, { fetchedAt: i, data: i });
    expect(await cache.sweep(Date.now())).toBe(0);
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
