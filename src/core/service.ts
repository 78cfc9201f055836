/**
 * StatsService: the one place that reads the game's API. Front doors (HTTP API, bot, CLI) and the
 * poller call it; it answers from a two-level cache (memory LRU, then keyv), coalesces concurrent
 * identical reads into one upstream call (single-flight), and when upstream fails (maintenance,
 * outage, throttling, garbage) it serves the last good copy marked stale, with its age, instead of
 * an error.
 *
 * Freshness: each resource has a TTL (CACHE_TTL_SECONDS by default). A copy younger than its TTL is
 * served without asking upstream; an older one is refreshed; a failed refresh falls back to it for
 * up to `retainSeconds` (24 h by default). After maintenance is seen, upstream is left alone for a
 * short while (everything is served stale or fails fast) rather than asked again on every miss.
 *
 * Latency: a user's read (priority 'interactive') never waits on upstream for long, whatever it
 * does (throttles, hangs, resets, 500s). With a last good copy it waits `staleWaitMs` (1 s) for the
 * refresh and then answers with the copy marked stale, the refresh going on in the background for
 * everyone (single-flight); without one, the upstream request gets `interactiveBudgetMs` (2.5 s)
 * in all, so the "unavailable" answer comes in time too. Polling keeps the client's full timeouts
 * and retries.
 */
import type Keyv from 'keyv';
import { settings, type Config } from '../config.ts';
import type { Logger } from '../log.ts';
import type { RequestOptions, UpstreamApi } from '../upstream/api.ts';
import {
  MaintenanceError,
  MalformedResponseError,
  NotFoundError,
  ThrottledError,
  UnavailableError,
  type UpstreamError,
} from '../upstream/errors.ts';
import { parseApiTime } from '../upstream/schemas.ts';
import type * as S from '../upstream/schemas.ts';
import { parseTag } from '../upstream/tags.ts';
import type { KeyvStores } from '../store/keyv.ts';
import { Lru } from '../lib/lru.ts';
import { wallClockSchedule, type Schedule } from '../lib/schedule.ts';
import { stamp, TieredCache, type CacheEntry } from './cache.ts';
import { ALL_KEYS, type PeerFlights } from './peer-flights.ts';
import { SingleFlight } from './singleflight.ts';
import type { Fetched, FetchedSource, Freshness, RankingKind, RankingResponse, ReadOptions, UpstreamReads } from './types.ts';

/** What the cache distinguishes for TTLs and metrics. */
export type Resource = 'player' | 'battlelog' | 'club' | 'rankings' | 'brawlers' | 'brawler' | 'rotation' | 'gamemodes';
export const RESOURCES: readonly Resource[] = ['player', 'battlelog', 'club', 'rankings', 'brawlers', 'brawler', 'rotation', 'gamemodes'];

/** A cache key's resource, and the player or club a look-up of it views (`partsOf`). */
interface KeyParts {
  resource: Resource;
  viewed: 'player' | 'club' | undefined;
  tag: string;
}

/** Cache keys whose parts are kept; each ~150 bytes. */
const KEY_PARTS = 20_000;

export type FetchedKind = 'player' | 'battlelog' | 'club' | 'rankings' | 'rotation' | 'brawlers';

/** What the StatsService tells its observer (history records what it is told). Called synchronously; must not throw or block. */
export interface CoreObserver {
  /** a user looked something up (HTTP or bot): history makes it tracked */
  viewed?(kind: 'player' | 'club', tag: string): void;
  /**
   * fresh data arrived from upstream: history records/discovers from it. `key` is the tag for
   * player/battlelog/club, `players:<region>`, `clubs:<region>` or `brawlers:<region>:<id>` for
   * rankings (data is the `{region, timestamp, items}` envelope with all items), and the
   * resource name for rotation and brawlers.
   */
  fetched?(kind: FetchedKind, key: string, data: unknown, atMs: number): void;
}

/** Anything with Prometheus-style counters (src/http/metrics.ts MetricsRegistry fits). */
export interface CoreMetrics {
  counter(name: string, help: string): { inc(labels?: Record<string, string>, by?: number): void; series(labels: Record<string, string>): { inc(by?: number): void } };
}

