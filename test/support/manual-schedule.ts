/**
 * A `Schedule` (src/bot/router.ts) whose deadlines fire only when the test says so: "the work
 * finished in time" and "the work was late" become steps of the test, not races with a real timer.
 */
import type { Schedule } from '../../src/bot/router.ts';

interface Deadline {
  ms: number;
  fn: () => void;
}

export class ManualSchedule {
  private readonly waiting = new Set<Deadline>();

  readonly schedule: Schedule = (ms, fn) => {
    const d = { ms, fn };
    this.waiting.add(d);
    return () => this.waiting.delete(d);
  };

  /** The delays of the deadlines scheduled and neither fired nor cancelled, oldest first. */
  get pending(): number[] {
    return [...this.waiting].map((d) => d.ms);
  }

  /** Fires every pending deadline now, as if its time had come; returns how many fired. */
  fire(): number {
    const due = [...this.waiting];
    this.waiting.clear();
    for (const d of due) d.fn();
    return due.length;
  }
}
