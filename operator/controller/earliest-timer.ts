/**
 * A timer that runs its task at the earliest of the times it is asked for: an ask for later than
 * what is already due waits for that. The probes' schedule (namespace-pods.ts, cluster-probe.ts).
 */
export class EarliestTimer {
  private timer: NodeJS.Timeout | undefined;
  private due = Infinity;

  constructor(private readonly task: () => void) {}

  /** Whether nothing is due. */
  get idle(): boolean {
    return this.due === Infinity;
  }

  /** The task runs within `delayMs` at the latest. */
  within(delayMs: number): void {
    if (Date.now() + delayMs >= this.due) return;
    clearTimeout(this.timer);
    this.due = Date.now() + delayMs;
    this.timer = setTimeout(() => {
      this.due = Infinity;
      this.task();
    }, delayMs);
    this.timer.unref?.();
  }

  stop(): void {
    clearTimeout(this.timer);
    this.due = Infinity;
  }
}