export interface StatsServiceOptions {
  upstream: UpstreamApi;
  /** keyv namespace 'cache'; without it only the memory layer caches */
  cache?: Keyv;
  /** seconds a copy is fresh: one number for all, or per resource (default 120) */
  ttlSeconds?: number | Partial<Record<Resource, number>>;
  /** bytes of content (as JSON) in the in-process layer at most (default: CACHE_MEMORY_MB's; 0 turns it off) */
  memoryBytes?: number;
  /** how long the last good copy stays available for stale-if-error (default 24 h) */
  retainSeconds?: number;
  /** epoch ms; tests inject a virtual clock */
  now?: () => number;
  logger?: Logger;
  observers?: CoreObserver[];
  metrics?: CoreMetrics;
  /** how often expired copies are deleted from a SQLite store (default hourly; 0: never) */
  sweepEveryMs?: number;
  /** how long a user's read with a last good copy waits for upstream before it is served that copy (default 1000) */
  staleWaitMs?: number;
  /** how long a user's read without a copy lets upstream take, retries included (default 2500) */
  interactiveBudgetMs?: number;
  /** when the two waits above end: the wall clock by default; tests fire them themselves */
  schedule?: Schedule;
  /**
   * The other processes of a cluster (REDIS_URL): one upstream call per key across all of them, and
   * failure holds they all respect. Without it single-flight and holds are this process's own.
   */
  peers?: PeerFlights;
}

export interface CoreStats {
  reads: number;
  memoryHits: number;
  storeHits: number;
  upstreamCalls: number;
  upstreamFailures: number;
  staleServed: number;
  memoryItems: number;
  /** bytes held by the memory layer, and its bound */
  memoryBytes: number;
  memoryLimit: number;
  /** reads under way */
  inflight: number;
  /** upstream refreshes under way (some finishing in the background after a stale answer) */
  refreshing: number;
}

/** After upstream says maintenance, leave it alone this long (it lasts 10 to 60 minutes). */
const MAINTENANCE_HOLD_MS = 30_000;
/** After another failure of one resource, serve its stale copy this long before asking again. */
const FAILURE_HOLD_MS = 10_000;
/** The shortest freshness a copy gets, whatever it says about its own end (clock skew, late rotations). */
const MIN_FRESH_MS = 5_000;
const FAILURE_MEMO_ITEMS = 10_000;
/**
 * A user's answer is due within 1.5 s whatever upstream does: 1 s of waiting for a refresh leaves
 * room for the rest (a picture drawn from the copy takes 0.1–0.3 s on a busy 2-core machine). The
 * official API answers a player in 0.1–0.4 s when healthy, so a healthy refresh still wins.
 */
const STALE_WAIT_MS = 1_000;
/** Without a copy the 503 (or the bot's short reply) is due within 3 s; the rest is our own overhead. */
const INTERACTIVE_BUDGET_MS = 2_500;

/** Failures that the last good copy may hide. Not 404 (the thing is gone), 400 or 403 (our fault). */
function hideable(e: unknown): e is UpstreamError {
  return e instanceof MaintenanceError || e instanceof UnavailableError || e instanceof ThrottledError || e instanceof MalformedResponseError;
}

/** 'global' or an upper-case two-letter code; NotFoundError for anything else. */
export function normaliseRegion(countryCode: string): string {
  const c = countryCode.trim();
  if (c.toLowerCase() === 'global') return 'global';
  if (!/^[A-Za-z]{2}$/.test(c)) throw new NotFoundError(`Unknown region ${JSON.stringify(countryCode)}`, 0, 'notFound');
  return c.toUpperCase();
}

/** Shared default, so a read without options allocates nothing for them. */
const NO_OPTIONS: ReadOptions = Object.freeze({});
/** Spellings of tags seen recently → canonical `#TAG` (saves the regex work on warm reads). */
const TAG_MEMO_ITEMS = 4096;

interface Spec<T> {
  resource: Resource;
  key: string;
  fetch: (o: RequestOptions) => Promise<unknown>;
  /** turns the upstream body into what is cached (rankings: the envelope) */
  shape?: (raw: never, fetchedAt: number) => T;
  event?: { kind: FetchedKind; key: string };
  /** when the answer goes out of date before the TTL ends (epoch ms), if it can tell */
  outdatedAt?: (data: T, fetchedAt: number) => number | undefined;
}

/** A rotation is out of date when its first active event ends (a few seconds later at the soonest). */
function rotationOutdatedAt(rotation: S.EventRotation, fetchedAt: number): number | undefined {
  let end = Infinity;
  for (const e of rotation) {
    const t = parseApiTime(e.endTime);
    if (Number.isFinite(t) && t > fetchedAt) end = Math.min(end, t);
  }
  return Number.isFinite(end) ? Math.max(end, fetchedAt + MIN_FRESH_MS) : undefined;
}

