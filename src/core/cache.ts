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

/** Strings up to this length are shared between copies (names, modes, rarities; not descriptions). */
const SHARED_WORD_CHARS = 64;
/** Small objects of plain values up to this length as JSON are shared ({id, name} of a gadget). */
const SHARED_LEAF_CHARS = 160;
/**
 * Distinct words and small objects remembered for sharing (each). Small by construction: the game
 * has a few thousand names of brawlers, gadgets, star powers, gears, maps and modes, and a copy
 * holding one not remembered keeps its own (a shared one is dropped from here, never from a copy).
 * Players' names and tags, and their brawlers' trophies in battle logs, pass through too without
 * being repeated much; each remembered costs its entry here (~120 bytes, and a leaf's JSON as its
 * key). `npm run bench:cache -- --players 150` (about the default CACHE_MEMORY_MB of JSON,
 * 2026-11-25): 14.2 MB on the heap with 20,000, 12.8 with 10,000, 11.3 with 4,000, 11.0 with 2,000;
 * 500 players: 37.0, 35.1, 33.3, 33.4, and 34.5 with 1,000.
 */
const SHARED_ITEMS = 4_000;

/**
 * What parsed copies repeat, held once: a player's profile is ~80 brawlers with their gadgets, star
 * powers, gears and hypercharges, each a `{id, name}` the next profile repeats, and JSON.parse makes
 * new objects and strings for every one. In the memory layer those were two thirds of the objects
 * on the heap (a heap snapshot of `npm start` after the mixed load of bench:memory: 330,000
 * `{id, name}` objects, 17.6 MB, and 9 MB of their strings). A copy entering memory has its small
 * leaf objects (plain values only) replaced by a shared, frozen one and its short strings by a
 * shared one; its JSON is unchanged, so its version, size and every answer built from it are too.
 * Copies in memory are read, never changed (frozen leaves make a change throw rather than leak
 * into another copy).
 */
export class Sharing {
  private readonly words = new Lru<string, string>(SHARED_ITEMS);
  private readonly leaves = new Lru<string, object>(SHARED_ITEMS);
  private readonly done = new WeakSet<object>();

  /** `value` with what it repeats shared; arrays and objects other than leaves are changed in place. */
  share<T>(value: T): T {
    if (typeof value !== 'object' || value === null || this.done.has(value)) return value;
    const out = this.walk(value) as T;
    this.done.add(value);
    return out;
  }

  private word(s: string): string {
    return s.length > SHARED_WORD_CHARS ? s : this.words.getOr(s, () => s);
  }

  private walk(v: unknown): unknown {
    if (typeof v === 'string') return this.word(v);
    if (typeof v !== 'object' || v === null || Object.isFrozen(v)) return v;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) v[i] = this.walk(v[i]);
      return v;
    }
    if (Object.getPrototypeOf(v) !== Object.prototype) return v;
    const o = v as Record<string, unknown>;
    let leaf = true;
    for (const k in o) {
      const x = o[k];
      if (typeof x === 'string') o[k] = this.word(x);
      else if (typeof x === 'object' && x !== null) {
        leaf = false;
        o[k] = this.walk(x);
      }
    }
    if (!leaf) return o;
    const key = JSON.stringify(o);
    if (key.length > SHARED_LEAF_CHARS) return o;
    return this.leaves.getOr(key, () => Object.freeze(o));
  }
}

export interface TieredCacheOptions {
  /** the keyv namespace 'cache'; without one only the memory layer is used */
  store?: Keyv;
  /**
   * bytes of content (as JSON) in memory at most (0: no memory layer). The parsed copies take
   * about 0.9× that on the heap with what they repeat shared, 1.5× as JSON.parse makes them
   * (bench:cache: 500 simulated players' profiles and battle logs, 39.5 MB of JSON).
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
  private readonly sharing = new Sharing();
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
    if (this.memoryLimit <= 0) return;
    stamp(entry);
    if (entry.data !== undefined) entry.data = this.sharing.share(entry.data);
    this.memory.set(key, entry);
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
