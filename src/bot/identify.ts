/**
 * When a gateway shard may IDENTIFY. Discord lets a bot start `max_concurrency` sessions per 5 s:
 * shard `id` belongs to rate-limit bucket `id % max_concurrency`, and each bucket takes one
 * IDENTIFY per 5 s. An IDENTIFY too early is refused and the connection closed. discord.js's own
 * SimpleIdentifyThrottler counts in one process; with shards spread over processes (SHARD_IDS),
 * two processes starting at once would both identify in the same bucket. So the turn is a claim on
 * core.coordination (src/core/coordination.ts): memory in one process, the cluster's Redis
 * otherwise, keyed by the application, since each bot application has limits of its own.
 *
 *   new Client({ ..., ws: { buildIdentifyThrottler: (m) => sharedIdentifyThrottler(m, coordination, appId) } });
 */
import type { IIdentifyThrottler, WebSocketManager } from '@discordjs/ws';
import type { Coordination } from '../core/coordination.ts';
import { wallClockSchedule, type Schedule } from '../lib/schedule.ts';

/** Discord's identify window per bucket. */
export const IDENTIFY_WINDOW_MS = 5_000;
/**
 * How long a turn is held: the window plus a margin, because the turn is taken before the shard
 * sends IDENTIFY, and Discord times the IDENTIFY's arrival. With the bare 5 s, two bot processes
 * starting together on a loaded 2-core machine had the second IDENTIFY refused (test/cluster.test.ts);
 * discord.js's own throttler adds up to 1.5 s at random for the same reason.
 */
export const IDENTIFY_TURN_MS = IDENTIFY_WINDOW_MS + 1_000;

export interface IdentifyThrottlerOptions {
  /** waits between tries (default the wall clock) */
  schedule?: Schedule;
  /** called each time a shard has to wait its bucket's turn (logs, tests) */
  onWait?: (shardId: number, ms: number) => void;
  /** called when the turn could not be taken because the shared store failed */
  onUnshared?: (shardId: number, err: unknown) => void;
}

export class SharedIdentifyThrottler implements IIdentifyThrottler {
  private readonly schedule: Schedule;

  constructor(
    private readonly coordination: Coordination,
    private readonly appId: string,
    readonly maxConcurrency: number,
    private readonly opts: IdentifyThrottlerOptions = {},
  ) {
    if (!Number.isInteger(maxConcurrency) || maxConcurrency < 1) throw new Error(`max_concurrency must be a whole number ≥ 1, got ${maxConcurrency}`);
    this.schedule = opts.schedule ?? wallClockSchedule;
  }

  /** The claim key of a shard's bucket. */
  key(shardId: number): string {
    return `identify:${this.appId}:${shardId % this.maxConcurrency}`;
  }

  async waitForIdentify(shardId: number, signal: AbortSignal): Promise<void> {
    const key = this.key(shardId);
    for (;;) {
      signal.throwIfAborted();
      let ms: number;
      try {
        if (await this.coordination.claim(key, IDENTIFY_TURN_MS)) return;
        // The holder's window ends in `left` ms; a little extra so the claim has surely expired,
        // and never a busy loop when the answer is 0 (expired between the two calls).
        ms = Math.max(50, (await this.coordination.claimExpiresIn(key)) + 25);
      } catch (e) {
        // The shared store is down: a shard must still come back. It waits a whole turn and
        // identifies; should another process do the same, Discord refuses one IDENTIFY (4008)
        // and discord.js connects that shard again, through here.
        this.opts.onUnshared?.(shardId, e);
        await this.sleep(IDENTIFY_TURN_MS, signal);
        return;
      }
      this.opts.onWait?.(shardId, ms);
      await this.sleep(ms, signal);
    }
  }

  private sleep(ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        cancel();
        reject(signal.reason ?? new Error('aborted'));
      };
      const cancel = this.schedule(ms, () => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      });
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }
}

/** A `buildIdentifyThrottler` for discord.js: max_concurrency from GET /gateway/bot, turns on the coordination. */
export async function sharedIdentifyThrottler(
  manager: WebSocketManager,
  coordination: Coordination,
  appId: string,
  opts: IdentifyThrottlerOptions = {},
): Promise<SharedIdentifyThrottler> {
  const info = await manager.fetchGatewayInformation();
  return new SharedIdentifyThrottler(coordination, appId, info.session_start_limit.max_concurrency, opts);
}
