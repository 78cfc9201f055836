/**
 * Fault injection for the simulated world: what can go wrong with the real API, on demand.
 * Set at start (`startSim({ faults })`), changed while running (`sim.faults.set(...)` in process, or
 * `POST /_sim/faults` on a standalone server). Random faults are drawn from a seeded sequence, so a
 * run with the same settings and the same requests sees the same faults.
 */
import { z } from 'zod';
import { hashString, unit } from './rng.ts';

export interface LatencyConfig {
  /** every response waits between minMs and maxMs (uniform), real milliseconds */
  minMs: number;
  maxMs: number;
  /** share of requests that instead wait spikeMs */
  spikeRate: number;
  spikeMs: number;
}

export interface FaultConfig {
  latency: LatencyConfig;
  /** share of requests answered 429 requestThrottled (with Retry-After) */
  throttleRate: number;
  /** Retry-After seconds sent with 429 */
  retryAfterSeconds: number;
  /** share of requests answered 500 unknownException */
  errorRate: number;
  /** share of requests answered 503 inMaintenance (random, short blips) */
  maintenanceRate: number;
  /** share of requests answered 503 with the overload body, which has no `reason` */
  overloadRate: number;
  /**
   * Maintenance window: every request answers 503 inMaintenance while on. `true` until turned off;
   * a number: until that virtual time (epoch ms); false: off.
   */
  maintenance: boolean | number;
  /** share of successful answers whose body is malformed */
  malformedRate: number;
  /** truncated: cut-off JSON; wrongShape: valid JSON of the wrong shape; mixed: either */
  malformedKind: 'truncated' | 'wrongShape' | 'mixed';
  /** share of requests whose connection is dropped without an answer */
  resetRate: number;
  /**
   * Upstream hangs: every request is held open without an answer until this is turned off (then
   * answered as if it had just arrived) or its client gives up. Tests release it when they choose,
   * so "answered before upstream did" needs no clock.
   */
  hang: boolean;
  /** share of successful answers showing historical API quirks (quirks.ts) */
  quirkRate: number;
  /** faults only hit request paths containing this string (e.g. "/players/"); empty = all */
  match: string;
}

export const defaultFaults: FaultConfig = Object.freeze({
  latency: Object.freeze({ minMs: 0, maxMs: 0, spikeRate: 0, spikeMs: 0 }),
  throttleRate: 0,
  retryAfterSeconds: 1,
  errorRate: 0,
  maintenanceRate: 0,
  overloadRate: 0,
  maintenance: false,
  malformedRate: 0,
  malformedKind: 'truncated',
  resetRate: 0,
  hang: false,
  quirkRate: 0,
  match: '',
}) as FaultConfig;

const rate = z.number().min(0).max(1);
/** Validates a partial fault update (control endpoint bodies, `faults.set`). */
export const FaultUpdate = z.strictObject({
  latency: z
    .strictObject({
      minMs: z.number().int().min(0).max(60_000).optional(),
      maxMs: z.number().int().min(0).max(60_000).optional(),
      spikeRate: rate.optional(),
      spikeMs: z.number().int().min(0).max(120_000).optional(),
    })
    .optional(),
  throttleRate: rate.optional(),
  retryAfterSeconds: z.number().int().min(0).max(3600).optional(),
  errorRate: rate.optional(),
  maintenanceRate: rate.optional(),
  overloadRate: rate.optional(),
  maintenance: z.union([z.boolean(), z.number().int()]).optional(),
  malformedRate: rate.optional(),
  malformedKind: z.enum(['truncated', 'wrongShape', 'mixed']).optional(),
  resetRate: rate.optional(),
  hang: z.boolean().optional(),
  quirkRate: rate.optional(),
  match: z.string().max(200).optional(),
});
export type FaultUpdate = z.infer<typeof FaultUpdate>;

/** What the server should do with one request. */
export type FaultDecision =
  | { kind: 'reset' }
  | { kind: 'hang' }
  | { kind: 'status'; status: number; body: Record<string, unknown>; headers?: Record<string, string> }
  | { kind: 'pass'; malformed: 'truncated' | 'wrongShape' | null; quirks?: (k: number) => number };

export interface FaultController {
  set(update: FaultUpdate | Partial<FaultConfig>): FaultConfig;
  reset(): FaultConfig;
  current(): FaultConfig;
  /** requests of the official paths the world has received so far (faulted or not) */
  readonly requests: number;
  /** requests held by `hang` right now, without an answer yet */
  readonly held: number;
}

export class Faults implements FaultController {
  private config: FaultConfig;
  private n = 0;
  private readonly key: number;
  private readonly holds = new Set<() => void>();

  constructor(
    seed: string,
    private readonly now: () => number,
    initial: Partial<FaultConfig> = {},
  ) {
    this.key = hashString(`faults:${seed}`);
    this.config = merge(defaultFaults, initial);
  }

