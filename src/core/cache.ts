/**
 * The core's two-level response cache: a bounded in-process LRU in front of the shared keyv store
 * (namespace 'cache': a SQLite file, or Redis when several processes share it). The memory layer
 * makes warm reads sub-millisecond; the store survives restarts and is shared across processes.
 *
 * Entries keep the time they came from upstream, not an expiry: freshness is the reader's call
 * (TTL per resource), and the same entry serves as the last good copy when upstream fails, so the
 * store keeps entries for a retention period far longer than the TTL.
 */
import { createHash } from 'node:crypto';
import type Keyv from 'keyv';
import type { Logger } from '../log.ts';
import { Lru } from '../lib/lru.ts';

export interface CacheEntry {
  /** epoch ms when this copy came from upstream */
  fetchedAt: number;
  /** epoch ms when it stops being fresh, when sooner than the resource's TTL (the rotation: the next event end) */
  expiresAt?: number;
  /** the upstream body as parsed (absent for a remembered 404) */
  data?: unknown;
  /** upstream said 404: the message, remembered so repeated misses don't reach upstream */
  missing?: { message: string; reason?: string };
  /**
   * A digest of the content (see `stamp`): equal for equal data, whichever process fetched it.
   * What pictures and other derived answers are keyed by, so a cached one is found without
   * looking at the data again.
   */
  version?: string;
  /** size of the content as JSON, what the memory layer's byte bound counts */
  bytes?: number;
}

/**
 * Gives an entry its version and size, once: one JSON.stringify and a SHA-1 when the copy arrives
 * (from upstream, or from a store written before entries carried them), never on a read.
 */
export function stamp(entry: CacheEntry): CacheEntry {
  if (entry.version === undefined || entry.bytes === undefined) {
    const text = JSON.stringify(entry.missing ? { missing: entry.missing } : (entry.data ?? null));
    entry.version = createHash('sha1').update(text).digest('base64url').slice(0, 20);
    entry.bytes = text.length;
  }
  return entry;
}

/** What an entry weighs in memory: its JSON size plus a fixed allowance for the entry itself. */
const weigh = (entry: CacheEntry) => (entry.bytes ?? 0) + 256;

export interface TieredCacheOptions {
  /** the keyv namespace 'cache'; without one only the memory layer is used */
  store?: Keyv;
  /**
   * bytes of content (as JSON) in memory at most (0: no memory layer). The parsed copies take
   * about 1.5× that on the heap (500 simulated players: 28.7 MB of JSON, 43.1 MB of heap).
   */
  memoryBytes: number;
  /** how long the store keeps an entry (the last good copy), milliseconds */
  retainMs: number;
  logger?: Logger;
}

function isEntry(v: unknown): v is CacheEntry {
  return typeof v === 'object' && v !== null && typeof (v as CacheEntry).fetchedAt === 'number';
}

export class TieredCache {
  private readonly memory: Lru<string, CacheEntry>;
  /** the byte bound of the memory layer */
  readonly memoryLimit: number;
  private readonly store?: Keyv;
  private readonly retainMs: number;
  private readonly logger?: Logger;
  /** warn once per burst of store failures, not once per read */
  private storeFailing = false;

  constructor(opts: TieredCacheOptions) {
    this.memoryLimit = Math.max(0, opts.memoryBytes);
    this.memory = new Lru(Number.MAX_SAFE_INTEGER, { max: this.memoryLimit, weigh });
    this.store = opts.store;
    this.retainMs = opts.retainMs;
    this.logger = opts.logger;
  }

  get memorySize(): number {
    return this.memory.size;
  }

  /** bytes the memory layer holds (as counted against memoryLimit) */
  get memoryBytes(): number {
    return this.memory.weightTotal;
  }

  /** The in-memory entry, synchronously (the warm path). */
  peek(key: string): CacheEntry | undefined {
    return this.memoryLimit > 0 ? this.memory.get(key) : undefined;
  }

  /** Memory first, then the shared store (promoting what it finds into memory). */
  async get(key: string): Promise<{ entry: CacheEntry; from: 'memory' | 'store' } | undefined> {
    const m = this.peek(key);
    if (m) return { entry: m, from: 'memory' };
    const v = await this.getShared(key);
    return v && { entry: v, from: 'store' };
  }

  /**
   * The shared store's entry, skipping memory (what another process may have written since this one
   * cached its copy), promoted into memory when found.
   */
  async getShared(key: string): Promise<CacheEntry | undefined> {
    if (!this.store) return undefined;
    let v: unknown;
    try {
      v = await this.store.get(key);
      this.recovered();
    } catch (e) {
      this.failed(e, 'read');
      return undefined;
    }
    if (!isEntry(v)) return undefined;
    this.remember(key, v);
    return v;
  }

  async set(key: string, entry: CacheEntry): Promise<void> {
    // stamped before it is stored, so every process reading the store sees the same version
    this.remember(key, stamp(entry));
    if (!this.store) return;
    try {
      await this.store.set(key, entry, this.retainMs);
      this.recovered();
    } catch (e) {
      this.failed(e, 'write');
    }
  }

  /**
   * Deletes expired entries from a SQLite store. Redis expires keys itself, but @keyv/sqlite only
   * drops an expired row when it is read again, so without a sweep the file would keep every player
   * ever looked up. Returns how many rows went (0 for other stores).
   */
  async sweep(now = Date.now()): Promise<number> {
    const adapter = this.store?.store as { query?: (sql: string, ...args: unknown[]) => Promise<unknown>; opts?: { table?: string } } | undefined;
    if (!this.store || typeof adapter?.query !== 'function' || !adapter.opts?.table) return 0;
    const prefix = `${this.store.namespace ?? ''}:`.replace(/[\\%_]/g, (c) => `\\${c}`);
    try {
      const where = `FROM ${adapter.opts.table} WHERE key LIKE ? ESCAPE '\\' AND json_extract(value, '$.expires') < ?`;
      const rows = (await adapter.query(`SELECT count(*) AS n ${where}`, `${prefix}%`, now)) as { n: number }[];
      await adapter.query(`DELETE ${where}`, `${prefix}%`, now);
      return rows[0]?.n ?? 0;
    } catch (e) {
      this.failed(e, 'sweep');
      return 0;
    }
  }

  clearMemory(): void {
    this.memory.clear();
  }

  private remember(key: string, entry: CacheEntry): void {
    if (this.memoryLimit > 0) this.memory.set(key, stamp(entry));
  }

  private failed(e: unknown, op: string): void {
    if (!this.storeFailing) this.logger?.warn({ err: e, op }, 'cache store failed; serving without it');
    this.storeFailing = true;
  }

  private recovered(): void {
    if (this.storeFailing) this.logger?.info('cache store answers again');
    this.storeFailing = false;
  }
}