export class StatsService implements UpstreamReads {
  readonly upstream: UpstreamApi;
  private readonly cache: TieredCache;
  /** reads under way (cache look-up and, when needed, waiting for upstream), per key */
  private readonly flights = new SingleFlight<Fetched<unknown>>();
  /** upstream refreshes under way, per key; they may outlive the reads that started them */
  private readonly refreshes = new SingleFlight<Fetched<unknown>>();
  private readonly staleWaitMs: number;
  private readonly interactiveBudgetMs: number;
  private readonly schedule: Schedule;
  private readonly ttlMs: Record<Resource, number>;
  /** `partsOf`'s keys parsed, as many as the memory layer holds copies of at most */
  private readonly keyParts = new Lru<string, KeyParts>(KEY_PARTS);
  private readonly retainMs: number;
  private readonly now: () => number;
  private readonly logger?: Logger;
  private readonly observers: CoreObserver[];
  private readonly counts = { reads: 0, memoryHits: 0, storeHits: 0, upstreamCalls: 0, upstreamFailures: 0, staleServed: 0 };
  private readonly readCounter?: ReturnType<CoreMetrics['counter']>;
  private readonly memoryReadSeries = new Map<Resource, { inc(by?: number): void }>();
  private readonly callCounter?: ReturnType<CoreMetrics['counter']>;
  /** upstream in maintenance: nobody asks it again before `until` */
  private down: { until: number; error: UpstreamError } | null = null;
  private readonly failures = new Lru<string, { until: number; error: UpstreamError }>(FAILURE_MEMO_ITEMS);
  private readonly sweeper?: NodeJS.Timeout;
  private readonly tagMemo = new Lru<string, string>(TAG_MEMO_ITEMS);
  private readonly peers?: PeerFlights;

  constructor(opts: StatsServiceOptions) {
    this.upstream = opts.upstream;
    this.now = opts.now ?? Date.now;
    this.logger = opts.logger;
    this.observers = [...(opts.observers ?? [])];
    const ttl = opts.ttlSeconds ?? 120;
    this.ttlMs = Object.fromEntries(
      RESOURCES.map((r) => [r, 1000 * (typeof ttl === 'number' ? ttl : (ttl[r] ?? 120))]),
    ) as Record<Resource, number>;
    this.retainMs = 1000 * (opts.retainSeconds ?? 86_400);
    this.staleWaitMs = opts.staleWaitMs ?? STALE_WAIT_MS;
    this.interactiveBudgetMs = opts.interactiveBudgetMs ?? INTERACTIVE_BUDGET_MS;
    this.schedule = opts.schedule ?? wallClockSchedule;
    this.peers = opts.peers;
    this.cache = new TieredCache({ store: opts.cache, memoryBytes: opts.memoryBytes ?? Number(settings.CACHE_MEMORY_MB.default) * 1024 * 1024, retainMs: this.retainMs, logger: opts.logger });
    this.readCounter = opts.metrics?.counter('starr_core_reads_total', 'Reads of the service core by resource and where the answer came from');
    this.callCounter = opts.metrics?.counter('starr_core_upstream_calls_total', 'Upstream calls made by the service core by resource and result');
    const every = opts.sweepEveryMs ?? 3_600_000;
    if (opts.cache && every > 0) {
      this.sweeper = setInterval(() => void this.sweep(), every);
      this.sweeper.unref();
    }
  }

  /** Deletes copies past their retention from the store (SQLite keeps them otherwise). */
  async sweep(): Promise<number> {
    const n = await this.cache.sweep();
    if (n > 0) this.logger?.debug({ deleted: n }, 'swept expired cache entries');
    return n;
  }

  /** Adds an observer (history is composed after the core); returns a function that removes it. */
  observe(observer: CoreObserver): () => void {
    this.observers.push(observer);
    return () => {
      const i = this.observers.indexOf(observer);
      if (i >= 0) this.observers.splice(i, 1);
    };
  }

  stats(): CoreStats {
    return {
      ...this.counts,
      memoryItems: this.cache.memorySize,
      memoryBytes: this.cache.memoryBytes,
      memoryLimit: this.cache.memoryLimit,
      inflight: this.flights.size,
      refreshing: this.refreshes.size,
    };
  }

  /** Waits for reads and refreshes under way (so their cache writes land before the stores close). */
  async close(): Promise<void> {
    clearInterval(this.sweeper);
    await this.flights.settle();
    await this.refreshes.settle();
    await this.peers?.close();
    this.cache.clearMemory();
  }

