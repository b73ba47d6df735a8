/**
 * Bounded concurrency for the benchmarks' API load: a counting semaphore, a bounded map, and
 * the start offsets of simulated pollers.
 */

/** A counting semaphore: at most `limit` holders at once, waiters served in arrival order. */
export class Semaphore {
  private held = 0;
  private readonly waiters: (() => void)[] = [];
  /** The largest number of holders seen at once. */
  peak = 0;

  constructor(readonly limit: number) {
    if (!(Number.isInteger(limit) && limit >= 1)) throw new RangeError(`Semaphore: bad limit ${limit}`);
  }

  get inUse(): number {
    return this.held;
  }

  get waiting(): number {
    return this.waiters.length;
  }

  async acquire(): Promise<void> {
    if (this.held < this.limit) {
      this.held++;
      this.peak = Math.max(this.peak, this.held);
      return;
    }
    await new Promise<void>((r) => this.waiters.push(r));
    // release() handed its slot over: `held` is unchanged.
  }

  release(): void {
    const next = this.waiters.shift();
    if (next) next();
    else if (this.held > 0) this.held--;
    else throw new Error('Semaphore: release without acquire');
  }

  async with<T>(fn: () => Promise<T>): Promise<T> {
    await this.acquire();
    try {
      return await fn();
    } finally {
      this.release();
    }
  }
}

/**
 * `fn` over `items` with at most `limit` calls in flight; results in input order. The first
 * failure rejects the whole map (calls already started are left to finish; no new one starts).
 */
export async function mapLimit<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  if (!(Number.isInteger(limit) && limit >= 1)) throw new RangeError(`mapLimit: bad limit ${limit}`);
  const results = new Array<R>(items.length);
  let next = 0;
  let failed = false;
  const worker = async () => {
    while (!failed && next < items.length) {
      const i = next++;
      try {
        results[i] = await fn(items[i]!, i);
      } catch (e) {
        failed = true;
        throw e;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/**
 * When each of `n` pollers with period `periodMs` makes its first request: spread evenly over
 * one period, as pods started at unrelated times are on average. Poller i starts at i·T/n.
 */
export function pollerOffsets(n: number, periodMs: number): number[] {
  if (!(Number.isInteger(n) && n >= 0)) throw new RangeError(`pollerOffsets: bad count ${n}`);
  return Array.from({ length: n }, (_, i) => (i * periodMs) / n);
}
