/**
 * One change at a time per key: read-modify-write of a keyv record (a server's settings, a
 * member's links) must not interleave, or two admins saving at once would lose a change.
 * In-process only; several bot processes on one store rely on the store's last write.
 */
export class KeyedQueue {
  private readonly tails = new Map<string, Promise<unknown>>();

  /** Runs `fn` after every earlier `run` with the same key has settled. */
  async run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const before = this.tails.get(key) ?? Promise.resolve();
    const run = before.then(fn, fn);
    const tail = run.catch(() => undefined);
    this.tails.set(key, tail);
    try {
      return await run;
    } finally {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }
}