  // ------------------------------------------------------------ the reads

  async player(tag: string, o: ReadOptions = NO_OPTIONS): Promise<Fetched<S.Player>> {
    const t = this.tag(tag);
    const key = `player:${t}`;
    const f =
      this.hit<S.Player>('player', key, o) ??
      (await this.read<S.Player>({ resource: 'player', key, fetch: (ro) => this.upstream.player(t, ro), event: { kind: 'player', key: t } }, o));
    this.viewed('player', t, o);
    return f;
  }

  async battlelog(tag: string, o: ReadOptions = NO_OPTIONS): Promise<Fetched<S.BattleLog>> {
    const t = this.tag(tag);
    const key = `battlelog:${t}`;
    const f =
      this.hit<S.BattleLog>('battlelog', key, o) ??
      (await this.read<S.BattleLog>({ resource: 'battlelog', key, fetch: (ro) => this.upstream.battlelog(t, ro), event: { kind: 'battlelog', key: t } }, o));
    this.viewed('player', t, o);
    return f;
  }

  async club(tag: string, o: ReadOptions = NO_OPTIONS): Promise<Fetched<S.Club>> {
    const t = this.tag(tag);
    const key = `club:${t}`;
    const f =
      this.hit<S.Club>('club', key, o) ??
      (await this.read<S.Club>({ resource: 'club', key, fetch: (ro) => this.upstream.club(t, ro), event: { kind: 'club', key: t } }, o));
    this.viewed('club', t, o);
    return f;
  }

  playerRankings(countryCode: string, limit?: number, o: ReadOptions = NO_OPTIONS): Promise<Fetched<RankingResponse<S.PlayerRankingItem>>> {
    return this.ranking('players', undefined, countryCode, limit, o, (region, ro) => this.upstream.playerRankings(region, undefined, ro));
  }

  clubRankings(countryCode: string, limit?: number, o: ReadOptions = NO_OPTIONS): Promise<Fetched<RankingResponse<S.ClubRankingItem>>> {
    return this.ranking('clubs', undefined, countryCode, limit, o, (region, ro) => this.upstream.clubRankings(region, undefined, ro));
  }

  brawlerRankings(
    countryCode: string,
    brawlerId: number,
    limit?: number,
    o: ReadOptions = NO_OPTIONS,
  ): Promise<Fetched<RankingResponse<S.PlayerRankingItem>>> {
    return this.ranking('brawlers', brawlerId, countryCode, limit, o, (region, ro) => this.upstream.brawlerRankings(region, brawlerId, undefined, ro));
  }

  /** One cached list of 200 per ranking and region; `limit` cuts the answer, not the cache. */
  private async ranking<T>(
    list: RankingKind,
    brawlerId: number | undefined,
    countryCode: string,
    limit: number | undefined,
    o: ReadOptions,
    fetch: (region: string, ro: RequestOptions) => Promise<{ items: T[] }>,
  ): Promise<Fetched<RankingResponse<T>>> {
    const region = normaliseRegion(countryCode);
    // Also the observer's key: players:US, clubs:global, brawlers:US:16000000.
    const key = brawlerId === undefined ? `${list}:${region}` : `${list}:${region}:${brawlerId}`;
    const f =
      this.hit<RankingResponse<T>>('rankings', `rankings:${key}`, o) ??
      (await this.read<RankingResponse<T>>(
        {
          resource: 'rankings',
          key: `rankings:${key}`,
          fetch: (ro) => fetch(region, ro),
          shape: (raw: { items: T[] }, at: number) => ({ region, timestamp: Math.floor(at / 1000), items: raw.items }),
          event: { kind: 'rankings', key },
        },
        o,
      ));
    return top(f, limit);
  }

  brawlers(o: ReadOptions = NO_OPTIONS): Promise<Fetched<S.BrawlerList>> {
    return this.cached('brawlers', 'brawlers', o) ?? this.read({ resource: 'brawlers', key: 'brawlers', fetch: (ro) => this.upstream.brawlers(undefined, ro), event: { kind: 'brawlers', key: 'brawlers' } }, o);
  }

  brawler(brawlerId: number, o: ReadOptions = NO_OPTIONS): Promise<Fetched<S.Brawler>> {
    return this.cached('brawler', `brawler:${brawlerId}`, o) ?? this.read({ resource: 'brawler', key: `brawler:${brawlerId}`, fetch: (ro) => this.upstream.brawler(brawlerId, ro) }, o);
  }

