/**
 * Single-flight: while a load for a key is under way, later callers for the same key share its
 * promise instead of starting their own. N users asking for one player at once cost one upstream
 * call.
 */
export class SingleFlight<V> {
  private readonly inflight = new Map<string, Promise<V>>();

  run(key: string, load: () => Promise<V>): Promise<V> {
    const existing = this.inflight.get(key);
    if (existing) return existing;
    const p = (async () => load())().finally(() => {
      if (this.inflight.get(key) === p) this.inflight.delete(key);
    });
    this.inflight.set(key, p);
    return p;
  }

  get(key: string): Promise<V> | undefined {
    return this.inflight.get(key);
  }

  get size(): number {
    return this.inflight.size;
  }

  /** Resolves when every load started so far has settled (clean shutdown). */
  async settle(): Promise<void> {
    while (this.inflight.size > 0) await Promise.allSettled([...this.inflight.values()]);
  }
}
