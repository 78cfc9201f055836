/**
 * Typed client of the official Brawl Stars API (and of the simulated world, which speaks the same
 * HTTP): an undici keep-alive pool of bounded size, a timeout per attempt, tokens used round-robin
 * within one shared request budget (budget.ts), bounded retries with jitter for 5xx, dropped
 * connections and timeouts, 429 back-off honouring Retry-After, and maintenance reported at once
 * instead of retried in a loop. Every body is parsed with the zod schemas; anything unexpected
 * becomes a typed error of errors.ts.
 */
import { Pool } from 'undici';
import type { z } from 'zod';
import type { Config } from '../config.ts';
import type { Logger } from '../log.ts';
import type { PageQuery, RequestOptions, UpstreamApi } from './api.ts';
import { wallClockSchedule, type Schedule } from '../lib/schedule.ts';
import { RequestBudget, realClock, type TokenState, type UpstreamClock } from './budget.ts';
import { RedisBuckets } from './shared-budget.ts';
import type { Redis } from '../store/redis.ts';
import {
  AccessDeniedError,
  BadRequestError,
  MaintenanceError,
  MalformedResponseError,
  NotFoundError,
  ThrottledError,
  UnavailableError,
  type UpstreamError,
} from './errors.ts';
import * as S from './schemas.ts';
import { encodeTagForPath, parseTag } from './tags.ts';

export type { UpstreamClock } from './budget.ts';

/** How one HTTP attempt ended, for logs and metrics. */
export type AttemptOutcome =
  | 'ok'
  | 'not_found'
  | 'maintenance'
  | 'throttled'
  | 'access_denied'
  | 'bad_request'
  | 'server_error'
  | 'connection'
  | 'timeout'
  | 'malformed';

export interface UpstreamClientOptions {
  /** e.g. https://api.brawlstars.com/v1 or a proxy with the same paths */
  baseUrl: string;
  /** one or more API tokens; requests spread over them round-robin */
  tokens: string[];
  kind?: 'official' | 'simulated';
  /** time allowed for one attempt, from sending to the last body byte (default 10 s) */
  timeoutMs?: number;
  /** further attempts after a 5xx, dropped connection, timeout or 429 (default 2) */
  retries?: number;
  /** connections kept open to upstream at most (default 32) */
  connections?: number;
  /** requests per second per token, shared by polling and interactive reads (default 10) */
  rps?: number;
  /**
   * The Redis of a cluster: the tokens' buckets are kept there (keyed by a hash of each token), so
   * every process together stays within `rps` per token
   */
  sharedBudget?: Redis;
  /** requests waiting for a token at most (default 1000) */
  maxQueue?: number;
  /** how long a token sits out after a 429 that named no Retry-After (default 10 s) */
  throttlePenaltyMs?: number;
  logger?: Logger;
  /** virtual time for tests (back-off and budget waits); real time by default */
  clock?: UpstreamClock;
  /** when an attempt's timeout fires: the wall clock by default; tests fire it themselves */
  schedule?: Schedule;
  /** jitter source, [0, 1) */
  random?: () => number;
  /** called after every HTTP attempt (metrics) */
  onAttempt?: (info: { path: string; token: number; outcome: AttemptOutcome; status: number; ms: number }) => void;
  userAgent?: string;
}

/** First back-off before a retry; doubles each time, capped, with jitter. */
const BACKOFF_BASE_MS = 250;
const BACKOFF_CAP_MS = 4_000;

/** The IP at the end of "…does not allow access from IP 203.0.113.7". */
export function ipFromMessage(message: string): string | undefined {
  return /\bIP\s+([0-9a-fA-F:.]+[0-9a-fA-F])\s*\.?\s*$/.exec(message)?.[1];
}

/** Retry-After as milliseconds: delta-seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | string[] | undefined, now: number): number | undefined {
  const s = (Array.isArray(value) ? value[0] : value)?.trim();
  if (!s) return undefined;
  if (/^\d+(\.\d+)?$/.test(s)) return Number(s) * 1000;
  const at = Date.parse(s);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

function pageQuery(page?: PageQuery): string {
  if (!page) return '';
  const q = new URLSearchParams();
  if (page.limit !== undefined) q.set('limit', String(page.limit));
  if (page.after !== undefined) q.set('after', page.after);
  if (page.before !== undefined) q.set('before', page.before);
  const s = q.toString();
  return s === '' ? '' : `?${s}`;
}

function tagPath(tag: string): string {
  return encodeTagForPath(parseTag(tag));
}

function countryPath(code: string): string {
  return encodeURIComponent(code.trim());
}

/**
 * An id as a path segment. A negative integer is well-formed but names nothing upstream could know,
 * so it is "not found" without asking (the answer /brawlers/0 gets from upstream); anything that is
 * not an integer is a caller's bug.
 */
