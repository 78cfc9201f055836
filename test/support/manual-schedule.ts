/**
 * A `Schedule` (src/lib/schedule.ts) whose deadlines fire only when the test says so: "the work
 * finished in time" and "the work was late" become steps of the test, not races with a real timer.
 */
import type { Schedule } from '../../src/lib/schedule.ts';

interface Deadline {
  ms: number;
  fn: () => void;
}

export class ManualSchedule {
  private readonly waiting = new Set<Deadline>();
  private readonly onSchedule: (() => void)[] = [];

  readonly schedule: Schedule = (ms, fn) => {
    const d = { ms, fn };
    this.waiting.add(d);
    for (const f of this.onSchedule.splice(0)) f();
    return () => this.waiting.delete(d);
  };

  /** The delays of the deadlines scheduled and neither fired nor cancelled, oldest first. */
  get pending(): number[] {
    return [...this.waiting].map((d) => d.ms);
  }

  /** Resolves once a deadline is pending (at once when one already is). */
  next(): Promise<void> {
    if (this.waiting.size > 0) return Promise.resolve();
    return new Promise((resolve) => this.onSchedule.push(resolve));
  }

  /** Fires every pending deadline now, as if its time had come; returns how many fired. */
  fire(): number {
    const due = [...this.waiting];
    this.waiting.clear();
    for (const d of due) d.fn();
    return due.length;
  }
}
