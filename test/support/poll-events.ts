/**
 * The poll queue's own event stream (BullMQ's QueueEvents on the shared Redis), for tests that wait
 * for polls to start or finish in other processes or connections without polling a store:
 *
 *   const ev = await PollEvents.open({ url: REDIS_URL, prefix: 'starr_c…:' });
 *   await ev.started(16);                      // 16 poll jobs active since it opened
 *   await ev.completedAll(['player:12:…', …]); // every one of these job ids completed
 */
import { QueueEvents } from 'bullmq';
import { POLL_QUEUE, queuePrefix } from '../../src/poller/queue.ts';
import { connectRedis, type Redis, type RedisTarget } from '../../src/store/redis.ts';

export class PollEvents {
  /** ids of the jobs completed since it opened */
  readonly completed = new Set<string>();
  /** ids of the jobs that became active since it opened, in order */
  readonly active: string[] = [];
  private waiters: { test: () => boolean; resolve: () => void }[] = [];

  private constructor(
    private readonly events: QueueEvents,
    private readonly connection: Redis,
  ) {
    events.on('completed', ({ jobId }) => this.note(() => this.completed.add(jobId)));
    events.on('active', ({ jobId }) => this.note(() => this.active.push(jobId)));
  }

  static async open(target: RedisTarget): Promise<PollEvents> {
    const connection = connectRedis(target, { forQueues: true });
    const events = new QueueEvents(POLL_QUEUE, { connection, prefix: queuePrefix(target.prefix) });
    await events.waitUntilReady();
    return new PollEvents(events, connection);
  }

  private note(change: () => void): void {
    change();
    this.waiters = this.waiters.filter((w) => (w.test() ? (w.resolve(), false) : true));
  }

  /** Resolves once `test` holds (checked at every event). */
  until(test: () => boolean): Promise<void> {
    if (test()) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ test, resolve }));
  }

  /** Resolves once every job id given has completed. */
  completedAll(ids: string[]): Promise<void> {
    return this.until(() => ids.every((id) => this.completed.has(id)));
  }

  /** Resolves once a completed job's id starts with `prefix`. */
  completedSome(prefix: string): Promise<void> {
    return this.until(() => [...this.completed].some((j) => j.startsWith(prefix)));
  }

  async close(): Promise<void> {
    await this.events.close();
    // BullMQ leaves a connection it was given open: without this a script never exits.
    this.connection.disconnect();
  }
}
