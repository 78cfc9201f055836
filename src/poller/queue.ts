/**
 * Polling as BullMQ jobs, for a cluster (REDIS_URL set): the same polls as the in-process loop of
 * `Poller` (its `pollEntity`, `markPolled` and `runJob` are the business rules; this file is only
 * the scheduling), spread over every worker process.
 *
 * - The durable poll schedule (the `tracked` table in SQLite or PostgreSQL) stays the truth. Each
 *   worker scans it (`scanOnce`, every minute at most, or when the next poll is due) and adds one job
 *   per due player or club with a deterministic id — kind, entity id and the time it became due —
 *   so the same due poll added by two workers, or twice by one, is one job. A flushed Redis loses
 *   nothing: the next scan adds again what is still due.
 * - A poll marks the entity's next due time (a new id) only when it has run; a job whose worker died
 *   keeps its lock for POLL_JOB_LOCK_SECONDS, after which another worker's stalled-job check (every
 *   POLL_JOB_LOCK_SECONDS) takes it over.
 * - The periodic jobs (rotation, rankings, catalogue, prune) get the period's start in their id: once
 *   per period across the cluster. The demo backfill is a job too (one id: done once).
 * - Maintenance upstream rate-limits the whole queue (BullMQ's queue-wide rate limit) for the
 *   poller's back-off, so no worker keeps asking.
 * - Completed jobs are kept an hour (their ids make a re-added poll a no-op while a scan that read
 *   the schedule before the poll was recorded may still add it); failed ones a day, for inspection.
 */
import { Queue, Worker, type Job } from 'bullmq';
import type { HistoryService } from '../core/history.ts';
import type { Histogram, Counter, MetricsRegistry } from '../http/metrics.ts';
import type { Logger } from '../log.ts';
import { connectRedis, type Redis, type RedisTarget } from '../store/redis.ts';
import type { EntityKind } from '../store/history-store.ts';
import { JOBS, Maintenance, type JobName, type Poller, type PollerClock } from './index.ts';
import { systemClock } from './clock.ts';

const MINUTE = 60_000;
/** BullMQ's queue name; its keys are `<REDIS_PREFIX>bull:poll:…`. */
export const POLL_QUEUE = 'poll';
const KEEP_COMPLETED = { age: 3600 };
const KEEP_FAILED = { age: 24 * 3600 };

export type PollJob =
  | { kind: 'player' | 'club'; id: number; tag: string; dueAt: number }
  | { kind: 'job'; name: JobName; dueAt: number }
  | { kind: 'backfill'; dueAt: number };

/** The id of a job: the same due poll always gets the same id (BullMQ ignores an add of an id it holds). */
export function pollJobId(job: PollJob): string {
  switch (job.kind) {
    case 'player':
    case 'club':
      return `${job.kind}:${job.id}:${job.dueAt}`;
    case 'job':
      return `job:${job.name}:${job.dueAt}`;
    case 'backfill':
      return 'backfill:demo';
  }
}

/** The start of the period of a periodic job that contains `nowMs`. */
export function periodStart(name: JobName, nowMs: number): number {
  return Math.floor(nowMs / JOBS[name]) * JOBS[name];
}

/** BullMQ's `prefix` for an installation's Redis prefix: its keys stay under REDIS_PREFIX. */
export function queuePrefix(redisPrefix: string): string {
  return `${redisPrefix}bull`;
}

export interface PollQueueOptions {
  poller: Poller;
  history: Pick<HistoryService, 'due' | 'nextDue' | 'flush'>;
  redis: RedisTarget;
  /** POLL_JOB_LOCK_SECONDS in ms: lock duration and stalled-job check interval */
  lockMs: number;
  /** POLL_SCAN_SECONDS in ms: the longest wait between two scans of the schedule (default a minute) */
  scanMs?: number;
  /** jobs one worker runs at once (default 8; the upstream budget paces them) */
  concurrency?: number;
  /** due players or clubs added per scan at most (default 500) */
  perScan?: number;
  /** the demo backfill, run as one job when given */
  backfill?: () => Promise<unknown>;
  clock?: PollerClock;
  logger?: Logger;
  metrics?: MetricsRegistry;
  /** whether this process runs jobs (default true); false only adds them */
  work?: boolean;
}

