/**
 * How the agent speaks about its trouble: one log line when the trouble changes (it begins, its
 * cause changes, it ends), then while it lasts a reminder every `remindMs` — not a
 * warning per check (that was about one a second). A change of cause is a change. The caller sets the metric on every
 * call; this decides only what is logged. The clock is injected, so tests run on a fake one.
 */

export interface TroubleLine {
  level: 'warn' | 'info';
  message: string;
  meta: Record<string, unknown>;
}

export interface Trouble {
  cause: string;
  message: string;
}

export class TroubleReport {
  private current: Trouble | undefined;
  private since = 0;
  private lastLine = 0;

  constructor(
    private readonly now: () => number = Date.now,
    private readonly remindMs = 5 * 60_000,
  ) {}

  /** The trouble now (undefined: none). Returns the line to log, if any. */
  update(trouble: Trouble | undefined): TroubleLine | undefined {
    const now = this.now();
    const before = this.current;
    if (!trouble) {
      if (!before) return undefined;
      this.current = undefined;
      return {
        level: 'info',
        message: `trouble over after ${Math.round((now - this.since) / 1000)} s: acting on the status again`,
        meta: { cause: before.cause },
      };
    }
    this.current = trouble;
    if (!before || before.cause !== trouble.cause) {
      // The cause decides, not the message: details such as an age change on every check.
      this.since = now;
      this.lastLine = now;
      return { level: 'warn', message: trouble.message, meta: { cause: trouble.cause } };
    }
    if (now - this.lastLine < this.remindMs) return undefined;
    this.lastLine = now;
    return {
      level: 'warn',
      message: `still: ${trouble.message}`,
      meta: { cause: trouble.cause, forSeconds: Math.round((now - this.since) / 1000) },
    };
  }
}
