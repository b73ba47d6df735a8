import type { ClusterTopologyStatus, LastFailure, LastResponse } from '../api/types.generated.js';
import type { Failure } from '../kube/reflector-machine.js';

/** The last list of a topology's pods: when, and how it went. */
export type PollView = { ok: true; at: Date } | { ok: false; at: Date; failure: Failure };

/** The outcome fields of a status; `before` is the status they follow (written or not). */
type Outcome = Pick<ClusterTopologyStatus, 'lastResponse' | 'lastFailure'>;

/** The poll's answer as `lastResponse`: `since` moves only when the code changes. */
export function lastResponseOf(before: Outcome | undefined, poll: PollView): LastResponse {
  const response = responseOf(poll);
  return {
    ...response,
    since: before?.lastResponse?.code === response.code ? before.lastResponse.since : poll.at.toISOString(),
  };
}

function responseOf(poll: PollView): Omit<LastResponse, 'since'> {
  if (poll.ok) return { code: '200', reason: 'OK' };
  const f = poll.failure;
  return f.code === undefined
    ? { code: 'TransportError', reason: 'TransportError', message: f.message }
    : { code: String(f.code), reason: f.reason, message: f.message };
}

/**
 * The latest run of failures: opened by the first failed list (its answer, its time), kept while
 * the lists fail, closed (`until`) by the first success, kept after that until the next failure.
 */
export function nextLastFailure(before: Outcome | undefined, poll: PollView): LastFailure | undefined {
  const open = before?.lastFailure && before.lastFailure.until === undefined ? before.lastFailure : undefined;
  if (poll.ok) return open ? { ...open, until: poll.at.toISOString() } : before?.lastFailure;
  if (open) return open;
  // A status written before lastFailure existed may already be failing: the run began then.
  const failing =
    before?.lastResponse && before.lastResponse.code !== '200' ? before.lastResponse : undefined;
  return failing ? { ...failing } : { ...responseOf(poll), since: poll.at.toISOString() };
}
