/**
 * Claims and leases, the cluster's "once across processes": the in-memory one of a single process
 * and the Redis one (REDIS_URL, each run under its own key prefix, deleted after) answer alike.
 * And `starr serve --role` refuses to run a part of a cluster without the stores it shares.
 */
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import { MemoryCoordination, openCoordination, type Coordination } from '../src/core/coordination.ts';
import { connectRedis } from '../src/store/redis.ts';
import { IDENTIFY_TURN_MS, SharedIdentifyThrottler } from '../src/bot/identify.ts';
import { ManualSchedule } from './support/manual-schedule.ts';
import { RUN_REDIS } from './support/stores.ts';

function contract(name: string, open: () => Coordination) {
  describe(name, () => {
    const c = open();
    const held = new ManualSchedule();
    afterAll(() => c.close());

    it('grants a claim to the first caller only, until it expires', async () => {
      const key = `board:${randomUUID()}`;
      const answers = await Promise.all(Array.from({ length: 8 }, () => c.claim(key, 60_000)));
      expect(answers.filter(Boolean)).toHaveLength(1);
      expect(await c.claim(`${key}:next-period`, 60_000)).toBe(true);
    });

    it('leases a lock to one holder; only the holder renews or releases it', async () => {
      const name = `sync:${randomUUID()}`;
      const first = await c.tryLock(name, 60_000);
      expect(first).not.toBeNull();
      expect(await c.tryLock(name, 60_000)).toBeNull();
      expect(await first!.renew(60_000)).toBe(true);
      await first!.release();
      const second = await c.tryLock(name, 60_000);
      expect(second).not.toBeNull();
      // the former holder can no longer touch it
      await first!.release();
      expect(await first!.renew(60_000)).toBe(false);
      expect(await c.tryLock(name, 60_000)).toBeNull();
      await second!.release();
    });

    it('tells a loser how long the winning claim still runs', async () => {
      const key = `identify:${randomUUID()}`;
      expect(await c.claimExpiresIn(key)).toBe(0);
      expect(await c.claim(key, 60_000)).toBe(true);
      const left = await c.claimExpiresIn(key);
      expect(left).toBeGreaterThan(0);
      expect(left).toBeLessThanOrEqual(60_000);
    });

    it('gives each identify bucket one turn per window, across throttlers sharing the store', async () => {
      // Two throttlers on one coordination = two bot processes on one Redis (or one process, in memory).
      const appId = randomUUID();
      const waits: [number, number][] = [];
      const a = new SharedIdentifyThrottler(c, appId, 2);
      const b = new SharedIdentifyThrottler(c, appId, 2, { onWait: (shard, ms) => waits.push([shard, ms]), schedule: held.schedule });
      const never = new AbortController().signal;
      await a.waitForIdentify(0, never);
      await b.waitForIdentify(1, never); // bucket 1: its own turn
      const aborted = new AbortController();
      const third = b.waitForIdentify(2, aborted.signal); // bucket 0 again: waits for a's window
      await held.next();
      expect(waits.map(([shard]) => shard)).toEqual([2]);
      expect(waits[0]![1]).toBeGreaterThan(0);
      expect(waits[0]![1]).toBeLessThanOrEqual(IDENTIFY_TURN_MS + 25);
      aborted.abort(new Error('shutting down'));
      await expect(third).rejects.toThrow('shutting down');
      expect(held.pending).toEqual([]);
    });

    it('answers a ping', async () => {
      expect(await c.ping()).toBe(true);
    });
  });
}

contract('in one process (memory)', () => new MemoryCoordination('all'));

