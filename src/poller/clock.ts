/**
 * Time as the poller sees it: `now()` and an abortable `sleep`. Production uses the wall clock;
 * tests inject the simulated world's virtual clock and drive `Poller.runOnce()` themselves, or a
 * `ManualSleeper` to run the loop without a single real wait.
 */
export interface PollerClock {
  /** epoch milliseconds */
  now(): number;
  /** resolves after `ms` (or at once when the signal aborts) */
  sleep(ms: number, signal: AbortSignal): Promise<void>;
}

export const systemClock: PollerClock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve) => {
      if (signal.aborted) return resolve();
      const timer = setTimeout(done, Math.max(0, ms));
      // A sleeping poller must not keep the process alive on its own.
      timer.unref?.();
      function done() {
        signal.removeEventListener('abort', done);
        clearTimeout(timer);
        resolve();
      }
      signal.addEventListener('abort', done, { once: true });
    }),
};

/**
 * A clock whose sleeps end only when the test says so: `sleeping` tells how long the poller asked
 * to sleep, `wake()` ends the current sleep (after the test moved its virtual time forward).
 */
export class ManualSleeper implements PollerClock {
  private waiter: { resolve: () => void; ms: number } | null = null;
  private readonly asleep: (() => void)[] = [];

  constructor(readonly now: () => number) {}

  sleep(ms: number, signal: AbortSignal): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = () => {
        if (this.waiter?.resolve === done) this.waiter = null;
        resolve();
      };
      if (signal.aborted) return resolve();
      signal.addEventListener('abort', done, { once: true });
      this.waiter = { resolve: done, ms };
      for (const f of this.asleep.splice(0)) f();
    });
  }

  /** The milliseconds the poller is sleeping for, or null when it is not asleep. */
  get sleeping(): number | null {
    return this.waiter?.ms ?? null;
  }

  /** Resolves when the poller next goes to sleep (immediately if it already is). */
  untilAsleep(): Promise<number> {
    if (this.waiter) return Promise.resolve(this.waiter.ms);
    return new Promise((resolve) => this.asleep.push(() => resolve(this.waiter!.ms)));
  }

  wake(): void {
    this.waiter?.resolve();
  }
}
