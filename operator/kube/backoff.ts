import { backoffDelay } from './reflector-machine.js';

/**
 * Retry delays the way client-go's exponential backoff manager gives them: each retry waits
 * about twice as long as the one before (with jitter, so many clients do not retry in step),
 * up to a cap; once no retry has been needed for `resetAfterMs` — a healthy period — the next
 * one starts small again. The clock and the random numbers are the caller's (tests use fakes).
 */

export interface BackoffOptions {
  /** The first delay's ceiling (the delay is jittered within its upper half). */
  baseMs: number;
  capMs: number;
  /** A healthy period this long resets the delay to `baseMs`. */
  resetAfterMs: number;
}

export const DEFAULT_BACKOFF: BackoffOptions = { baseMs: 500, capMs: 30_000, resetAfterMs: 120_000 };

export class Backoff {
  private attempt = 0;
  private lastAt: number | undefined;

  constructor(
    private readonly opts: BackoffOptions = DEFAULT_BACKOFF,
    private readonly now: () => number = Date.now,
    private readonly random: () => number = Math.random,
  ) {}

  /** The delay before the next retry, jittered under `ceilingMs` too when that is lower than the cap. */
  next(ceilingMs = Infinity): number {
    const now = this.now();
    if (this.lastAt === undefined || now - this.lastAt > this.opts.resetAfterMs) this.attempt = 0;
    this.attempt++;
    this.lastAt = now;
    return backoffDelay(this.attempt, this.random(), this.opts.baseMs, Math.min(this.opts.capMs, ceilingMs));
  }
}