describe('identify turns without the shared store', () => {
  it('waits a whole turn and lets the shard identify when Redis does not answer', async () => {
    const down = openCoordination(loadConfig({ ROLE: 'bot', REDIS_URL: 'redis://127.0.0.1:1' }));
    down.client!.on('error', () => undefined); // the refused connections are the point here
    const held = new ManualSchedule();
    const failures: unknown[] = [];
    const th = new SharedIdentifyThrottler(down, 'app', 1, { schedule: held.schedule, onUnshared: (_s, e) => failures.push(e) });
    try {
      const identified = th.waitForIdentify(0, new AbortController().signal);
      await held.next();
      expect(held.pending).toEqual([IDENTIFY_TURN_MS]);
      expect(failures).toHaveLength(1);
      held.fire();
      await identified;
    } finally {
      await down.close();
    }
  });
});

describe('identify turns in memory follow the core clock', () => {
  it('lets the bucket identify again once its window has passed', async () => {
    let t = 1_000;
    const c = new MemoryCoordination('all', () => t);
    const held = new ManualSchedule();
    const th = new SharedIdentifyThrottler(c, 'app', 1, { schedule: held.schedule });
    const never = new AbortController().signal;
    await th.waitForIdentify(0, never);
    let second = false;
    const next = th.waitForIdentify(1, never).then(() => (second = true));
    await held.next();
    expect(held.pending).toEqual([IDENTIFY_TURN_MS + 25]);
    t += 1_000;
    held.fire(); // woke too early (a clock that moved less): waits the rest
    await held.next();
    expect(held.pending).toEqual([IDENTIFY_TURN_MS - 1_000 + 25]);
    expect(second).toBe(false);
    t += IDENTIFY_TURN_MS;
    held.fire();
    await next;
    expect(second).toBe(true);
  });
});

describe('memory expiry follows the core clock', () => {
  it('frees a claim once its time has passed', async () => {
    let t = 1_000;
    const c = new MemoryCoordination('all', () => t);
    expect(await c.claim('k', 100)).toBe(true);
    expect(await c.claim('k', 100)).toBe(false);
    t += 100;
    expect(await c.claim('k', 100)).toBe(true);
  });
});

describe.runIf(RUN_REDIS)('on Redis', () => {
  const prefix = `test:coord:${randomUUID()}:`;
  const config = loadConfig({ ROLE: 'worker', REDIS_URL: process.env.REDIS_URL, REDIS_PREFIX: prefix });
  afterAll(async () => {
    const r = connectRedis({ url: process.env.REDIS_URL!, prefix: '' });
    const keys = await r.keys(`${prefix}*`);
    if (keys.length) await r.del(...keys);
    await r.quit();
  });
  contract('shared (Redis)', () => openCoordination(config));

  it('keeps every key under the prefix', async () => {
    const c = openCoordination(config);
    await c.claim('visible', 60_000);
    const r = connectRedis({ url: process.env.REDIS_URL!, prefix: '' });
    expect(await r.exists(`${prefix}claim:visible`)).toBe(1);
    await r.quit();
    await c.close();
  });
});

describe('starr serve --role', () => {
  const serve = (args: string[], env: Record<string, string> = {}) =>
    spawnSync(process.execPath, ['bin/starr.js', 'serve', ...args], {
      env: { PATH: process.env.PATH ?? '', DATA_DIR: '/nonexistent-starr-test', ...env },
      encoding: 'utf8',
      timeout: 60_000,
    });

  it('refuses a part of a cluster without the shared stores, naming what is missing', () => {
    const r = serve(['--role', 'worker']);
    expect(r.status).toBe(78);
    expect(r.stderr).toContain('ROLE=worker runs as one part of a cluster');
    expect(r.stderr).toContain('DATABASE_URL (postgres://…) and REDIS_URL (redis://…)');
    const api = serve([], { ROLE: 'api', REDIS_URL: 'redis://127.0.0.1:6379' });
    expect(api.status).toBe(78);
    expect(api.stderr).toContain('set DATABASE_URL (postgres://…).');
  });

  it('rejects an unknown role with the usage', () => {
    const r = serve(['--role', 'poller']);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('--role expects one of all, api, worker, bot');
  });
});