interface QueueMetrics {
  lag: Histogram;
  jobs: Counter;
}

/** Job counts as last read, shown by /metrics (a scrape cannot wait for Redis). */
type Depth = Record<'waiting' | 'active' | 'delayed' | 'failed' | 'prioritized', number>;

export class PollQueue {
  readonly queue: Queue;
  readonly worker: Worker | null;
  private readonly connections: Redis[] = [];
  private readonly clock: PollerClock;
  private readonly perScan: number;
  private readonly metrics: QueueMetrics | null;
  private depth: Depth | null = null;
  private abort = new AbortController();
  private loop: Promise<void> | null = null;
  private scanning: Promise<number> | null = null;

  constructor(private readonly opts: PollQueueOptions) {
    this.clock = opts.clock ?? systemClock;
    this.perScan = Math.max(1, opts.perScan ?? 500);
    const prefix = queuePrefix(opts.redis.prefix);
    const connection = this.connect('queue');
    this.queue = new Queue(POLL_QUEUE, { connection, prefix });
    this.worker =
      opts.work === false
        ? null
        : new Worker<PollJob>(POLL_QUEUE, (job) => this.process(job), {
            connection: this.connect('worker'),
            prefix,
            concurrency: Math.max(1, opts.concurrency ?? 8),
            lockDuration: opts.lockMs,
            stalledInterval: opts.lockMs,
            // A job may stall twice (two workers dying under it) before it counts as failed.
            maxStalledCount: 2,
            removeOnComplete: KEEP_COMPLETED,
            removeOnFail: KEEP_FAILED,
            autorun: false,
          });
    this.worker?.on('failed', (job, err) => {
      this.opts.logger?.warn({ err, job: job?.id }, 'poll job failed');
      this.metrics?.jobs.inc({ kind: job?.data.kind ?? 'unknown', outcome: 'failed' });
    });
    this.worker?.on('error', (err) => this.opts.logger?.error({ err }, 'poll worker error'));
    this.metrics = opts.metrics ? this.register(opts.metrics) : null;
  }

  private connect(role: string): Redis {
    const c = connectRedis(this.opts.redis, { forQueues: true, name: `starr-poll-${role}` });
    this.connections.push(c);
    return c;
  }

  private register(registry: MetricsRegistry): QueueMetrics {
    registry.gauge('starr_poll_queue_jobs', 'Poll jobs in the shared queue by state, as of the last scan', () =>
      this.depth ? Object.entries(this.depth).map(([state, n]) => [{ state }, n] as [{ state: string }, number]) : [],
    );
    return {
      lag: registry.histogram('starr_poll_lag_seconds', 'Time from when a poll was due to when a worker started it', [
        0.1, 0.5, 1, 5, 15, 30, 60, 120, 300, 900, 3600,
      ]),
      jobs: registry.counter('starr_poll_jobs_total', 'Poll jobs run by this worker, by kind and outcome (ok, retry, gone, paused, failed)'),
    };
  }

  // ------------------------------------------------------------------ adding what is due

  /** Adds a job for everything due now (a no-op for what is queued already); resolves with how many were due. */
  scanOnce(): Promise<number> {
    if (!this.scanning) {
      this.scanning = this.scan().finally(() => {
        this.scanning = null;
      });
    }
    return this.scanning;
  }

