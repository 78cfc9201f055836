/**
 * What the simulated world was asked, in order: each request of the official paths (path with its
 * query, wall-clock time of arrival). A cluster test or benchmark counts upstream calls here, across
 * every process that calls the world, instead of trusting each process's own counters. Read in
 * process (`sim.log`) or on a standalone server through `GET /_sim/log` (same bearer token;
 * `?atLeast=N` answers once N requests are logged, or after a minute); `DELETE /_sim/log` starts it again.
 */

export interface LoggedRequest {
  /** the path below the server's root with its query string, e.g. /v1/players/%23ABC */
  path: string;
  /** epoch ms (wall clock) when the request arrived */
  at: number;
  /** the caller's User-Agent (Starr Stats names its role there: starr-stats/api …) */
  userAgent?: string;
}

export interface RequestLogView {
  /** requests since the last reset, kept ones and dropped ones alike */
  total: number;
  /** the oldest requests no longer kept (the log keeps the newest `capacity`) */
  dropped: number;
  requests: LoggedRequest[];
}

/**
 * Enough for any test or benchmark run (they count upstream calls: about one per key per TTL); a
 * long-running demo, `npm start` among them, forgets the oldest. A logged request takes ~163 bytes
 * of heap (measured with node --expose-gc, 2026-11-24), so this keeps ~8 MB at most; the 200,000
 * it kept grew to 31 MB in a service that polls all day.
 */
const DEFAULT_CAPACITY = 50_000;

export class RequestLog {
  private entries: LoggedRequest[] = [];
  private total = 0;
  /** callers of `whenAtLeast`, told of every request recorded */
  private readonly watchers = new Set<() => void>();

  constructor(
    private readonly capacity = DEFAULT_CAPACITY,
    private readonly now: () => number = Date.now,
  ) {}

  record(path: string, userAgent?: string): void {
    this.total++;
    this.entries.push(userAgent ? { path, at: this.now(), userAgent } : { path, at: this.now() });
    // Trimmed in chunks, so a full log costs one copy per 10% of capacity instead of one per request.
    if (this.entries.length > this.capacity * 1.1) this.entries = this.entries.slice(this.entries.length - this.capacity);
    for (const w of [...this.watchers]) w();
  }

  /**
   * Resolves once at least `count` requests whose path includes `contains` are logged (counting
   * since the last reset), or when `signal` aborts — whichever comes first. A test waits here for
   * requests to reach the world (a held one, say) instead of asking again and again.
   */
  whenAtLeast(contains: string, count: number, signal?: AbortSignal): Promise<void> {
    let seen = this.entries.filter((r) => r.path.includes(contains)).length;
    if (seen >= count || signal?.aborted) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const done = () => {
        this.watchers.delete(watch);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const watch = () => {
        if (this.entries[this.entries.length - 1]?.path.includes(contains) && ++seen >= count) done();
      };
      this.watchers.add(watch);
      signal?.addEventListener('abort', done, { once: true });
    });
  }

  /** The requests since the last reset; `contains` keeps those whose path includes it. */
  view(contains?: string): RequestLogView {
    const kept = this.entries.length > this.capacity ? this.entries.slice(this.entries.length - this.capacity) : this.entries;
    return {
      total: this.total,
      dropped: this.total - kept.length,
      requests: contains ? kept.filter((r) => r.path.includes(contains)) : [...kept],
    };
  }

  reset(): RequestLogView {
    this.entries = [];
    this.total = 0;
    return this.view();
  }
}
