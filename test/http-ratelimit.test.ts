/** Rate-limit counters (src/store/ratelimit.ts): SQLite write-behind and Redis atomic. */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openKeyvStores, type KeyvStores } from '../src/store/keyv.ts';
import { createRateLimiter, KeyvRateLimiter, RedisRateLimiter } from '../src/store/ratelimit.ts';
import { RUN_REDIS } from './support/stores.ts';

describe('rate limiter on SQLite', () => {
  let dir: string;
  let stores: KeyvStores;
  let t: number;
  const now = () => t;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'starr-rl-'));
    stores = await openKeyvStores(`sqlite://${join(dir, 'cache.sqlite')}`);
    t = Date.UTC(2026, 0, 1);
  });
  afterEach(async () => {
    await stores.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('allows the limit, refuses the next request, and opens a new window after a minute', async () => {
    const rl = createRateLimiter(stores, { now });
    expect(rl).toBeInstanceOf(KeyvRateLimiter);
    const states = [];
    for (let i = 0; i < 4; i++) states.push(await rl.consume('ip:1', 3));
    expect(states.map((s) => [s.allowed, s.remaining])).toEqual([
      [true, 2],
      [true, 1],
      [true, 0],
      [false, 0],
    ]);
    t += 42_000;
    expect(await rl.consume('ip:1', 3)).toMatchObject({ allowed: false, resetSeconds: 18 });
    expect(await rl.consume('ip:2', 3)).toMatchObject({ allowed: true, remaining: 2, resetSeconds: 60 });
    t += 18_000;
    expect(await rl.consume('ip:1', 3)).toMatchObject({ allowed: true, remaining: 2 });
    await rl.close();
  });

  it('peeks without counting', async () => {
    const rl = createRateLimiter(stores, { now });
    await rl.consume('k', 5);
    expect(await rl.peek('k', 5)).toMatchObject({ allowed: true, remaining: 4 });
    expect(await rl.peek('k', 5)).toMatchObject({ remaining: 4 });
    expect(await rl.peek('never-seen', 5)).toMatchObject({ allowed: true, remaining: 5 });
    await rl.close();
  });

  it('keeps a window across a restart', async () => {
    const first = createRateLimiter(stores, { now });
    await first.consume('ip:9', 3);
    await first.consume('ip:9', 3);
    await first.close();
    await stores.close();
    stores = await openKeyvStores(`sqlite://${join(dir, 'cache.sqlite')}`);
    const second = createRateLimiter(stores, { now });
    expect(await second.consume('ip:9', 3)).toMatchObject({ allowed: true, remaining: 0 });
    expect(await second.consume('ip:9', 3)).toMatchObject({ allowed: false });
    await second.close();
  });
});

describe.runIf(RUN_REDIS)('rate limiter on Redis', () => {
  let stores: KeyvStores;
  beforeEach(async () => {
    stores = await openKeyvStores(process.env.REDIS_URL!);
  });
  afterEach(async () => {
    await stores.close();
  });

  it('counts atomically across instances sharing the store', async () => {
    const a = createRateLimiter(stores);
    const b = createRateLimiter(stores);
    expect(a).toBeInstanceOf(RedisRateLimiter);
    const id = `test:${randomUUID()}`;
    const results = await Promise.all(Array.from({ length: 25 }, (_, i) => (i % 2 ? a : b).consume(id, 10)));
    expect(results.filter((r) => r.allowed)).toHaveLength(10);
    expect(results.every((r) => r.resetSeconds >= 1 && r.resetSeconds <= 60)).toBe(true);
    expect(await a.peek(id, 10)).toMatchObject({ allowed: false, remaining: 0 });
    expect(await b.peek(`test:${randomUUID()}`, 10)).toMatchObject({ allowed: true, remaining: 10 });
  });
});