  set(update: FaultUpdate | Partial<FaultConfig>): FaultConfig {
    const parsed = FaultUpdate.parse(update);
    this.config = merge(this.config, parsed as Partial<FaultConfig>);
    if (!this.config.hang) this.release();
    return this.current();
  }

  reset(): FaultConfig {
    this.config = merge(defaultFaults, {});
    this.release();
    return this.current();
  }

  get requests(): number {
    return this.n;
  }

  get held(): number {
    return this.holds.size;
  }

  /** Resolves when `hang` is turned off (at once when it is off), or when `gaveUp` fires first. */
  hold(gaveUp: AbortSignal): Promise<void> {
    if (!this.config.hang || gaveUp.aborted) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const done = () => {
        this.holds.delete(done);
        gaveUp.removeEventListener('abort', done);
        resolve();
      };
      this.holds.add(done);
      gaveUp.addEventListener('abort', done, { once: true });
    });
  }

  private release(): void {
    for (const done of [...this.holds]) done();
  }

  current(): FaultConfig {
    const c = this.config;
    // A window that ended in virtual time reads as off.
    const maintenance = typeof c.maintenance === 'number' && c.maintenance <= this.now() ? false : c.maintenance;
    return { ...c, latency: { ...c.latency }, maintenance };
  }

  /** Milliseconds to wait before answering this request. */
  latency(draw: number, spike: number): number {
    const l = this.config.latency;
    if (l.spikeRate > 0 && spike < l.spikeRate) return l.spikeMs;
    return Math.round(l.minMs + draw * Math.max(0, l.maxMs - l.minMs));
  }

  /** Decides the fate of one request (consumes one step of the fault sequence). */
  decide(path: string): { delayMs: number; decision: FaultDecision } {
    const step = this.n++;
    const u = (k: number) => unit(this.key, step, k);
    const c = this.current();
    if (c.match !== '' && !path.includes(c.match)) return { delayMs: 0, decision: { kind: 'pass', malformed: null } };
    const delayMs = this.latency(u(0), u(1));
    if (c.resetRate > 0 && u(2) < c.resetRate) return { delayMs, decision: { kind: 'reset' } };
    if (c.hang) return { delayMs, decision: { kind: 'hang' } };
    if (c.maintenance !== false || (c.maintenanceRate > 0 && u(3) < c.maintenanceRate)) {
      return { delayMs, decision: maintenanceDecision() };
    }
    if (c.overloadRate > 0 && u(4) < c.overloadRate) {
      return { delayMs, decision: { kind: 'status', status: 503, body: { message: 'API at maximum capacity, request throttled.' } } };
    }
    if (c.throttleRate > 0 && u(5) < c.throttleRate) {
      return {
        delayMs,
        decision: {
          kind: 'status',
          status: 429,
          // reference/upstream-api.md §9: the throttle body carries a reason and no message.
          body: { reason: 'requestThrottled' },
          headers: { 'Retry-After': String(c.retryAfterSeconds) },
        },
      };
    }
    if (c.errorRate > 0 && u(6) < c.errorRate) {
      return { delayMs, decision: { kind: 'status', status: 500, body: { reason: 'unknownException' } } };
    }
    if (c.malformedRate > 0 && u(7) < c.malformedRate) {
      const kind = c.malformedKind === 'mixed' ? (u(8) < 0.5 ? 'truncated' : 'wrongShape') : c.malformedKind;
      return { delayMs, decision: { kind: 'pass', malformed: kind } };
    }
    if (c.quirkRate > 0 && u(9) < c.quirkRate) {
      return { delayMs, decision: { kind: 'pass', malformed: null, quirks: (k) => u(10 + k) } };
    }
    return { delayMs, decision: { kind: 'pass', malformed: null } };
  }
}

export function maintenanceDecision(): FaultDecision {
  return {
    kind: 'status',
    status: 503,
    body: { reason: 'inMaintenance', message: 'API is currently in maintenance, please come back later' },
  };
}

function merge(base: FaultConfig, update: Partial<FaultConfig> | FaultUpdate): FaultConfig {
  const { latency, ...rest } = update as Partial<FaultConfig>;
  const defined = Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== undefined));
  return { ...base, ...defined, latency: { ...base.latency, ...(latency ?? {}) } } as FaultConfig;
}

/** Breaks a JSON body the way a faulty upstream might. */
export function malform(json: string, kind: 'truncated' | 'wrongShape'): string {
  if (kind === 'truncated') return json.slice(0, Math.max(1, Math.floor(json.length / 2)));
  const parsed = JSON.parse(json) as unknown;
  if (Array.isArray(parsed)) return JSON.stringify({ unexpected: parsed.length });
  if (parsed && typeof parsed === 'object' && 'items' in parsed) return JSON.stringify({ items: 42, paging: null });
  return JSON.stringify({ tag: 42, name: null, trophies: 'many' });
}