  eventRotation(o: ReadOptions = NO_OPTIONS): Promise<Fetched<S.EventRotation>> {
    return (
      this.cached('rotation', 'rotation', o) ??
      this.read<S.EventRotation>(
        { resource: 'rotation', key: 'rotation', fetch: (ro) => this.upstream.eventRotation(ro), event: { kind: 'rotation', key: 'rotation' }, outdatedAt: rotationOutdatedAt },
        o,
      )
    );
  }

  gameModes(o: ReadOptions = NO_OPTIONS): Promise<Fetched<S.GameModeList>> {
    return this.cached('gamemodes', 'gamemodes', o) ?? this.read({ resource: 'gamemodes', key: 'gamemodes', fetch: (ro) => this.upstream.gameModes(undefined, ro) }, o);
  }

  // ------------------------------------------------------------ cache, single-flight, stale-if-error

  /** Canonical `#TAG` of any user spelling; InvalidTagError for a bad one. */
  private tag(input: string): string {
    const known = this.tagMemo.get(input);
    if (known !== undefined) return known;
    const t = parseTag(input);
    this.tagMemo.set(input, t);
    return t;
  }

  /**
   * The warm path, synchronous and allocation-light: a fresh copy in memory, or undefined.
   * A remembered 404 throws NotFoundError.
   */
  private hit<T>(resource: Resource, key: string, o: ReadOptions): Fetched<T> | undefined {
    if (o.fresh) return undefined;
    const m = this.cache.peek(key);
    if (!m) return undefined;
    const now = this.now();
    if (now >= this.expiry(m, resource)) return undefined;
    this.countMemoryHit(resource);
    if (m.missing) throw gone(m);
    return this.view<T>(m, key, resource, now, 'memory');
  }

  peekFresh(key: string, fetchedAt: number): Freshness | undefined {
    const m = this.cache.peek(key);
    if (!m || m.missing || m.fetchedAt !== fetchedAt) return undefined;
    const { resource, viewed, tag } = this.partsOf(key);
    const now = this.now();
    const expiresAt = this.expiry(m, resource);
    if (now >= expiresAt) return undefined;
    // what `hit` and the method that returned the copy count
    this.countMemoryHit(resource);
    if (viewed) this.viewed(viewed, tag, NO_OPTIONS);
    return { expiresAt, ageSeconds: Math.max(0, Math.floor((now - m.fetchedAt) / 1000)) };
  }

  /**
   * A cache key's resource, and the player or club a look-up of it views, parsed once per key:
   * `peekFresh` is asked with the same key string for every cached answer of a URL, and slicing it
   * each time cost a string-table look-up for `ttlMs[resource]` and a new tag string for the
   * history's map (~2,500 instructions per cached player in callgrind, docs/benchmarks.md *HTTP
   * API: cached answers*).
   */
  private partsOf(key: string): KeyParts {
    let p = this.keyParts.get(key);
    if (!p) {
      // the key's prefix is its resource (player:#TAG, rankings:players:global, brawlers)
      const colon = key.indexOf(':');
      const prefix = colon < 0 ? key : key.slice(0, colon);
      // the constant itself (an internalized string), not the slice
      const resource = RESOURCES.find((r) => r === prefix) ?? (prefix as Resource);
      const viewed = resource === 'player' || resource === 'battlelog' ? 'player' : resource === 'club' ? 'club' : undefined;
      p = { resource, viewed, tag: viewed ? key.slice(colon + 1) : '' };
      this.keyParts.set(key, p);
    }
    return p;
  }

  /** A read answered from the memory layer (`hit`, `peekFresh`). */
  private countMemoryHit(resource: Resource): void {
    this.counts.reads++;
    this.counts.memoryHits++;
    this.memoryReads(resource)?.inc();
  }

  /** The counter of a resource's memory hits, bound once: a cached answer counts one per request. */
  private memoryReads(resource: Resource): { inc(by?: number): void } | undefined {
    let series = this.memoryReadSeries.get(resource);
    if (!series && this.readCounter) this.memoryReadSeries.set(resource, (series = this.readCounter.series({ resource, source: 'memory' })));
    return series;
  }

  /** `hit` as a promise, for the methods that are not async functions. */
  private cached<T>(resource: Resource, key: string, o: ReadOptions): Promise<Fetched<T>> | undefined {
    try {
      const f = this.hit<T>(resource, key, o);
      return f && Promise.resolve(f);
    } catch (e) {
      return Promise.reject(e);
    }
  }

