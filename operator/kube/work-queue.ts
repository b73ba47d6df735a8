/**
 * A keyed, de-duplicating work queue with per-key backoff and bounded concurrency — the
 * shape of client-go's workqueue that controller-runtime builds on:
 *
 * - a key added while it waits is not added twice; a key added while it is being processed
 *   is marked dirty and processed once more afterwards (never twice at the same time);
 * - `addAfter` delays a key (the earliest delay wins); `addRateLimited` delays it by a
 *   per-key exponential backoff that `forget` resets;
 * - at most `concurrency` keys are processed at once.
 *
 * `handle` maps each reconcile outcome to the queue in one switch, as controller-runtime's
 * `reconcileHandler` does.
 */

export type ReconcileOutcome =
  { kind: 'Done' } | { kind: 'RequeueAfter'; ms: number } | { kind: 'Error'; error: unknown };

export interface QueueOptions {
  concurrency: number;
  reconcile: (key: string) => Promise<ReconcileOutcome>;
  baseDelayMs?: number;
  maxDelayMs?: number;
  onError?: (key: string, error: unknown) => void;
}

export class WorkQueue {
  private readonly queue: string[] = [];
  private readonly queued = new Set<string>();
  private readonly processing = new Set<string>();
  private readonly dirty = new Set<string>();
  private readonly delayed = new Map<string, { at: number; timer: NodeJS.Timeout }>();
  private readonly failures = new Map<string, number>();
  private stopped = false;
  private idleWaiters: (() => void)[] = [];

  constructor(private readonly opts: QueueOptions) {}

  add(key: string): void {
    if (this.stopped) return;
    const d = this.delayed.get(key);
    if (d) {
      clearTimeout(d.timer);
      this.delayed.delete(key);
    }
    if (this.processing.has(key)) {
      this.dirty.add(key);
      return;
    }
    if (this.queued.has(key)) return;
    this.queued.add(key);
    this.queue.push(key);
    this.pump();
  }

  addAfter(key: string, ms: number): void {
    if (this.stopped) return;
    if (ms <= 0) return this.add(key);
    const at = Date.now() + ms;
    const existing = this.delayed.get(key);
    if (existing && existing.at <= at) return;
    if (existing) clearTimeout(existing.timer);
    const timer = setTimeout(() => {
      this.delayed.delete(key);
      this.add(key);
    }, ms);
    timer.unref?.();
    this.delayed.set(key, { at, timer });
  }

  addRateLimited(key: string): void {
    const n = (this.failures.get(key) ?? 0) + 1;
    this.failures.set(key, n);
    const base = this.opts.baseDelayMs ?? 500;
    this.addAfter(key, Math.min(this.opts.maxDelayMs ?? 300_000, base * 2 ** (n - 1)));
  }

  forget(key: string): void {
    this.failures.delete(key);
  }

  failuresOf(key: string): number {
    return this.failures.get(key) ?? 0;
  }

  /** Stops taking keys; reconciles under way finish. */
  shutdown(): void {
    this.stopped = true;
    for (const d of this.delayed.values()) clearTimeout(d.timer);
    this.delayed.clear();
    this.queue.length = 0;
    this.queued.clear();
  }

  /** Resolves when nothing is queued or processing (delayed keys do not count). */
  idle(): Promise<void> {
    if (this.queue.length === 0 && this.processing.size === 0) return Promise.resolve();
    return new Promise((r) => this.idleWaiters.push(r));
  }

  private pump(): void {
    while (!this.stopped && this.processing.size < this.opts.concurrency && this.queue.length > 0) {
      const key = this.queue.shift()!;
      this.queued.delete(key);
      this.processing.add(key);
      void this.run(key);
    }
    if (this.queue.length === 0 && this.processing.size === 0) {
      const w = this.idleWaiters;
      this.idleWaiters = [];
      w.forEach((r) => r());
    }
  }

  private async run(key: string): Promise<void> {
    let outcome: ReconcileOutcome;
    try {
      outcome = await this.opts.reconcile(key);
    } catch (error) {
      outcome = { kind: 'Error', error };
    }
    this.processing.delete(key);
    this.handle(key, outcome);
    if (this.dirty.delete(key)) this.add(key);
    this.pump();
  }

  private handle(key: string, outcome: ReconcileOutcome): void {
    switch (outcome.kind) {
      case 'Done':
        this.forget(key);
        return;
      case 'RequeueAfter':
        this.forget(key);
        this.addAfter(key, outcome.ms);
        return;
      case 'Error':
        this.opts.onError?.(key, outcome.error);
        this.addRateLimited(key);
        return;
    }
  }
}
