/**
 * Single-flight and failure holds across the processes of a cluster (REDIS_URL): N api processes
 * asking for one player in the same second cause one upstream call, and a failure one of them saw
 * (maintenance, throttling, an outage) keeps the others from asking again while it holds. In one
 * process the StatsService's own SingleFlight and memo do this; this is the shared layer on top.
 *
 * The protocol, per cache key:
 *   1. `claim(key)`: SET flight:<key> NX PX ttl — the winner calls upstream, writes the shared cache,
 *      then `done(key)`: PUBLISH on the installation's channel and DEL its claim.
 *   2. A loser `wait(key, …)`s: until the holder's message arrives, or its claim expires (a holder
 *      that died blocks nobody beyond the claim's TTL), then it reads the shared cache.
 * The message is only a wake-up call: the answer is the cache entry, so a message lost in a Redis
 * hiccup costs a wait until the claim expires, never a wrong answer.
 */
import { randomUUID } from 'node:crypto';
import { connectRedis, type Redis, type RedisTarget } from '../store/redis.ts';
import { plainError, reviveError, type PlainUpstreamError, type UpstreamError } from '../upstream/errors.ts';
import type { Schedule } from '../lib/schedule.ts';

/** The key of a hold on everything (maintenance); cache keys always have a resource prefix. */
export const ALL_KEYS = '*all*';

export interface PeerFlights {
  /** True when this process should make the upstream call for `key` (no other process is making it). */
  claim(key: string): Promise<boolean>;
  /**
   * Resolves when the process holding `key`'s flight says it is done or its claim expires, or at once
   * when `ready()` (checked after listening starts, so a message sent just before is not missed).
   */
  wait(key: string, ready: () => Promise<boolean>): Promise<void>;
  /** This process's flight for `key` ended (the cache is written): wakes the others, frees the claim. */
  done(key: string): Promise<void>;
  /** Tells every process to leave `key` (or, with ALL_KEYS, every key) alone for ms, with this error. */
  hold(key: string, error: UpstreamError, ms: number): Promise<void>;
  /** The hold on `key` or on everything some process set, or null. */
  held(key: string): Promise<UpstreamError | null>;
  close(): Promise<void>;
}

export interface RedisPeerFlightsOptions {
  /**
   * How long a claim lasts when its holder never says it is done (it died): the longest a waiter
   * waits. The upstream client's timeout with retries fits in it, so a slow but living holder is not
   * overtaken.
   */
  claimMs: number;
  /** when a wait for a vanished holder ends (default: the wall clock) */
  schedule: Schedule;
}

export class RedisPeerFlights implements PeerFlights {
  private readonly sub: Redis;
  private readonly channel: string;
  private readonly waiters = new Map<string, Set<() => void>>();
  private readonly id = randomUUID();
  private subscribed: Promise<unknown>;

  constructor(
    private readonly client: Redis,
    target: RedisTarget,
    private readonly opts: RedisPeerFlightsOptions,
  ) {
    // Channels are not keys: ioredis does not prefix them, so the installation's prefix is added here.
    this.channel = `${target.prefix}flights`;
    this.sub = connectRedis(target, { name: 'starr-flights' });
    this.sub.on('message', (_channel: string, key: string) => this.wake(key));
    this.subscribed = this.sub.subscribe(this.channel).catch(() => undefined);
  }

  private wake(key: string): void {
    const set = this.waiters.get(key);
    if (!set) return;
    this.waiters.delete(key);
    for (const f of set) f();
  }

  async claim(key: string): Promise<boolean> {
    return (await this.client.set(`flight:${key}`, this.id, 'PX', this.opts.claimMs, 'NX')) === 'OK';
  }

  async wait(key: string, ready: () => Promise<boolean>): Promise<void> {
    await this.subscribed;
    let cancel: () => void = () => {};
    const woken = new Promise<void>((resolve) => {
      let set = this.waiters.get(key);
      if (!set) this.waiters.set(key, (set = new Set()));
      const done = () => {
        cancel();
        set!.delete(done);
        resolve();
      };
      set.add(done);
      // The holder's claim bounds the wait: when it expires unannounced the holder is gone.
      void this.client.pttl(`flight:${key}`).then(
        (ms) => {
          if (ms <= 0) done();
          else cancel = this.opts.schedule(ms, done);
        },
        () => done(),
      );
    });
    // Listening now; what happened before is in the cache.
    if (await ready().catch(() => false)) {
      this.wake(key);
    }
    await woken;
  }

  async done(key: string): Promise<void> {
    // Only the holder's own claim is deleted: a claim that expired and was taken stays with its new holder.
    await this.client.eval(`if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`, 1, `flight:${key}`, this.id);
    await this.client.publish(this.channel, key);
  }

  async hold(key: string, error: UpstreamError, ms: number): Promise<void> {
    await this.client.set(`hold:${key}`, JSON.stringify(plainError(error)), 'PX', Math.max(1, Math.round(ms)));
  }

  async held(key: string): Promise<UpstreamError | null> {
    const [all, one] = await this.client.mget(`hold:${ALL_KEYS}`, `hold:${key}`);
    const raw = all ?? one;
    if (!raw) return null;
    try {
      return reviveError(JSON.parse(raw) as PlainUpstreamError);
    } catch {
      return null;
    }
  }

  async close(): Promise<void> {
    for (const key of [...this.waiters.keys()]) this.wake(key);
    try {
      await this.sub.quit();
    } catch {
      this.sub.disconnect();
    }
  }
}