  private read<T>(spec: Spec<T>, o: ReadOptions): Promise<Fetched<T>> {
    this.counts.reads++;
    const flightKey = o.fresh ? `${spec.key}\u0000fresh` : spec.key;
    return this.flights.run(flightKey, () => this.load(spec, o)) as Promise<Fetched<T>>;
  }

  private async load<T>(spec: Spec<T>, o: ReadOptions): Promise<Fetched<unknown>> {
    let stored: CacheEntry | undefined;
    if (!o.fresh) {
      const got = await this.cache.get(spec.key);
      stored = got?.entry;
      const now = this.now();
      if (stored && now < this.expiry(stored, spec.resource)) {
        if (got!.from === 'store') this.counts.storeHits++;
        else this.counts.memoryHits++;
        this.readCounter?.inc({ resource: spec.resource, source: got!.from });
        if (stored.missing) throw gone(stored);
        return this.view(stored, spec.key, spec.resource, now, got!.from);
      }
    }
    if (o.priority === 'poll') return this.refreshes.run(`${spec.key}\u0000poll`, () => this.refresh(spec, o, stored));
    const held = this.held(spec.key, this.now());
    if (held) return this.fallback(spec, stored, held);
    // The poller may be fetching this very resource right now: share its answer.
    const refreshing =
      (o.fresh ? undefined : this.refreshes.get(`${spec.key}\u0000poll`)) ?? this.refreshes.run(spec.key, () => this.refresh(spec, o, stored));
    return this.inTime(spec, refreshing, stored);
  }

  /**
   * A user's read waits for the refresh only so long: with a copy young enough to serve, for
   * `staleWaitMs`, then that copy (stale, reason "slow"); without one, for the interactive budget
   * (its own refresh gives up by then; a poll's it shares may not), then "unavailable". The refresh
   * goes on and lands in the cache for the next read.
   */
  private inTime<T>(spec: Spec<T>, refreshing: Promise<Fetched<unknown>>, stored: CacheEntry | undefined): Promise<Fetched<unknown>> {
    const copy = stored && !stored.missing && this.now() - stored.fetchedAt <= this.retainMs ? stored : undefined;
    return new Promise((resolve, reject) => {
      const cancel = this.schedule(
        copy ? this.staleWaitMs : this.interactiveBudgetMs,
        () => {
          if (copy) {
            this.counts.staleServed++;
            this.readCounter?.inc({ resource: spec.resource, source: 'stale' });
            resolve(this.view(copy, spec.key, spec.resource, this.now(), 'stale', 'slow'));
          } else {
            this.readCounter?.inc({ resource: spec.resource, source: 'error' });
            reject(new UnavailableError(`The game's API did not answer within ${this.interactiveBudgetMs} ms`, 0, 'timeout'));
          }
        },
      );
      refreshing.then(
        (f) => {
          cancel();
          resolve(f);
        },
        (e: unknown) => {
          cancel();
          reject(e);
        },
      );
    });
  }

  private async refresh<T>(spec: Spec<T>, o: ReadOptions, stored: CacheEntry | undefined): Promise<Fetched<unknown>> {
    const held = this.held(spec.key, this.now());
    if (held) return this.fallback(spec, stored, held);
    if (!this.peers) return this.call(spec, o, stored);
    const peers = this.peers;
    // Another process may be calling upstream for this key: its answer lands in the shared cache.
    // Two rounds at most: after a holder that vanished, this process takes the flight or goes ahead.
    // What counts as another process's answer: newer than the copy this read found, and for a read
    // that must be fresh (a poll), fetched after it started.
    const since = stored?.fetchedAt ?? (o.fresh ? this.now() : -Infinity);
    for (let round = 0; round < 2; round++) {
      const shared = await peers.held(spec.key).catch(() => null);
      if (shared) return this.fallback(spec, stored, shared);
      if (await peers.claim(spec.key).catch(() => true)) {
        try {
          // A peer may have finished its call between this process's cache read and its claim.
          return (await this.peerAnswer(spec, since)) ?? (await this.call(spec, o, stored));
        } finally {
          await peers.done(spec.key).catch((e: unknown) => this.logger?.warn({ err: e }, 'could not announce the end of an upstream call'));
        }
      }
      await peers.wait(spec.key, async () => (await this.newerShared(spec, since)) !== undefined);
      const answered = await this.peerAnswer(spec, since);
      if (answered) return answered;
    }
    return this.call(spec, o, stored);
  }

