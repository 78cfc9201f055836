/**
 * The shared request budget of the upstream tokens: every request (a user waiting or the poller)
 * first takes a slot here. Each token sends at most `rps` requests per second (GCRA, so a token that
 * idled may send a one-second burst); tokens are used round-robin; a token that upstream throttled is
 * skipped until its penalty ends and then runs slower for a while. When no token has room, requests
 * wait in a bounded queue where interactive requests go before polling ones.
 *
 * In a cluster the buckets themselves live in Redis (`shared`, src/upstream/shared-budget.ts), so
 * every process draws on the same per-token rate; the queue and its priorities stay per process.
 */
import { ThrottledError } from './errors.ts';

/** Time source of the client; tests pass a virtual one so back-off needs no real waiting. */
export interface UpstreamClock {
  now(): number;
  /** resolves after `ms` milliseconds; rejects with the signal's reason when it aborts */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const realClock: UpstreamClock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const onAbort = () => {
        clearTimeout(timer);
        reject(signal!.reason);
      };
      const timer = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, Math.max(0, ms));
      signal?.addEventListener('abort', onAbort, { once: true });
    }),
};

export type Priority = 'interactive' | 'poll';

/** What the shared buckets decide for one request: a token (and its speed), or when to ask again. */
export type SharedTake = { token: number; speed: number } | { readyAt: number };

/** The buckets of every process of a cluster (src/upstream/shared-budget.ts). */
export interface SharedBuckets {
  /** Room for one request on the first token (round-robin from `from`) that has it. */
  take(priority: Priority, now: number, o: { rps: number; burst: number; from: number }): Promise<SharedTake>;
  penalise(token: number, now: number, penaltyMs: number, o: { rps: number; burst: number; minSpeed: number }): Promise<void>;
  succeeded(token: number, step: number): Promise<void>;
}

export interface BudgetOptions {
  /** how many tokens share the work */
  tokens: number;
  /** requests per second each token may send */
  rps: number;
  /** requests a rested token may send at once (default: one second's worth) */
  burst?: number;
  /** waiting requests at most; beyond it a poll waiter makes room for an interactive one, else the newcomer is refused */
  maxQueue?: number;
  clock?: UpstreamClock;
  /**
   * Buckets shared with other processes; when it fails (Redis down) this process falls back to its
   * own buckets, so it keeps working at its own rate.
   */
  shared?: SharedBuckets;
}

export interface AcquireOptions {
  signal?: AbortSignal;
  /** refuse (ThrottledError) instead of waiting longer than this */
  maxWaitMs?: number;
}

export interface TokenState {
  requests: number;
  throttled: number;
  /** epoch ms until which the token is skipped (0 when it is not) */
  penaltyUntil: number;
  /** share of `rps` the token currently runs at (1 = full speed) */
  speed: number;
}

interface Slot extends TokenState {
  /** GCRA theoretical arrival time of the next request */
  tat: number;
}

interface Waiter {
  priority: Priority;
  deadline: number;
  resolve(token: number): void;
  reject(err: unknown): void;
  cleanup(): void;
}

/** Slowest a throttled token runs, as a share of rps. */
const MIN_SPEED = 1 / 8;
/** Speed regained per successful request after a throttle. */
const SPEED_STEP = 1 / 20;

export class RequestBudget {
  private readonly slots: Slot[];
  private readonly rps: number;
  private readonly burst: number;
  private readonly maxQueue: number;
  private readonly clock: UpstreamClock;
  private readonly queues: Record<Priority, Waiter[]> = { interactive: [], poll: [] };
  private cursor = 0;
  private pumping = false;
  private wake: AbortController | null = null;
  private closed = false;
  private readonly shared?: SharedBuckets;
  /** the speed the shared bucket of each token last reported */
  private readonly sharedSpeed: number[];

  constructor(opts: BudgetOptions) {
    if (opts.tokens < 1) throw new RangeError('the request budget needs at least one token');
    this.rps = opts.rps;
    this.burst = Math.max(1, opts.burst ?? Math.ceil(opts.rps));
    this.maxQueue = opts.maxQueue ?? 1000;
    this.clock = opts.clock ?? realClock;
    this.slots = Array.from({ length: opts.tokens }, () => ({ requests: 0, throttled: 0, penaltyUntil: 0, speed: 1, tat: 0 }));
    this.shared = opts.shared;
    this.sharedSpeed = this.slots.map(() => 1);
  }

