/**
 * Fixed-window request counters (one window per client, starting at its first request), kept in
 * the cache store so limits survive a restart and, on Redis, are shared by every instance.
 *
 * - Redis: one atomic Lua call per request (INCR + PEXPIRE), so N instances count together.
 * - SQLite: counters live in memory and are written behind to keyv namespace 'ratelimit' every
 *   second and on close (a per-request SQLite write would cap the API at the disk's pace). A client
 *   seen for the first time is read back from the store, so a restart does not reset its window.
 *   Several processes on one SQLite file each count on their own: use Redis to run more than one.
 */
import type { Keyv, KeyvStores } from './keyv.ts';

export interface RateLimitState {
  /** requests allowed per window */
  limit: number;
  /** requests left in the current window after this one */
  remaining: number;
  /** whole seconds until the window resets (at least 1 while a window is open) */
  resetSeconds: number;
  /** false when this request is over the limit */
  allowed: boolean;
}

export interface RateLimiter {
  /** Counts one request of `id` and says whether it is allowed. */
  consume(id: string, limit: number): Promise<RateLimitState>;
  /** The current state of `id` without counting a request. */
  peek(id: string, limit: number): Promise<RateLimitState>;
  /**
   * `consume` without waiting, when the answer is at hand (a client already in memory); undefined
   * when it needs the store. Lets the hot path of the HTTP server skip a promise per request.
   */
  consumeNow?(id: string, limit: number): RateLimitState | undefined;
  /** Writes pending counters and stops the flush timer. */
  close(): Promise<void>;
}

export interface RateLimiterOptions {
  /** window length, default one minute */
  windowMs?: number;
  /** clock, default Date.now (tests pass a virtual one) */
  now?: () => number;
  /** how often in-memory counters are written to a SQLite store, default 1000 ms */
  flushMs?: number;
}

interface Window {
  count: number;
  resetAt: number;
}

const state = (limit: number, w: Window, now: number, allowed: boolean): RateLimitState => ({
  limit,
  remaining: Math.max(0, limit - w.count),
  resetSeconds: Math.max(1, Math.ceil((w.resetAt - now) / 1000)),
  allowed,
});

/** Counters in memory, written behind to a keyv namespace. */
export class KeyvRateLimiter implements RateLimiter {
  private readonly windows = new Map<string, Window>();
  private readonly loading = new Map<string, Promise<Window>>();
  private readonly dirty = new Set<string>();
  private readonly timer: NodeJS.Timeout;
  private readonly windowMs: number;
  private readonly now: () => number;

  constructor(
    private readonly kv: Keyv,
    opts: RateLimiterOptions = {},
  ) {
    this.windowMs = opts.windowMs ?? 60_000;
    this.now = opts.now ?? Date.now;
    this.timer = setInterval(() => void this.flush(), opts.flushMs ?? 1000);
    this.timer.unref();
  }

  private async window(id: string): Promise<Window> {
    const known = this.windows.get(id);
    if (known) return known;
    let pending = this.loading.get(id);
    if (!pending) {
      pending = (async () => {
        let stored: Window | undefined;
        try {
          stored = (await this.kv.get(id)) as Window | undefined;
        } catch {
          // An unreadable store must not take the API down: count from zero in memory.
        }
        const w = this.windows.get(id) ?? stored ?? { count: 0, resetAt: 0 };
        this.windows.set(id, w);
        this.loading.delete(id);
        return w;
      })();
      this.loading.set(id, pending);
    }
    return pending;
  }

  async consume(id: string, limit: number): Promise<RateLimitState> {
    return this.count(id, await this.window(id), limit);
  }

  consumeNow(id: string, limit: number): RateLimitState | undefined {
    const w = this.windows.get(id);
    return w ? this.count(id, w, limit) : undefined;
  }

  private count(id: string, w: Window, limit: number): RateLimitState {
    const now = this.now();
    if (now >= w.resetAt) {
      w.count = 0;
      w.resetAt = now + this.windowMs;
    }
    const allowed = w.count < limit;
    if (allowed) {
      w.count++;
      this.dirty.add(id);
    }
    return state(limit, w, now, allowed);
  }

  async peek(id: string, limit: number): Promise<RateLimitState> {
    const w = await this.window(id);
    const now = this.now();
    if (now >= w.resetAt) return state(limit, { count: 0, resetAt: now + this.windowMs }, now, true);
    return state(limit, w, now, w.count < limit);
  }

  /** Writes changed counters; forgets windows that are over so memory stays bounded. */
  async flush(): Promise<void> {
    const now = this.now();
    const writes: Promise<unknown>[] = [];
    for (const id of this.dirty) {
      const w = this.windows.get(id);
      if (w && w.resetAt > now) writes.push(this.kv.set(id, { ...w }, w.resetAt - now).catch(() => undefined));
    }
    this.dirty.clear();
    for (const [id, w] of this.windows) if (w.resetAt <= now) this.windows.delete(id);
    await Promise.all(writes);
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }
}

interface RedisEval {
  eval(script: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
}

// Counts the request and opens the window on the first one, atomically for every instance.
const CONSUME = `
local c = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]); ttl = tonumber(ARGV[1]) end
return {c, ttl}`;

const PEEK = `
local c = tonumber(redis.call('GET', KEYS[1]) or '0')
local ttl = redis.call('PTTL', KEYS[1])
return {c, ttl}`;

/** Counters in Redis, one atomic script call per request. */
export class RedisRateLimiter implements RateLimiter {
  private readonly windowMs: number;

  constructor(
    private readonly client: () => Promise<RedisEval>,
    private readonly prefix: string,
    opts: RateLimiterOptions = {},
  ) {
    this.windowMs = opts.windowMs ?? 60_000;
  }

  private async run(script: string, id: string): Promise<{ count: number; ttlMs: number }> {
    const client = await this.client();
    const [count, ttl] = (await client.eval(script, { keys: [`${this.prefix}${id}`], arguments: [String(this.windowMs)] })) as [
      number,
      number,
    ];
    return { count: Number(count), ttlMs: Number(ttl) < 0 ? this.windowMs : Number(ttl) };
  }

  async consume(id: string, limit: number): Promise<RateLimitState> {
    const { count, ttlMs } = await this.run(CONSUME, id);
    return state(limit, { count: Math.min(count, limit), resetAt: ttlMs }, 0, count <= limit);
  }

  async peek(id: string, limit: number): Promise<RateLimitState> {
    const { count, ttlMs } = await this.run(PEEK, id);
    return state(limit, { count: Math.min(count, limit), resetAt: ttlMs }, 0, count < limit);
  }

  async close(): Promise<void> {
    // The connection belongs to the keyv store, which closes it.
  }
}

/** The limiter for the configured cache store: Redis when the stores are on Redis, else keyv. */
export function createRateLimiter(stores: KeyvStores, opts: RateLimiterOptions = {}): RateLimiter {
  const kv = stores.namespace('ratelimit');
  if (stores.kind === 'redis') {
    const store = kv.store as { getClient(): Promise<RedisEval> };
    // the keys keyv's Redis adapter would give this namespace (a test suite's prefix included)
    return new RedisRateLimiter(() => store.getClient(), `${kv.namespace ?? 'ratelimit'}::`, opts);
  }
  return new KeyvRateLimiter(kv, opts);
}