function idPath(id: number): string {
  if (!Number.isSafeInteger(id)) throw new BadRequestError(`Invalid id ${id}`, 0, 'invalidId');
  if (id < 0) throw new NotFoundError(`No brawler has the id ${id}`, 0, 'notFound');
  return String(id);
}

type Failure = { error: UpstreamError; outcome: AttemptOutcome; retry: 'no' | 'backoff' | 'throttle'; penaltyMs?: number };

export class UpstreamClient implements UpstreamApi {
  readonly kind: 'official' | 'simulated';
  readonly baseUrl: string;
  private readonly tokens: string[];
  private readonly pool: Pool;
  private readonly prefix: string;
  private readonly budget: RequestBudget;
  private readonly timeoutMs: number;
  private readonly retries: number;
  private readonly clock: UpstreamClock;
  private readonly schedule: Schedule;
  private readonly random: () => number;
  private readonly closing = new AbortController();

  constructor(private readonly opts: UpstreamClientOptions) {
    if (opts.tokens.length === 0) throw new Error('UpstreamClient needs at least one token');
    const url = new URL(opts.baseUrl);
    this.kind = opts.kind ?? 'official';
    this.baseUrl = opts.baseUrl.replace(/\/+$/, '');
    this.prefix = url.pathname.replace(/\/+$/, '');
    this.tokens = [...opts.tokens];
    this.timeoutMs = opts.timeoutMs ?? 10_000;
    this.retries = opts.retries ?? 2;
    this.clock = opts.clock ?? realClock;
    this.schedule = opts.schedule ?? wallClockSchedule;
    this.random = opts.random ?? Math.random;
    this.pool = new Pool(url.origin, { connections: opts.connections ?? 32, pipelining: 1 });
    this.budget = new RequestBudget({
      tokens: this.tokens.length,
      rps: opts.rps ?? 10,
      maxQueue: opts.maxQueue ?? 1000,
      clock: this.clock,
      ...(opts.sharedBudget ? { shared: new RedisBuckets(opts.sharedBudget, this.tokens) } : {}),
    });
  }

  // async, so a bad tag or id rejects the promise like every other failure instead of throwing.
  async player(tag: string, o?: RequestOptions): Promise<S.Player> {
    return this.get(`/players/${tagPath(tag)}`, S.Player, o);
  }
  async battlelog(tag: string, o?: RequestOptions): Promise<S.BattleLog> {
    return this.get(`/players/${tagPath(tag)}/battlelog`, S.BattleLog, o);
  }
  async club(tag: string, o?: RequestOptions): Promise<S.Club> {
    return this.get(`/clubs/${tagPath(tag)}`, S.Club, o);
  }
  async clubMembers(tag: string, page?: PageQuery, o?: RequestOptions): Promise<S.ClubMembers> {
    return this.get(`/clubs/${tagPath(tag)}/members${pageQuery(page)}`, S.ClubMembers, o);
  }
  async playerRankings(countryCode: string, page?: PageQuery, o?: RequestOptions): Promise<S.PlayerRankings> {
    return this.get(`/rankings/${countryPath(countryCode)}/players${pageQuery(page)}`, S.PlayerRankings, o);
  }
  async clubRankings(countryCode: string, page?: PageQuery, o?: RequestOptions): Promise<S.ClubRankings> {
    return this.get(`/rankings/${countryPath(countryCode)}/clubs${pageQuery(page)}`, S.ClubRankings, o);
  }
  async brawlerRankings(countryCode: string, brawlerId: number, page?: PageQuery, o?: RequestOptions): Promise<S.BrawlerRankings> {
    return this.get(`/rankings/${countryPath(countryCode)}/brawlers/${idPath(brawlerId)}${pageQuery(page)}`, S.BrawlerRankings, o);
  }
  async brawlers(page?: PageQuery, o?: RequestOptions): Promise<S.BrawlerList> {
    return this.get(`/brawlers${pageQuery(page)}`, S.BrawlerList, o);
  }
  async brawler(brawlerId: number, o?: RequestOptions): Promise<S.Brawler> {
    return this.get(`/brawlers/${idPath(brawlerId)}`, S.Brawler, o);
  }
  async eventRotation(o?: RequestOptions): Promise<S.EventRotation> {
    return this.get('/events/rotation', S.EventRotation, o);
  }
  async gameModes(page?: PageQuery, o?: RequestOptions): Promise<S.GameModeList> {
    return this.get(`/gamemodes${pageQuery(page)}`, S.GameModeList, o);
  }

