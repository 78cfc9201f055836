/**
 * The loop of a scheduled delivery (leaderboards, club feeds, role sync): runs `tick` every
 * `everyMs` until stopped, never two at once (a tick still running when the next is due is
 * skipped), a failure logged and the loop carried on; each tick done is logged at debug level.
 * `stop()` waits for the tick under way.
 */
import type { Logger } from '../log.ts';

export class Ticker {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;

  constructor(
    /** what runs, for the log line of a failure, e.g. 'leaderboard tick' */
    private readonly what: string,
    private readonly logger: Logger,
  ) {}

  start(everyMs: number, tick: () => Promise<unknown>): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      if (this.running) return;
      this.running = tick()
        // At debug level each check says it ran (and what it did): how a test or an operator
        // sees that a process keeps checking, also when nothing was due.
        .then((result) => this.logger.debug({ tick: this.what, result }, 'tick done'))
        .catch((e) => this.logger.error({ err: e }, `${this.what} failed`))
        .finally(() => {
          this.running = undefined;
        });
    }, everyMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }
}
