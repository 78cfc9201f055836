/**
 * The simulated world's clock. Running by default (real time, optionally shifted); `set` freezes it
 * at an instant so tests and backfills see stable answers, `advance` moves it forward, `resume` lets
 * it run again from where it stands.
 */
export interface VirtualClock {
  /** current virtual time, epoch milliseconds */
  now(): number;
  /** jump to an instant and stay there until advanced or resumed */
  set(ms: number): void;
  /** move forward (or back, with a negative amount) */
  advance(ms: number): void;
}

export class SimClock implements VirtualClock {
  private frozenAt: number | null;
  private offset = 0;

  /** `startMs` freezes the clock at that instant; without it the clock follows real time. */
  constructor(startMs?: number, private readonly realNow: () => number = Date.now) {
    this.frozenAt = startMs ?? null;
  }

  now(): number {
    return this.frozenAt ?? this.realNow() + this.offset;
  }

  set(ms: number): void {
    if (!Number.isFinite(ms)) throw new RangeError('clock.set needs a finite epoch-milliseconds value');
    this.frozenAt = ms;
  }

  advance(ms: number): void {
    if (!Number.isFinite(ms)) throw new RangeError('clock.advance needs a finite number of milliseconds');
    if (this.frozenAt !== null) this.frozenAt += ms;
    else this.offset += ms;
  }

  /** Let time run again from the current virtual instant. */
  resume(): void {
    if (this.frozenAt === null) return;
    this.offset = this.frozenAt - this.realNow();
    this.frozenAt = null;
  }

  get frozen(): boolean {
    return this.frozenAt !== null;
  }
}
