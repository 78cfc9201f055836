/**
 * What the simulated world was asked, in order: each request of the official paths (path with its
 * query, wall-clock time of arrival). A cluster test or benchmark counts upstream calls here, across
 * every process that calls the world, instead of trusting each process's own counters. Read in
 * process (`sim.log`) or on a standalone server through `GET /_sim/log` (same bearer token);
 * `DELETE /_sim/log` starts it again.
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

/** Enough for any test or benchmark run; a long-running demo server forgets the oldest. */
const DEFAULT_CAPACITY = 200_000;

export class RequestLog {
  private entries: LoggedRequest[] = [];
  private total = 0;

  constructor(
    private readonly capacity = DEFAULT_CAPACITY,
    private readonly now: () => number = Date.now,
  ) {}

  record(path: string, userAgent?: string): void {
    this.total++;
    this.entries.push(userAgent ? { path, at: this.now(), userAgent } : { path, at: this.now() });
    // Trimmed in chunks, so a full log costs one copy per 10% of capacity instead of one per request.
    if (this.entries.length > this.capacity * 1.1) this.entries = this.entries.slice(this.entries.length - this.capacity);
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
