/**
 * Linux thread ids, for the render threads' priorities (pool.ts, worker-main.ts). On Linux a thread
 * is a task with an id of its own, and /proc/thread-self links to /proc/<pid>/task/<tid> of the
 * thread that reads it — also when a readlink queued on libuv's pool reads it there.
 */
import { readlinkSync } from 'node:fs';

/** The thread id a /proc/thread-self link names, or undefined. */
export function tidOfLink(link: string): number | undefined {
  const tid = Number(link.split('/').pop());
  return Number.isInteger(tid) && tid > 0 ? tid : undefined;
}

/** The calling thread's id, or undefined where there is no /proc/thread-self (not Linux). */
export function currentTid(): number | undefined {
  try {
    return tidOfLink(readlinkSync('/proc/thread-self'));
  } catch {
    return undefined;
  }
}
