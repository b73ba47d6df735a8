/**
 * A least-recently-used map with a fixed capacity. Pod annotations are written by whoever may
 * edit pods, so anything keyed by them must not grow without bound.
 */
export class BoundedCache<K, V> {
  readonly capacity: number;
  // A Map iterates in insertion order; re-inserting on every hit keeps the least recently
  // used entry first, so eviction is `keys().next()`.
  private readonly entries = new Map<K, V>();
  private hitCount = 0;
  private missCount = 0;

  constructor(capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1)
      throw new RangeError(`capacity must be a positive integer, got ${capacity}`);
    this.capacity = capacity;
  }

  get(key: K): V | undefined {
    if (!this.entries.has(key)) {
      this.missCount++;
      return undefined;
    }
    const value = this.entries.get(key) as V;
    this.hitCount++;
    this.entries.delete(key);
    this.entries.set(key, value);
    return value;
  }

  set(key: K, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    if (this.entries.size > this.capacity) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
  }

  has(key: K): boolean {
    return this.entries.has(key);
  }

  get size(): number {
    return this.entries.size;
  }

  get hits(): number {
    return this.hitCount;
  }

  get misses(): number {
    return this.missCount;
  }

  clear(): void {
    this.entries.clear();
    this.hitCount = 0;
    this.missCount = 0;
  }
}
