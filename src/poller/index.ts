/**
 * The poller: keeps recorded history moving. Every tick it runs whatever is due —
 *   tracked players (profile + battle log) every POLL_PLAYER_MINUTES,
 *   tracked clubs every POLL_CLUB_MINUTES,
 *   the event rotation every 5 minutes, rankings (global + RANKING_COUNTRIES) hourly,
 *   the brawler catalogue daily, pruning (HISTORY_DAYS) daily —
 * through the StatsService with `fresh` reads at 'poll' priority, so interactive look-ups go first
 * in the shared upstream budget and every answer is recorded by the history observer. During
 * maintenance it backs off (1 minute, doubling up to 15) and resumes when upstream answers again.
 *
 * Time comes from an injected clock: tests call `runOnce()` after moving the simulated world's
 * virtual clock; `start()` loops with the clock's abortable sleep and `stop()` ends it cleanly.
 */
import type { Config } from '../config.ts';
import type { HistoryService } from '../core/history.ts';
import type { EntityKind } from '../store/history-store.ts';
import type { Fetched, ReadOptions, UpstreamReads } from '../core/types.ts';
import type { Logger } from '../log.ts';
import { MaintenanceError, NotFoundError, isUpstreamError } from '../upstream/errors.ts';
import { systemClock, type PollerClock } from './clock.ts';

export { systemClock, ManualSleeper, type PollerClock } from './clock.ts';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

export type PollerConfig = Pick<Config, 'POLL_PLAYER_MINUTES' | 'POLL_CLUB_MINUTES' | 'RANKING_COUNTRIES' | 'HISTORY_DAYS'>;

export interface PollerOptions {
  stats: Pick<UpstreamReads, 'player' | 'battlelog' | 'club' | 'playerRankings' | 'clubRankings' | 'brawlers' | 'eventRotation'>;
  history: HistoryService;
  config: PollerConfig;
  clock?: PollerClock;
  logger?: Logger;
  /** requests in flight at once (the upstream budget paces them; default 8) */
  concurrency?: number;
  /** players or clubs polled per tick at most, so jobs never wait behind a long backlog (default 500) */
  perTick?: number;
  /** how many of the global ranking's top players stay tracked (best builds need them; default 100) */
  pinTopPlayers?: number;
}

/** The periodic jobs besides players and clubs, with their periods. */
export const JOBS = { rotation: 5 * MINUTE, rankings: HOUR, catalogue: DAY, prune: DAY } as const;
export type JobName = keyof typeof JOBS;

/** How a poll of a tracked entity went; it decides when the entity is due next. */
export type PollOutcome = 'ok' | 'retry' | 'gone';

/** A tracked player or club whose poll is due (`dueAt`, epoch ms: when it became due). */
export type DueEntity = { id: number; tag: string; dueAt: number };

export interface PollReport {
  /** epoch ms of the tick */
  at: number;
  jobs: JobName[];
  players: number;
  clubs: number;
  failures: number;
  /** true when the tick met maintenance (and the poller is backing off) */
  maintenance: boolean;
}

const POLL: ReadOptions = { fresh: true, priority: 'poll', viewed: false };
const FIRST_BACKOFF = MINUTE;
const MAX_BACKOFF = 15 * MINUTE;
/** After another failure an entity is retried this much later, not at the next tick. */
const RETRY_AFTER = 5 * MINUTE;
/** A tag upstream no longer knows is asked again a day later (it may come back; it will expire). */
const GONE_RETRY = DAY;

/** Upstream is in maintenance: polling pauses (`pause()`) instead of failing entity after entity. */
export class Maintenance extends Error {}

export class Poller {
  private readonly clock: PollerClock;
  private readonly concurrency: number;
  private readonly perTick: number;
  private readonly pinTop: number;
  private readonly last = new Map<JobName, number>();
  private backoff = 0;
  private pausedUntil = 0;
  private loop: Promise<void> | null = null;
  private abort = new AbortController();
  private running: Promise<PollReport> | null = null;

  constructor(private readonly opts: PollerOptions) {
    this.clock = opts.clock ?? systemClock;
    this.concurrency = Math.max(1, opts.concurrency ?? 8);
    this.perTick = Math.max(1, opts.perTick ?? 500);
    this.pinTop = Math.max(0, opts.pinTopPlayers ?? 100);
  }

  /** True while backing off after maintenance. */
  get paused(): boolean {
    return this.clock.now() < this.pausedUntil;
  }

