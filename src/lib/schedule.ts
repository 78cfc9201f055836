/**
 * Runs `fn` once after `ms` unless the returned function cancels it first. Deadlines that decide
 * what happens (the router's deferral and autocomplete budget, an upstream request's timeout) go
 * through this, so a test can fire them itself instead of racing the wall clock: on a busy machine
 * even "fast" work can outlast a short real timer (test/support/manual-schedule.ts).
 */
export type Schedule = (ms: number, fn: () => void) => () => void;

export const wallClockSchedule: Schedule = (ms, fn) => {
  const timer = setTimeout(fn, ms);
  return () => clearTimeout(timer);
};