  /** Per-token counters and penalties, and how many requests wait for a token (health, metrics). */
  budgetState(): { tokens: TokenState[]; queued: number } {
    return { tokens: this.budget.tokens(), queued: this.budget.queued };
  }

  async close(): Promise<void> {
    this.closing.abort(new Error('the upstream client is closed'));
    this.budget.close();
    await this.pool.close();
  }

  // ------------------------------------------------------------ one request, with retries

  private async get<T extends z.ZodType>(path: string, schema: T, o: RequestOptions = {}): Promise<z.output<T>> {
    const priority = o.priority ?? 'interactive';
    const deadline = o.budgetMs === undefined ? Infinity : this.clock.now() + Math.max(0, o.budgetMs);
    const left = () => deadline - this.clock.now();
    // A user waits at most about one timeout for a token; the poller can queue longer.
    const maxWaitMs = priority === 'interactive' ? this.timeoutMs : Math.max(60_000, 6 * this.timeoutMs);
    let last: Failure | undefined;
    for (let attempt = 0; attempt <= this.retries; attempt++) {
      if (last && last.retry === 'backoff') {
        const base = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** (attempt - 1));
        const pause = base / 2 + (this.random() * base) / 2;
        // A retry that cannot start within the budget would only make the user wait for nothing.
        if (pause >= left()) throw last.error;
        await this.clock.sleep(pause, o.signal);
      } else if (last && left() <= 0) {
        throw last.error;
      }
      let token: number;
      try {
        // Within a budget, a token that frees up too late (a throttle's Retry-After) is not waited for.
        token = await this.budget.acquire(priority, { signal: o.signal, maxWaitMs: Math.min(maxWaitMs, left()) });
      } catch (e) {
        // No token frees up in time (all throttled): report upstream's throttle when that is why.
        if (e instanceof ThrottledError && last?.error instanceof ThrottledError) {
          throw new ThrottledError(last.error.message, last.error.status, last.error.reason, e.retryAfterSeconds);
        }
        throw e;
      }
      const started = performance.now();
      const result = await this.attempt(path, token, schema, o.signal, Math.min(this.timeoutMs, left()));
      this.opts.onAttempt?.({
        path,
        token,
        outcome: result.ok ? 'ok' : result.failure.outcome,
        status: result.status,
        ms: performance.now() - started,
      });
      if (result.ok) {
        this.budget.succeeded(token);
        return result.value;
      }
      last = result.failure;
      if (last.retry === 'throttle') {
        this.budget.penalise(token, last.penaltyMs ?? this.opts.throttlePenaltyMs ?? 10_000);
        this.opts.logger?.warn({ path, token, penaltyMs: last.penaltyMs }, 'upstream throttled a token');
      } else if (last.retry === 'no') {
        throw last.error;
      } else {
        this.opts.logger?.debug({ path, attempt, outcome: last.outcome }, 'upstream attempt failed; retrying');
      }
    }
    throw last!.error;
  }

  private async attempt<T extends z.ZodType>(
    path: string,
    token: number,
    schema: T,
    signal: AbortSignal | undefined,
    timeoutMs: number,
  ): Promise<{ ok: true; value: z.output<T>; status: number } | { ok: false; failure: Failure; status: number }> {
    const timer = new AbortController();
    const cancelTimeout = this.schedule(Math.max(1, timeoutMs), () => timer.abort(new Error('timeout')));
    const signals = [timer.signal, this.closing.signal, ...(signal ? [signal] : [])];
    let status = 0;
    let text: string;
    let retryAfter: string | string[] | undefined;
    try {
      const res = await this.pool.request({
        path: this.prefix + path,
        method: 'GET',
        headers: {
          authorization: `Bearer ${this.tokens[token]}`,
          accept: 'application/json',
          'user-agent': this.opts.userAgent ?? 'starr-stats (+https://github.com/starr-stats)',
        },
        signal: AbortSignal.any(signals),
      });
      status = res.statusCode;
      retryAfter = res.headers['retry-after'];
      text = await res.body.text();
    } catch (e) {
      if (signal?.aborted) throw signal.reason;
      if (this.closing.signal.aborted) throw this.closing.signal.reason;
      const timedOut = timer.signal.aborted;
      const error = new UnavailableError(
        timedOut
          ? `The game's API did not answer within ${Math.round(timeoutMs)} ms`
          : `The connection to the game's API failed: ${(e as Error).message}`,
        status,
        timedOut ? 'timeout' : 'connection',
      );
      return { ok: false, status, failure: { error, outcome: timedOut ? 'timeout' : 'connection', retry: 'backoff' } };
    } finally {
      cancelTimeout();
    }

    if (status >= 200 && status < 300) {
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        const error = new MalformedResponseError(`The game's API sent a body that is not JSON for ${path}`, status, 'notJson');
        return { ok: false, status, failure: { error, outcome: 'malformed', retry: 'no' } };
      }
      const parsed = schema.safeParse(json);
      if (!parsed.success) {
        const first = parsed.error.issues[0];
        const where = first ? `${first.path.join('.') || 'body'}: ${first.message}` : 'unknown';
        const error = new MalformedResponseError(`The game's API sent an unexpected body for ${path} (${where})`, status, 'schema');
        return { ok: false, status, failure: { error, outcome: 'malformed', retry: 'no' } };
      }
      return { ok: true, status, value: parsed.data };
    }
    return { ok: false, status, failure: this.classify(status, text, parseRetryAfter(retryAfter, Date.now()), path) };
  }

  /** Maps an error answer to a typed error and what to do about it. */
  private classify(status: number, text: string, retryAfterMs: number | undefined, path: string): Failure {
    let body: S.ClientErrorBody = {};
    try {
      const parsed = S.ClientErrorBody.safeParse(JSON.parse(text));
      if (parsed.success) body = parsed.data;
    } catch {
      // An error page that is not JSON (a proxy's HTML) is classified by its status alone.
    }
    const { reason } = body;
    const message = body.message ?? reason ?? `HTTP ${status}`;
    // The overload body {"message": "API at maximum capacity, request throttled."} has no reason.
    const overloaded = reason === undefined && /maximum capacity|throttl/i.test(message);

    if (status === 429 || overloaded) {
      const error = new ThrottledError(message, status, reason ?? 'overloaded', retryAfterMs === undefined ? undefined : Math.ceil(retryAfterMs / 1000));
      return { error, outcome: 'throttled', retry: 'throttle', penaltyMs: retryAfterMs };
    }
    if (status === 503 && reason === 'inMaintenance') {
      // Maintenance lasts 10 to 60 minutes: retrying now only adds load. The caller serves stale data.
      return { error: new MaintenanceError(message, status, reason), outcome: 'maintenance', retry: 'no' };
    }
    if (status === 404) return { error: new NotFoundError(message, status, reason), outcome: 'not_found', retry: 'no' };
    if (status === 403) {
      const ip = reason === 'accessDenied.invalidIp' ? ipFromMessage(message) : undefined;
      return { error: new AccessDeniedError(message, status, reason, ip), outcome: 'access_denied', retry: 'no' };
    }
    if (status >= 500) {
      const error = new UnavailableError(`The game's API answered ${status} for ${path}: ${message}`, status, reason);
      return { error, outcome: 'server_error', retry: 'backoff' };
    }
    return { error: new BadRequestError(message, status, reason), outcome: 'bad_request', retry: 'no' };
  }
}