  /** Runs everything due now, once; resolves when what it fetched is recorded. */
  runOnce(): Promise<PollReport> {
    if (!this.running) {
      this.running = this.tick().finally(() => {
        this.running = null;
      });
    }
    return this.running;
  }

  private async tick(): Promise<PollReport> {
    const now = this.clock.now();
    const report: PollReport = { at: now, jobs: [], players: 0, clubs: 0, failures: 0, maintenance: false };
    if (now < this.pausedUntil) {
      report.maintenance = true;
      return report;
    }
    if (this.last.size === 0) await this.loadJobTimes();
    try {
      for (const name of Object.keys(JOBS) as JobName[]) {
        if (now - (this.last.get(name) ?? -Infinity) < JOBS[name]) continue;
        await this.runJob(name);
        this.last.set(name, now);
        report.jobs.push(name);
      }
      await this.saveJobTimes(report.jobs);
      const players = await this.opts.history.due('player', now, this.perTick);
      const p = await this.each(players, 'player');
      report.players = p.ok;
      report.failures += p.failed;
      const clubs = await this.opts.history.due('club', now, this.perTick);
      const c = await this.each(clubs, 'club');
      report.clubs = c.ok;
      report.failures += c.failed;
      this.resume();
    } catch (e) {
      if (!(e instanceof Maintenance)) throw e;
      this.pause();
      report.maintenance = true;
    } finally {
      await this.opts.history.flush();
    }
    return report;
  }

