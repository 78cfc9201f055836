/**
 * The shared request budget on a virtual clock: rate per token, round-robin, throttled tokens
 * skipped, interactive before polling, a bounded queue, refusal instead of endless waiting. And
 * the same buckets shared by two processes through Redis (REDIS_URL, a key prefix of this run,
 * deleted after; under CI=true Redis must be there).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { RequestBudget, type UpstreamClock } from '../src/upstream/budget.ts';
import { ThrottledError } from '../src/upstream/errors.ts';
import { bucketKey, RedisBuckets } from '../src/upstream/shared-budget.ts';
import { connectRedis } from '../src/store/redis.ts';

/** Sleeping moves virtual time forward at once. */
function virtualClock(start = 1_000_000): UpstreamClock & { t: number } {
  const c = {
    t: start,
    now: () => c.t,
    sleep: async (ms: number) => {
      c.t += ms;
    },
  };
  return c;
}

describe('RequestBudget', () => {
  it('hands out tokens round-robin', async () => {
    const b = new RequestBudget({ tokens: 3, rps: 100, clock: virtualClock() });
    const got: number[] = [];
    for (let i = 0; i < 7; i++) got.push(await b.acquire('interactive'));
    expect(got).toEqual([0, 1, 2, 0, 1, 2, 0]);
  });

  it('lets a token send at most rps per second after its burst', async () => {
    const clock = virtualClock();
    const b = new RequestBudget({ tokens: 1, rps: 5, clock });
    const start = clock.t;
    const times: number[] = [];
    for (let i = 0; i < 15; i++) {
      await b.acquire('poll');
      times.push(clock.t - start);
    }
    // A one-second burst of 5, then one every 200 ms.
    expect(times.slice(0, 5)).toEqual([0, 0, 0, 0, 0]);
    expect(times.slice(5)).toEqual([200, 400, 600, 800, 1000, 1200, 1400, 1600, 1800, 2000]);
    const inFirstTwoSeconds = times.filter((t) => t < 2000).length;
    expect(inFirstTwoSeconds).toBeLessThanOrEqual(5 + 2 * 5);
  });

  it('skips a throttled token until its penalty ends, then runs it slower', async () => {
    const clock = virtualClock();
    const b = new RequestBudget({ tokens: 2, rps: 100, clock });
    b.penalise(1, 30_000);
    const early: number[] = [];
    for (let i = 0; i < 6; i++) early.push(await b.acquire('interactive'));
    expect(early).not.toContain(1);
    expect(b.tokens()[1]).toMatchObject({ throttled: 1, penaltyUntil: clock.t + 30_000, speed: 0.5 });
    clock.t += 30_001;
    const later: number[] = [];
    for (let i = 0; i < 4; i++) later.push(await b.acquire('interactive'));
    expect(later).toContain(1);
    b.succeeded(1);
    expect(b.tokens()[1]!.speed).toBeGreaterThan(0.5);
  });

  it('serves waiting interactive requests before waiting polling ones', async () => {
    const clock = virtualClock();
    const b = new RequestBudget({ tokens: 1, rps: 1, clock });
    await b.acquire('poll');
    const order: string[] = [];
    const waits = [
      b.acquire('poll').then(() => order.push('poll-1')),
      b.acquire('poll').then(() => order.push('poll-2')),
      b.acquire('interactive').then(() => order.push('interactive')),
    ];
    expect(b.queued).toBe(3);
    await Promise.all(waits);
    expect(order).toEqual(['interactive', 'poll-1', 'poll-2']);
  });

  it('keeps its queue bounded: a full queue refuses polling, and makes room for an interactive request', async () => {
    const clock = virtualClock();
    // A sleep that never ends on its own keeps waiters queued while we look.
    const stuck: UpstreamClock = { now: clock.now, sleep: (_ms, signal) => new Promise((_r, reject) => signal?.addEventListener('abort', () => reject(signal.reason))) };
    const b = new RequestBudget({ tokens: 1, rps: 1, maxQueue: 2, clock: stuck });
    await b.acquire('poll');
    const p1 = b.acquire('poll');
    const p2 = b.acquire('poll');
    await expect(b.acquire('poll')).rejects.toBeInstanceOf(ThrottledError);
    expect(b.queued).toBe(2);
    const i1 = b.acquire('interactive');
    expect(b.queued).toBe(2);
    await expect(p2).rejects.toThrow(/interactive request took its place/);
    b.close();
    await expect(p1).rejects.toBeInstanceOf(ThrottledError);
    await expect(i1).rejects.toBeInstanceOf(ThrottledError);
  });

  it('refuses at once, with a Retry-After, when no token frees up within the wait allowed', async () => {
    const clock = virtualClock();
    const b = new RequestBudget({ tokens: 2, rps: 10, clock });
    b.penalise(0, 60_000);
    b.penalise(1, 45_000);
    const err = await b.acquire('interactive', { maxWaitMs: 5_000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ThrottledError);
    expect((err as ThrottledError).retryAfterSeconds).toBe(45);
    // A poller willing to wait gets the token that frees first.
    expect(await b.acquire('poll', { maxWaitMs: 120_000 })).toBe(1);
  });

  it('drops a waiter whose signal aborts', async () => {
    const clock = virtualClock();
    const stuck: UpstreamClock = { now: clock.now, sleep: (_ms, signal) => new Promise((_r, reject) => signal?.addEventListener('abort', () => reject(signal.reason))) };
    const b = new RequestBudget({ tokens: 1, rps: 1, clock: stuck });
    await b.acquire('poll');
    const ac = new AbortController();
    const waiting = b.acquire('interactive', { signal: ac.signal });
    expect(b.queued).toBe(1);
    ac.abort(new Error('user went away'));
    await expect(waiting).rejects.toThrow('user went away');
    expect(b.queued).toBe(0);
    b.close();
  });
});

const REDIS_URL = process.env.REDIS_URL;
const inCi = process.env.CI === 'true' || process.env.CI === '1';

describe.skipIf(!REDIS_URL && !inCi)('RequestBudget shared by two processes (Redis)', () => {
  const prefix = `starr_budget_${randomUUID().slice(0, 8)}:`;
  const target = { url: REDIS_URL ?? 'redis://127.0.0.1:6379', prefix };
  const clients = [connectRedis(target), connectRedis(target)];
  const raw = connectRedis({ ...target, prefix: '' });
  afterAll(async () => {
    const keys = await raw.keys(`${prefix}*`);
    if (keys.length > 0) await raw.del(...keys);
    await Promise.all([...clients, raw].map((c) => c.quit()));
  });

  /** Two processes' budgets over the same tokens, on one virtual clock. */
  function pair(tokens: string[], rps: number) {
    const clock = virtualClock();
    const [a, b] = clients.map((c) => new RequestBudget({ tokens: tokens.length, rps, clock, shared: new RedisBuckets(c, tokens) })) as [RequestBudget, RequestBudget];
    return { clock, a, b };
  }

  it('both together send at most rps per token, polls leaving a fifth of the burst to users', async () => {
    const { clock, a, b } = pair([`token-${randomUUID()}`], 5);
    const start = clock.t;
    const times: number[] = [];
    for (let i = 0; i < 12; i++) {
      await (i % 2 ? a : b).acquire('poll');
      times.push(clock.t - start);
    }
    // 4 at once (one place of the burst of 5 kept for users), then one every 200 ms across both
    expect(times).toEqual([0, 0, 0, 0, 200, 400, 600, 800, 1000, 1200, 1400, 1600]);
    // a user's request finds the place the polls left
    const before = clock.t;
    await a.acquire('interactive');
    expect(clock.t).toBe(before);
    a.close();
    b.close();
  });

  it("a token one process saw throttled is skipped by the other until the penalty ends", async () => {
    const tokens = [`token-${randomUUID()}`, `token-${randomUUID()}`];
    const { clock, a, b } = pair(tokens, 100);
    a.penalise(0, 5_000);
    // the penalty reaches Redis before b asks (penalise does not wait for it)
    await clients[0]!.ping();
    const start = clock.t;
    const got: number[] = [];
    for (let i = 0; i < 4; i++) got.push(await b.acquire('interactive'));
    expect(got).toEqual([1, 1, 1, 1]);
    expect(clock.t).toBe(start);
    a.close();
    b.close();
  });

  it('keys each bucket by a digest of its token, never the token', async () => {
    const token = `secret-token-${randomUUID()}`;
    const { a } = pair([token], 10);
    await a.acquire('interactive');
    const keys = await raw.keys(`${prefix}*`);
    expect(keys).toContain(`${prefix}${bucketKey(token)}`);
    expect(keys.some((k) => k.includes(token))).toBe(false);
    a.close();
  });

  it('falls back to its own buckets when Redis fails', async () => {
    // a connection that is gone: every command fails at once
    const broken = connectRedis(target);
    broken.disconnect();
    const clock = virtualClock();
    const b = new RequestBudget({ tokens: 1, rps: 5, clock, shared: new RedisBuckets(broken, ['t']) });
    const start = clock.t;
    const times: number[] = [];
    for (let i = 0; i < 7; i++) {
      await b.acquire('poll');
      times.push(clock.t - start);
    }
    expect(times).toEqual([0, 0, 0, 0, 0, 200, 400]);
    b.close();
  });
});
