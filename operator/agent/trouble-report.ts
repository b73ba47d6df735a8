/**
 * How the agent speaks about its trouble: one log line when the trouble changes (it begins, its
 * cause changes, it ends), then while it lasts a reminder every `remindMs` — not a warning per
 * check (that was about one a second). A change of cause is a change; details such as an age
 * change on every check and are not. The caller sets the metric on every check; this decides only
 * what is logged. Pure: the time is the caller's.
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

/** The trouble being reported: since when, and when its last line was logged (ms). */
export interface TroubleLog {
  cause: string;
  since: number;
  lastLine: number;
}

export const REMIND_MS = 5 * 60_000;

/** The trouble now (undefined: none), given what was reported: what to remember, and the line to log. */
export function reportTrouble(
  before: TroubleLog | undefined,
  trouble: Trouble | undefined,
  now: number,
  remindMs = REMIND_MS,
): { log: TroubleLog | undefined; line?: TroubleLine } {
  if (!trouble) {
    if (!before) return { log: undefined };
    return {
      log: undefined,
      line: {
        level: 'info',
        message: `trouble over after ${Math.round((now - before.since) / 1000)} s: acting on the status again`,
        meta: { cause: before.cause },
      },
    };
  }
  if (!before || before.cause !== trouble.cause)
    return {
      log: { cause: trouble.cause, since: now, lastLine: now },
      line: { level: 'warn', message: trouble.message, meta: { cause: trouble.cause } },
    };
  if (now - before.lastLine < remindMs) return { log: before };
  return {
    log: { ...before, lastLine: now },
    line: {
      level: 'warn',
      message: `still: ${trouble.message}`,
      meta: { cause: trouble.cause, forSeconds: Math.round((now - before.since) / 1000) },
    },
  };
}
