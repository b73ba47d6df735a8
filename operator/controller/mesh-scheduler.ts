import { MESH_MIN_INTERVAL_MS } from '../mesh/publish.js';

/**
 * When a topology is reconciled for its mesh (docs/status-protocol.md §8.6): a change of its
 * reports brings a reconcile 1 s later (a burst of reports is one reconcile) or, when the last
 * mesh write is younger than 15 s, when the next may be made — one timer per topology, however
 * many reports change; a reconcile that holds a change or awaits a report going stale asks for
 * its own time. It also remembers when each topology's mesh was last written.
 */

export const REPORT_DEBOUNCE_MS = 1000;

export class MeshScheduler {
  private readonly lastWrite = new Map<string, number>();
  private readonly timers = new Map<string, { at: number; timer: NodeJS.Timeout }>();

  constructor(
    private readonly enqueue: (key: string) => void,
    private readonly now: () => number = Date.now,
  ) {}

  reportsChanged(key: string): void {
    const last = this.lastWrite.get(key);
    const slot = last === undefined ? 0 : last + MESH_MIN_INTERVAL_MS;
    this.at(key, Math.max(this.now() + REPORT_DEBOUNCE_MS, slot));
  }

  /** Reconcile `key` at `when` (ms), unless a reconcile is already due by then. */
  at(key: string, when: number): void {
    const t = this.timers.get(key);
    if (t && t.at <= when) return;
    if (t) clearTimeout(t.timer);
    const timer = setTimeout(
      () => {
        this.timers.delete(key);
        this.enqueue(key);
      },
      Math.max(0, when - this.now()),
    );
    timer.unref?.();
    this.timers.set(key, { at: when, timer });
  }

  /** The mesh of `key` was written now. */
  written(key: string): void {
    this.lastWrite.set(key, this.now());
  }

  lastWriteAt(key: string): number | undefined {
    return this.lastWrite.get(key);
  }

  forget(key: string): void {
    clearTimeout(this.timers.get(key)?.timer);
    this.timers.delete(key);
    this.lastWrite.delete(key);
  }

  stop(): void {
    for (const t of this.timers.values()) clearTimeout(t.timer);
    this.timers.clear();
  }
}