/**
 * The client as configured: the official API (or BRAWLSTARS_API_URL) with BRAWLSTARS_API_TOKEN, or
 * whatever `target` names (the in-process simulated world when no token is set).
 */
export function createUpstreamClient(
  cfg: Pick<Config, 'BRAWLSTARS_API_URL' | 'BRAWLSTARS_API_TOKEN' | 'UPSTREAM_TIMEOUT_MS' | 'UPSTREAM_RETRIES' | 'UPSTREAM_CONNECTIONS' | 'UPSTREAM_RPS'>,
  target: { baseUrl?: string; tokens?: string[]; kind?: 'official' | 'simulated' } = {},
  extra: Pick<UpstreamClientOptions, 'logger' | 'onAttempt' | 'clock' | 'sharedBudget' | 'userAgent'> = {},
): UpstreamClient {
  return new UpstreamClient({
    baseUrl: target.baseUrl ?? cfg.BRAWLSTARS_API_URL ?? 'https://api.brawlstars.com/v1',
    tokens: target.tokens ?? cfg.BRAWLSTARS_API_TOKEN,
    kind: target.kind ?? 'official',
    timeoutMs: cfg.UPSTREAM_TIMEOUT_MS,
    retries: cfg.UPSTREAM_RETRIES,
    connections: cfg.UPSTREAM_CONNECTIONS,
    rps: cfg.UPSTREAM_RPS,
    ...extra,
  });
}
