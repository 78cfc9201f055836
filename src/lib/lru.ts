/**
 * A bounded map that forgets the least recently used entry (the sim's caches, the core's memory
 * layer). Bounded by a number of entries, and optionally by a total weight (bytes) that each value
 * declares through `weigh`: caches of values whose sizes differ a hundredfold (a 404 and a 60 KB
 * player) are bounded by what they hold, not by how many.
 *
 * Recency is kept cheaply: a read moves its entry to the back (a delete and an insert into the map)
 * only once it is in the older half by count or by weight, where eviction may soon reach it; an
 * entry read often stays put. The fast path's URL map and the core's memory layer are read once
 * per cached answer (tens of thousands a second).
 */
export interface LruWeight<V> {
  /** the most the entries may weigh together */
  max: number;
  /** weight of one value (bytes); computed once, when the value is set */
  weigh(value: V): number;
}

interface Slot<V> {
  value: V;
  /** `placed` and `placedWeight` when the entry was last put at the back */
  at: number;
  atWeight: number;
}

export class Lru<K, V> {
  private readonly map = new Map<K, Slot<V>>();
  private readonly weights?: Map<K, number>;
  private total = 0;
  /** entries put at the back so far (set or moved): `placed - slot.at` bounds how many are behind one */
  private placed = 0;
  /** their weights added up: `placedWeight - slot.atWeight` bounds the weight behind one */
  private placedWeight = 0;

  constructor(
    private readonly max: number,
    private readonly weight?: LruWeight<V>,
  ) {
    if (weight) this.weights = new Map();
  }

  get(key: K): V | undefined {
    const s = this.map.get(key);
    if (s === undefined) return undefined;
    // at most `placed - at` entries (weighing at most `placedWeight - atWeight`) are behind it
    if (this.placed - s.at > this.max / 2 || (this.weight && this.placedWeight - s.atWeight > this.weight.max / 2)) {
      this.map.delete(key);
      this.map.set(key, s);
      s.at = ++this.placed;
      if (this.weights) s.atWeight = this.placedWeight += this.weights.get(key)!;
    }
    return s.value;
  }

  set(key: K, value: V): void {
    this.delete(key);
    let w = 0;
    if (this.weight) {
      w = this.weight.weigh(value);
      // a value heavier than the whole cache is not kept (it would evict everything, then itself)
      if (w > this.weight.max) return;
      this.weights!.set(key, w);
      this.total += w;
    }
    this.map.set(key, { value, at: ++this.placed, atWeight: (this.placedWeight += w) });
    while (this.map.size > this.max || (this.weight && this.total > this.weight.max)) {
      this.delete(this.map.keys().next().value as K);
    }
  }

  getOr(key: K, make: () => V): V {
    const v = this.get(key);
    if (v !== undefined) return v;
    const made = make();
    this.set(key, made);
    return made;
  }

  delete(key: K): boolean {
    if (this.weights) {
      const w = this.weights.get(key);
      if (w !== undefined) {
        this.total -= w;
        this.weights.delete(key);
      }
    }
    return this.map.delete(key);
  }

  clear(): void {
    this.map.clear();
    this.weights?.clear();
    this.total = 0;
  }

  get size(): number {
    return this.map.size;
  }

  /** total weight of the entries (0 without a weight bound) */
  get weightTotal(): number {
    return this.total;
  }
}
