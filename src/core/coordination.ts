/**
 * What the processes of one installation agree on: who does a scheduled thing this time (a claim),
 * who holds a piece of work now (a lease). In one process (ROLE=all without REDIS_URL) that is
 * memory; in a cluster it is the shared Redis, so a board is edited, a feed post made, a poll run
 * once across every process.
 *
 *   if (await core.coordination.claim(`board:${id}:${windowStart}`, intervalMs)) await refresh(id);
 *
 *   const lease = await core.coordination.tryLock(`sync:${guildId}`, 30_000);
 *   if (lease) try { … } finally { await lease.release(); }
 */
import { randomUUID } from 'node:crypto';
import type { Config, Role } from '../config.ts';
import { connectRedis, normalisePrefix, type Redis, type RedisTarget } from '../store/redis.ts';

export interface Lease {
  readonly name: string;
  /** extends the lease by ttlMs from now; false when it was lost (expired and taken) */
  renew(ttlMs: number): Promise<boolean>;
  /** gives it up (only if still ours) */
  release(): Promise<void>;
}

export interface Coordination {
  /** what this process runs */
  readonly role: Role;
  /** 'redis' when the processes of a cluster share it; 'memory' for one process */
  readonly kind: 'memory' | 'redis';
  /** where the shared Redis is, for parts that open connections of their own (BullMQ); null in memory */
  readonly redis: RedisTarget | null;
  /** the command connection (keys under the prefix); null in memory */
  readonly client: Redis | null;
  /**
   * True for exactly one caller per `key` until ttlMs pass (SET NX PX): the way to do a scheduled
   * thing once per period across processes (put the period's start in the key).
   */
  claim(key: string, ttlMs: number): Promise<boolean>;
  /** Milliseconds until the claim on `key` runs out; 0 when nobody holds it (so a loser knows how long to wait). */
  claimExpiresIn(key: string): Promise<number>;
  /** A lease on `name` for ttlMs, or null while another holder has it. */
  tryLock(name: string, ttlMs: number): Promise<Lease | null>;
  /** true when the shared store answers (always true in memory) */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

/** One process: claims and leases in a map, with the core's clock. */
export class MemoryCoordination implements Coordination {
  readonly kind = 'memory' as const;
  readonly redis = null;
  readonly client = null;
  private readonly held = new Map<string, { token: string; until: number }>();

  constructor(
    readonly role: Role = 'all',
    private readonly now: () => number = Date.now,
  ) {}

  private take(key: string, ttlMs: number, token: string): boolean {
    const t = this.now();
    const cur = this.held.get(key);
    if (cur && cur.until > t) return false;
    this.held.set(key, { token, until: t + ttlMs });
    if (this.held.size > 10_000) for (const [k, v] of this.held) if (v.until <= t) this.held.delete(k);
    return true;
  }

  async claim(key: string, ttlMs: number): Promise<boolean> {
    return this.take(`claim:${key}`, ttlMs, '');
  }

  async claimExpiresIn(key: string): Promise<number> {
    const cur = this.held.get(`claim:${key}`);
    return cur ? Math.max(0, cur.until - this.now()) : 0;
  }

  async tryLock(name: string, ttlMs: number): Promise<Lease | null> {
    const key = `lock:${name}`;
    const token = randomUUID();
    if (!this.take(key, ttlMs, token)) return null;
    const mine = () => {
      const cur = this.held.get(key);
      return cur !== undefined && cur.token === token && cur.until > this.now();
    };
    return {
      name,
      renew: async (ms) => {
        if (!mine()) return false;
        this.held.set(key, { token, until: this.now() + ms });
        return true;
      },
      release: async () => {
        if (this.held.get(key)?.token === token) this.held.delete(key);
      },
    };
  }

  async ping(): Promise<boolean> {
    return true;
  }

  async close(): Promise<void> {
    this.held.clear();
  }
}

// Compare-and-set on the holder's token, so a lease that expired and was taken by another process
// is never extended or deleted by its former holder.
const RENEW = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end`;
const RELEASE = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`;

/** A cluster: claims and leases as Redis keys with expiry. */
export class RedisCoordination implements Coordination {
  readonly kind = 'redis' as const;
  readonly client: Redis;

  constructor(
    readonly role: Role,
    readonly redis: RedisTarget,
  ) {
    this.client = connectRedis(redis, { name: `starr-${role}` });
  }

  async claim(key: string, ttlMs: number): Promise<boolean> {
    return (await this.client.set(`claim:${key}`, '1', 'PX', Math.max(1, Math.round(ttlMs)), 'NX')) === 'OK';
  }

  async claimExpiresIn(key: string): Promise<number> {
    // PTTL: -2 no key, -1 no expiry (never written so here)
    return Math.max(0, await this.client.pttl(`claim:${key}`));
  }

  async tryLock(name: string, ttlMs: number): Promise<Lease | null> {
    const key = `lock:${name}`;
    const token = randomUUID();
    if ((await this.client.set(key, token, 'PX', Math.max(1, Math.round(ttlMs)), 'NX')) !== 'OK') return null;
    return {
      name,
      renew: async (ms) => Number(await this.client.eval(RENEW, 1, key, token, String(Math.max(1, Math.round(ms))))) === 1,
      release: async () => {
        await this.client.eval(RELEASE, 1, key, token);
      },
    };
  }

  async ping(): Promise<boolean> {
    try {
      return (await this.client.ping()) === 'PONG';
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    try {
      await this.client.quit();
    } catch {
      this.client.disconnect();
    }
  }
}

/**
 * The coordination of a configuration: the shared Redis when REDIS_URL is set (keys under
 * REDIS_PREFIX, or `prefix` — tests give each suite its own), memory otherwise.
 */
export function openCoordination(config: Pick<Config, 'ROLE' | 'REDIS_URL' | 'REDIS_PREFIX'>, opts: { prefix?: string; now?: () => number } = {}): Coordination {
  if (!config.REDIS_URL) return new MemoryCoordination(config.ROLE, opts.now);
  return new RedisCoordination(config.ROLE, { url: config.REDIS_URL, prefix: normalisePrefix(opts.prefix ?? config.REDIS_PREFIX) });
}