  private async scan(): Promise<number> {
    const now = this.clock.now();
    const jobs: PollJob[] = (Object.keys(JOBS) as JobName[]).map((name) => ({ kind: 'job', name, dueAt: periodStart(name, now) }));
    if (this.opts.backfill) jobs.push({ kind: 'backfill', dueAt: now });
    for (const kind of ['player', 'club'] as const) {
      for (const e of await this.opts.history.due(kind, now, this.perScan)) jobs.push({ kind, ...e });
    }
    await this.queue.addBulk(
      jobs.map((data) => ({
        name: data.kind,
        data,
        opts: {
          jobId: pollJobId(data),
          removeOnComplete: data.kind === 'job' ? { age: Math.ceil(JOBS[data.name] / 1000) } : KEEP_COMPLETED,
          removeOnFail: KEEP_FAILED,
        },
      })),
    );
    this.depth = (await this.queue.getJobCounts('waiting', 'active', 'delayed', 'failed', 'prioritized')) as Depth;
    return jobs.length;
  }

  /** When the next scan should run: the next due poll or period, at most a minute away. */
  private async nextScan(): Promise<number> {
    const now = this.clock.now();
    const times = (Object.keys(JOBS) as JobName[]).map((name) => periodStart(name, now) + JOBS[name]);
    for (const kind of ['player', 'club'] as const) {
      const t = await this.opts.history.nextDue(kind, now);
      if (t !== null) times.push(t);
    }
    return Math.min(now + (this.opts.scanMs ?? MINUTE), ...times);
  }

  // ------------------------------------------------------------------ running a job

  private async process(job: Job<PollJob>): Promise<void> {
    const data = job.data;
    const { poller } = this.opts;
    this.metrics?.lag.observe({ kind: data.kind }, Math.max(0, this.clock.now() - data.dueAt) / 1000);
    let outcome: string;
    try {
      if (data.kind === 'job') {
        await poller.runJob(data.name);
        outcome = 'ok';
      } else if (data.kind === 'backfill') {
        await this.opts.backfill?.();
        outcome = 'ok';
      } else {
        outcome = await poller.pollEntity(data.kind, data);
        // What the poll fetched is recorded before the poll counts as done.
        await this.opts.history.flush();
        await poller.markPolled(data.kind as EntityKind, [data.id], outcome as 'ok' | 'retry' | 'gone');
      }
      poller.resume();
    } catch (e) {
      if (!(e instanceof Maintenance)) throw e;
      // Every worker waits: the job goes back to the queue, which takes nothing out until then.
      this.metrics?.jobs.inc({ kind: data.kind, outcome: 'paused' });
      await this.queue.rateLimit(poller.pause());
      throw Worker.RateLimitError();
    }
    this.metrics?.jobs.inc({ kind: data.kind, outcome });
  }

  // ------------------------------------------------------------------ life cycle

  /** Starts taking jobs and scanning the schedule (idempotent). */
  start(): void {
    if (this.loop) return;
    void this.worker?.run().catch((err: unknown) => this.opts.logger?.error({ err }, 'poll worker stopped'));
    this.abort = new AbortController();
    const signal = this.abort.signal;
    this.loop = (async () => {
      while (!signal.aborted) {
        let wait: number;
        try {
          await this.scanOnce();
          wait = Math.max(1000, (await this.nextScan()) - this.clock.now());
        } catch (e) {
          this.opts.logger?.error({ err: e }, 'poll scan failed');
          wait = this.opts.scanMs ?? MINUTE;
        }
        if (signal.aborted) break;
        await this.clock.sleep(wait, signal);
      }
    })();
  }

  /**
   * Stops scanning and taking jobs; the jobs under way finish and are recorded (SIGTERM). What is
   * still queued stays in Redis for the other workers, or for this one after a restart.
   */
  async close(): Promise<void> {
    // No new job from here on; the ones under way run to their end.
    const stopping = this.worker?.close();
    if (this.worker) this.opts.logger?.info('poll worker stopping: no new jobs, finishing the ones under way');
    this.abort.abort();
    await this.loop;
    await this.scanning?.catch(() => {});
    await stopping;
    await this.queue.close();
    for (const c of this.connections) c.disconnect();
  }
}