  get queued(): number {
    return this.queues.interactive.length + this.queues.poll.length;
  }

  tokens(): TokenState[] {
    return this.slots.map(({ requests, throttled, penaltyUntil, speed }) => ({ requests, throttled, penaltyUntil, speed }));
  }

  /** Takes a slot for one request; resolves with the index of the token to send it with. */
  acquire(priority: Priority, opts: AcquireOptions = {}): Promise<number> {
    if (this.closed) return Promise.reject(new ThrottledError('the upstream client is closed', 0, 'closed'));
    if (opts.signal?.aborted) return Promise.reject(opts.signal.reason);
    const now = this.clock.now();
    // Nobody is waiting: take a slot straight away when one is free (the common, cheap path).
    // With shared buckets every request asks Redis, through the queue.
    if (this.queued === 0 && !this.shared) {
      const token = this.take(now);
      if (token !== null) return Promise.resolve(token);
    }
    const maxWait = opts.maxWaitMs ?? Infinity;
    const eta = this.estimate(now, priority);
    if (eta - now > maxWait) return Promise.reject(this.refusal('no upstream token has room in time', eta - now));
    if (this.queued >= this.maxQueue) {
      const victim = priority === 'interactive' ? this.queues.poll.pop() : undefined;
      if (!victim) return Promise.reject(this.refusal('too many requests are waiting for upstream', eta - now));
      victim.cleanup();
      victim.reject(this.refusal('an interactive request took its place in the upstream queue', eta - now));
    }
    return new Promise<number>((resolve, reject) => {
      const signal = opts.signal;
      const onAbort = () => {
        this.remove(waiter);
        reject(signal!.reason);
      };
      const waiter: Waiter = {
        priority,
        deadline: now + maxWait,
        resolve,
        reject,
        cleanup: () => signal?.removeEventListener('abort', onAbort),
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.queues[priority].push(waiter);
      this.kick();
    });
  }

  /** Upstream throttled this token: skip it for `penaltyMs`, then let it run slower for a while. */
  penalise(token: number, penaltyMs: number): void {
    const s = this.slots[token];
    if (!s) return;
    const now = this.clock.now();
    s.throttled++;
    s.penaltyUntil = Math.max(s.penaltyUntil, now + Math.max(0, penaltyMs));
    s.speed = Math.max(MIN_SPEED, s.speed / 2);
    // No burst when the penalty ends: the next request is spaced at the slower rate.
    s.tat = Math.max(s.tat, s.penaltyUntil + this.tau(s));
    // The token is throttled for every process: they all skip it.
    if (this.shared) {
      this.sharedSpeed[token] = Math.max(MIN_SPEED, (this.sharedSpeed[token] ?? 1) / 2);
      void this.shared.penalise(token, now, Math.max(0, penaltyMs), { rps: this.rps, burst: this.burst, minSpeed: MIN_SPEED }).catch(() => undefined);
    }
    this.kick();
  }

  /** A request on this token went through: it regains speed step by step. */
  succeeded(token: number): void {
    const s = this.slots[token];
    if (s && s.speed < 1) s.speed = Math.min(1, s.speed + SPEED_STEP);
    if (this.shared && (this.sharedSpeed[token] ?? 1) < 1) {
      this.sharedSpeed[token] = Math.min(1, this.sharedSpeed[token]! + SPEED_STEP);
      void this.shared.succeeded(token, SPEED_STEP).catch(() => undefined);
    }
  }

  close(): void {
    this.closed = true;
    for (const q of [this.queues.interactive, this.queues.poll]) {
      for (const w of q.splice(0)) {
        w.cleanup();
        w.reject(new ThrottledError('the upstream client is closed', 0, 'closed'));
      }
    }
    this.wake?.abort();
  }

  // ------------------------------------------------------------ internals

  private interval(s: Slot): number {
    return 1000 / (this.rps * s.speed);
  }

  private tau(s: Slot): number {
    return (this.burst - 1) * this.interval(s);
  }

  /** The earliest instant this token may send. */
  private readyAt(s: Slot): number {
    return Math.max(s.penaltyUntil, s.tat - this.tau(s));
  }

  /** Round-robin over the tokens that may send now; null when none may. */
  private take(now: number): number | null {
    const n = this.slots.length;
    for (let k = 0; k < n; k++) {
      const i = (this.cursor + k) % n;
      const s = this.slots[i]!;
      if (s.penaltyUntil > now || s.tat - this.tau(s) > now) continue;
      s.tat = Math.max(s.tat, now) + this.interval(s);
      s.requests++;
      this.cursor = (i + 1) % n;
      return i;
    }
    return null;
  }

  private earliest(now: number): number {
    let t = Infinity;
    for (const s of this.slots) t = Math.min(t, this.readyAt(s));
    return Math.max(now, t);
  }

  /** When a request of this priority joining now would get its slot, roughly. */
  private estimate(now: number, priority: Priority): number {
    const ahead = priority === 'interactive' ? this.queues.interactive.length : this.queued;
    let rate = 0;
    for (const s of this.slots) rate += this.rps * s.speed;
    return this.earliest(now) + (ahead * 1000) / rate;
  }

  private refusal(message: string, waitMs: number): ThrottledError {
    return new ThrottledError(message, 0, 'localBudget', Math.max(1, Math.ceil(waitMs / 1000)));
  }

  private remove(w: Waiter): void {
    const q = this.queues[w.priority];
    const i = q.indexOf(w);
    if (i >= 0) q.splice(i, 1);
    w.cleanup();
  }

  private kick(): void {
    if (this.pumping) this.wake?.abort();
    else void this.pump();
  }

  /** Hands free slots to waiters (interactive first) and sleeps until the next slot or deadline. */
  private async pump(): Promise<void> {
    this.pumping = true;
    try {
      while (!this.closed && this.queued > 0) {
        const now = this.clock.now();
        this.expire(now);
        if (this.queued === 0) break;
        const shared = this.shared ? await this.takeShared(now) : null;
        const token = shared ? ('token' in shared ? shared.token : null) : this.take(now);
        if (token !== null) {
          // (a waiter that gave up while Redis answered leaves the slot to the next one)
          const w = this.queues.interactive.shift() ?? this.queues.poll.shift();
          if (!w) break;
          w.cleanup();
          w.resolve(token);
          continue;
        }
        let until = shared && 'readyAt' in shared ? Math.max(now, shared.readyAt) : this.earliest(now);
        for (const q of [this.queues.interactive, this.queues.poll]) for (const w of q) until = Math.min(until, w.deadline);
        this.wake = new AbortController();
        try {
          await this.clock.sleep(Math.max(1, Math.ceil(until - now)), this.wake.signal);
        } catch {
          // woken early: a penalty, a new waiter or close changed the picture
        }
        this.wake = null;
      }
    } finally {
      this.pumping = false;
    }
  }

  /** Room on the shared buckets for the first waiter; null when Redis fails (this process's own buckets decide). */
  private async takeShared(now: number): Promise<SharedTake | null> {
    const head = this.queues.interactive[0] ?? this.queues.poll[0];
    try {
      const r = await this.shared!.take(head?.priority ?? 'poll', now, { rps: this.rps, burst: this.burst, from: this.cursor });
      if ('token' in r) {
        const s = this.slots[r.token];
        if (s) s.requests++;
        this.sharedSpeed[r.token] = r.speed;
        this.cursor = (r.token + 1) % this.slots.length;
      }
      return r;
    } catch {
      return null;
    }
  }

  private expire(now: number): void {
    for (const q of [this.queues.interactive, this.queues.poll]) {
      for (let i = q.length - 1; i >= 0; i--) {
        const w = q[i]!;
        if (w.deadline < now) {
          q.splice(i, 1);
          w.cleanup();
          w.reject(this.refusal('waited too long for an upstream token', this.earliest(now) - now));
        }
      }
    }
  }
}