  /** What another process fetched after `since`, as this read's answer; undefined when nothing. */
  private async peerAnswer<T>(spec: Spec<T>, since: number): Promise<Fetched<unknown> | undefined> {
    const newer = await this.newerShared(spec, since);
    if (!newer) return undefined;
    this.counts.storeHits++;
    this.readCounter?.inc({ resource: spec.resource, source: 'store' });
    if (newer.missing) throw gone(newer);
    return this.view(newer, spec.key, spec.resource, this.now(), 'store');
  }

  /** The shared store's entry for the key when it is still fresh and was fetched after `since`. */
  private async newerShared<T>(spec: Spec<T>, since: number): Promise<CacheEntry | undefined> {
    const e = await this.cache.getShared(spec.key);
    return e && e.fetchedAt > since && this.now() < this.expiry(e, spec.resource) ? e : undefined;
  }

  /** One upstream call: the cache written, the observers told, or the failure held. */
  private async call<T>(spec: Spec<T>, o: ReadOptions, stored: CacheEntry | undefined): Promise<Fetched<unknown>> {
    this.counts.upstreamCalls++;
    let raw: unknown;
    try {
      const interactive = (o.priority ?? 'interactive') === 'interactive';
      raw = await spec.fetch(interactive ? { priority: 'interactive', budgetMs: this.interactiveBudgetMs } : { priority: 'poll' });
    } catch (e) {
      this.counts.upstreamFailures++;
      this.callCounter?.inc({ resource: spec.resource, result: (e as UpstreamError).kind ?? 'error' });
      if (e instanceof NotFoundError) {
        // Remembered for one TTL so a mistyped tag asked again and again costs one upstream call.
        await this.cache.set(spec.key, { fetchedAt: this.now(), missing: { message: e.message, reason: e.reason } });
        throw e;
      }
      if (!hideable(e)) throw e;
      // Shared before the waiters are woken (done), so none of them asks upstream again.
      await this.hold(spec.key, e);
      return this.fallback(spec, stored, e);
    }
    this.callCounter?.inc({ resource: spec.resource, result: 'ok' });
    this.readCounter?.inc({ resource: spec.resource, source: 'upstream' });
    const at = this.now();
    const data = spec.shape ? spec.shape(raw as never, at) : raw;
    const entry: CacheEntry = { fetchedAt: at, data };
    const outdated = spec.outdatedAt?.(data as T, at);
    if (outdated !== undefined && outdated < at + this.ttlMs[spec.resource]) entry.expiresAt = outdated;
    this.failures.delete(spec.key);
    await this.cache.set(spec.key, entry);
    if (spec.event) this.emitFetched(spec.event.kind, spec.event.key, data, at);
    return this.view(entry, spec.key, spec.resource, at, 'upstream');
  }

  /** The last good copy in place of the error, when there is one young enough. */
  private async fallback<T>(spec: Spec<T>, stored: CacheEntry | undefined, error: UpstreamError): Promise<Fetched<unknown>> {
    const entry = stored ?? (await this.cache.get(spec.key))?.entry;
    const now = this.now();
    if (!entry || entry.missing || now - entry.fetchedAt > this.retainMs) {
      this.readCounter?.inc({ resource: spec.resource, source: 'error' });
      throw error;
    }
    this.counts.staleServed++;
    this.readCounter?.inc({ resource: spec.resource, source: 'stale' });
    return this.view(entry, spec.key, spec.resource, now, 'stale', error.kind);
  }

  /** When a cached copy stops being fresh. */
  private expiry(entry: CacheEntry, resource: Resource): number {
    return entry.expiresAt ?? entry.fetchedAt + this.ttlMs[resource];
  }

  private held(key: string, now: number): UpstreamError | undefined {
    if (this.down && this.down.until > now) return this.down.error;
    const f = this.failures.get(key);
    return f && f.until > now ? f.error : undefined;
  }

  /** Leaves upstream alone for a while after a failure: this process, and the others of a cluster. */
  private async hold(key: string, e: UpstreamError): Promise<void> {
    const now = this.now();
    let shared: { key: string; ms: number };
    if (e instanceof MaintenanceError) {
      if (!this.down || this.down.until <= now) this.logger?.warn("the game's API is in maintenance; serving cached copies");
      this.down = { until: now + MAINTENANCE_HOLD_MS, error: e };
      shared = { key: ALL_KEYS, ms: MAINTENANCE_HOLD_MS };
    } else {
      const ms = e instanceof ThrottledError && e.retryAfterSeconds !== undefined ? e.retryAfterSeconds * 1000 : FAILURE_HOLD_MS;
      this.failures.set(key, { until: now + ms, error: e });
      this.logger?.debug({ key, kind: e.kind }, 'upstream failed; serving the last good copy if any');
      shared = { key, ms };
    }
    await this.peers?.hold(shared.key, e, shared.ms).catch((err: unknown) => this.logger?.warn({ err }, 'could not share an upstream failure hold'));
  }