  /** Polls entities with bounded concurrency; maintenance stops the round (what was polled stays polled). */
  private async each(list: DueEntity[], kind: EntityKind): Promise<{ ok: number; failed: number }> {
    let next = 0;
    let ok = 0;
    let failed = 0;
    let maintenance: Maintenance | null = null;
    const outcomes: Record<PollOutcome, number[]> = { ok: [], retry: [], gone: [] };
    const worker = async () => {
      while (next < list.length && !maintenance && !this.abort.signal.aborted) {
        const e = list[next++]!;
        try {
          const outcome = await this.pollEntity(kind, e);
          outcomes[outcome].push(e.id);
          outcome === 'ok' ? ok++ : failed++;
        } catch (err) {
          if (!(err instanceof Maintenance)) throw err;
          maintenance = err;
          break;
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.concurrency, list.length) }, worker));
    for (const outcome of ['ok', 'retry', 'gone'] as const) await this.markPolled(kind, outcomes[outcome], outcome);
    if (maintenance) throw maintenance;
    return { ok, failed };
  }

  /**
   * One poll of a tracked player or club: what a due entity costs upstream. Resolves with how it
   * went (a tag upstream no longer knows is 'gone', any other failure 'retry'); throws `Maintenance`
   * when upstream is in maintenance, so whoever schedules polls pauses them all.
   */
  async pollEntity(kind: EntityKind, e: { tag: string }): Promise<PollOutcome> {
    try {
      if (kind === 'player') await this.pollPlayer(e.tag);
      else await this.pollClub(e.tag);
      return 'ok';
    } catch (err) {
      if (err instanceof Maintenance) throw err;
      this.opts.logger?.debug({ err, kind, tag: e.tag }, 'poll failed');
      return err instanceof NotFoundError ? 'gone' : 'retry';
    }
  }

  /** Records polls of these entities and when each is due next, by how the poll went. */
  async markPolled(kind: EntityKind, ids: number[], outcome: PollOutcome): Promise<void> {
    if (ids.length === 0) return;
    const now = this.clock.now();
    const wait = outcome === 'gone' ? GONE_RETRY : outcome === 'retry' ? RETRY_AFTER : this.intervalOf(kind);
    await this.opts.history.markPolled(kind, ids, now, now + wait);
  }

  /** How often a tracked entity of this kind is polled (POLL_PLAYER_MINUTES, POLL_CLUB_MINUTES). */
  intervalOf(kind: EntityKind): number {
    return (kind === 'player' ? this.opts.config.POLL_PLAYER_MINUTES : this.opts.config.POLL_CLUB_MINUTES) * MINUTE;
  }

  /** Maintenance met: the pause doubles from 1 minute up to 15; returns how long it lasts (ms). */
  pause(): number {
    this.backoff = this.backoff === 0 ? FIRST_BACKOFF : Math.min(MAX_BACKOFF, this.backoff * 2);
    this.pausedUntil = this.clock.now() + this.backoff;
    this.opts.logger?.warn({ retryInMs: this.backoff }, 'upstream in maintenance: polling paused');
    return this.backoff;
  }

  /** Upstream answered again: the next maintenance starts from the shortest pause. */
  resume(): void {
    this.backoff = 0;
  }

  /** A fetched answer that is a stale copy means upstream failed: maintenance pauses everything. */
  private check<T>(f: Fetched<T>): Fetched<T> {
    if (f.stale) {
      if (f.staleReason === 'maintenance') throw new Maintenance('maintenance');
      throw new Error(`upstream failed (${f.staleReason ?? 'unknown'}); served a stale copy`);
    }
    return f;
  }

  private async call<T>(read: () => Promise<Fetched<T>>): Promise<Fetched<T>> {
    try {
      return this.check(await read());
    } catch (e) {
      if (e instanceof MaintenanceError) throw new Maintenance(e.message);
      throw e;
    }
  }

  private async pollPlayer(tag: string): Promise<void> {
    const { stats } = this.opts;
    await this.call(() => stats.player(tag, POLL));
    await this.call(() => stats.battlelog(tag, POLL));
  }

  private async pollClub(tag: string): Promise<void> {
    await this.call(() => this.opts.stats.club(tag, POLL));
  }

  /** The work of a periodic job (rotation, rankings, catalogue, prune); throws `Maintenance` as polls do. */
  async runJob(name: JobName): Promise<void> {
    const { stats, history, config } = this.opts;
    switch (name) {
      case 'rotation':
        await this.call(() => stats.eventRotation(POLL));
        return;
      case 'catalogue':
        await this.call(() => stats.brawlers(POLL));
        return;
      case 'rankings': {
        for (const region of ['global', ...config.RANKING_COUNTRIES]) {
          try {
            const players = await this.call(() => stats.playerRankings(region, undefined, POLL));
            await this.call(() => stats.clubRankings(region, undefined, POLL));
            if (region === 'global' && this.pinTop > 0) {
              await history.replacePins('player', 'ranking:global', players.data.items.slice(0, this.pinTop).map((i) => i.tag), this.clock.now());
            }
          } catch (e) {
            // One country the API does not know must not stop the others.
            if (e instanceof Maintenance || !isUpstreamError(e) || e.kind !== 'not_found') throw e;
          }
        }
        return;
      }
      case 'prune': {
        const r = await history.prune();
        this.opts.logger?.info({ ...r }, 'pruned history');
        return;
      }
    }
  }

  private async loadJobTimes(): Promise<void> {
    const saved = await this.opts.history.jobTimes();
    for (const [k, v] of Object.entries(saved)) if (k in JOBS) this.last.set(k as JobName, v);
    if (this.last.size === 0) this.last.set('prune', this.clock.now()); // a fresh store has nothing to prune
  }

  private async saveJobTimes(ran: JobName[]): Promise<void> {
    if (ran.length === 0) return;
    await this.opts.history.saveJobTimes(Object.fromEntries(this.last));
  }

  /** When the next thing is due (epoch ms). */
  async nextDue(): Promise<number> {
    const now = this.clock.now();
    if (now < this.pausedUntil) return this.pausedUntil;
    const times = (Object.keys(JOBS) as JobName[]).map((j) => (this.last.get(j) ?? -Infinity) + JOBS[j]);
    for (const kind of ['player', 'club'] as const) {
      const t = await this.opts.history.nextDue(kind, now);
      if (t !== null) times.push(t);
    }
    return Math.min(...times);
  }

  /** Starts the loop (idempotent). Errors are logged and the loop carries on after a minute. */
  start(): void {
    if (this.loop) return;
    this.abort = new AbortController();
    const signal = this.abort.signal;
    this.loop = (async () => {
      while (!signal.aborted) {
        let wait: number;
        try {
          await this.runOnce();
          // Wake for the next due item, but at least every minute (new look-ups become due at once).
          wait = Math.min(MINUTE, Math.max(1000, (await this.nextDue()) - this.clock.now()));
        } catch (e) {
          this.opts.logger?.error({ err: e }, 'poller tick failed');
          wait = MINUTE;
        }
        if (signal.aborted) break;
        await this.clock.sleep(wait, signal);
      }
    })();
  }

  /** Stops the loop: no new polls start, the tick under way finishes and is recorded. */
  async stop(): Promise<void> {
    this.abort.abort();
    await this.loop;
    await this.running?.catch(() => {});
    this.loop = null;
  }
}