  private view<T>(entry: CacheEntry, key: string, resource: Resource, now: number, source: FetchedSource, staleReason?: string): Fetched<T> {
    const f: Fetched<T> = {
      data: entry.data as T,
      fetchedAt: entry.fetchedAt,
      expiresAt: this.expiry(entry, resource),
      stale: source === 'stale',
      ageSeconds: Math.max(0, Math.floor((now - entry.fetchedAt) / 1000)),
      version: stamp(entry).version!,
      source,
      key,
    };
    if (staleReason) f.staleReason = staleReason;
    return f;
  }

  // ------------------------------------------------------------ observers

  private viewed(kind: 'player' | 'club', tag: string, o: ReadOptions): void {
    if (!(o.viewed ?? o.priority !== 'poll')) return;
    for (const obs of this.observers) {
      if (!obs.viewed) continue;
      try {
        // no promise per look-up unless the observer made one (most look-ups change nothing)
        const r: unknown = obs.viewed(kind, tag);
        if (r instanceof Promise) r.catch((e: unknown) => this.observerFailed(e));
      } catch (e) {
        this.observerFailed(e);
      }
    }
  }

  private emitFetched(kind: FetchedKind, key: string, data: unknown, at: number): void {
    for (const obs of this.observers) {
      if (!obs.fetched) continue;
      try {
        void Promise.resolve(obs.fetched(kind, key, data, at)).catch((e: unknown) => this.observerFailed(e));
      } catch (e) {
        this.observerFailed(e);
      }
    }
  }

  private observerFailed(e: unknown): void {
    this.logger?.error({ err: e }, 'a core observer failed');
  }
}

function gone(entry: CacheEntry): NotFoundError {
  return new NotFoundError(entry.missing?.message ?? 'Not found', 404, entry.missing?.reason);
}

/**
 * Cut rankings per cached copy and limit, made once: the HTTP layer memoises serialised bodies per
 * data object, so handing out the same object for the same cut keeps a warm `?limit=10` a lookup.
 */
const cuts = new WeakMap<object, Map<number, RankingResponse<unknown>>>();

function top<T>(f: Fetched<RankingResponse<T>>, limit: number | undefined): Fetched<RankingResponse<T>> {
  if (limit === undefined || limit >= f.data.items.length) return f;
  const n = Math.max(0, Math.floor(limit));
  let byLimit = cuts.get(f.data);
  if (!byLimit) cuts.set(f.data, (byLimit = new Map()));
  let data = byLimit.get(n) as RankingResponse<T> | undefined;
  if (!data) byLimit.set(n, (data = { ...f.data, items: f.data.items.slice(0, n) }));
  return { ...f, data, ...(f.version ? { version: `${f.version}.${n}` } : {}) };
}

/** The core as configured: keyv namespace 'cache' of the given stores, TTL and memory bound from config. */
export function createStatsService(
  cfg: Pick<Config, 'CACHE_TTL_SECONDS' | 'CACHE_MEMORY_MB'> & Partial<Pick<Config, 'UPSTREAM_STALE_WAIT_MS' | 'UPSTREAM_USER_BUDGET_MS'>>,
  deps: { upstream: UpstreamApi; stores?: KeyvStores } & Omit<StatsServiceOptions, 'upstream' | 'cache' | 'ttlSeconds' | 'memoryBytes'>,
): StatsService {
  const { stores, ...rest } = deps;
  return new StatsService({
    ...rest,
    cache: stores?.namespace('cache'),
    ttlSeconds: cfg.CACHE_TTL_SECONDS,
    memoryBytes: cfg.CACHE_MEMORY_MB * 1024 * 1024,
    ...(cfg.UPSTREAM_STALE_WAIT_MS !== undefined ? { staleWaitMs: cfg.UPSTREAM_STALE_WAIT_MS } : {}),
    ...(cfg.UPSTREAM_USER_BUDGET_MS !== undefined ? { interactiveBudgetMs: cfg.UPSTREAM_USER_BUDGET_MS } : {}),
  });
}
