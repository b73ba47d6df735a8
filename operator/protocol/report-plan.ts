import { deepEqual } from '../api/json.js';
import type { MemberView } from './member-report.js';

/**
 * When a member writes its report (docs/status-protocol.md §8, "The budget"): only when its view
 * changed, at most once per 10 s (changes in between are coalesced: the view of the moment of the
 * write is written), plus a renewal of an unchanged view every 5 minutes so that a silent member
 * is seen as stale. A refused write (401/403/404) is retried at the renewal pace, any other failure
 * after 30 s. Pure: the caller keeps the history, asks, and sets a timer for `at`.
 */

export const REPORT_MIN_INTERVAL_MS = 10_000;
export const REPORT_RENEW_MS = 300_000;
export const REPORT_RETRY_MS = 30_000;
/**
 * The aggregate's staleness limit: a report older than the renewal period plus 60 s (a renewal
 * waiting for its slot, the write itself, clocks apart) is stale.
 */
export const REPORT_STALE_AFTER_MS = REPORT_RENEW_MS + 60_000;

export interface ReportBudget {
  minIntervalMs: number;
  renewMs: number;
  retryMs: number;
}
export const REPORT_BUDGET: ReportBudget = {
  minIntervalMs: REPORT_MIN_INTERVAL_MS,
  renewMs: REPORT_RENEW_MS,
  retryMs: REPORT_RETRY_MS,
};

export type WriteOutcome = 'ok' | 'forbidden' | 'failed';

/** What the writer remembers (ms since the epoch). Empty after a start: the first plan writes. */
export interface ReportHistory {
  /** The view of the last report the API server accepted, and when it was sent. */
  written?: { view: MemberView; at: number };
  /** The last write attempted, accepted or not. */
  attempt?: { at: number; outcome: WriteOutcome };
}

export type ReportPlan =
  /** Write the current view now. */
  | { action: 'write' }
  /** A write is due, but not allowed before `at`: ask again then, with the view of that moment. */
  | { action: 'wait'; at: number }
  /** Nothing to write; the renewal falls due at `at` (ask again on the next change, or then). */
  | { action: 'idle'; at: number };

/** The part of a view whose change is worth a write: not the resourceVersion (it moves on every write of the topology, the operator's mesh writes included). */
export function viewContent(v: MemberView): unknown {
  const { topologyResourceVersion: _rv, ...rest } = v;
  return rest;
}

export function sameView(a: MemberView, b: MemberView): boolean {
  return deepEqual(viewContent(a), viewContent(b));
}

export function planReport(
  history: ReportHistory,
  view: MemberView,
  now: number,
  budget: ReportBudget = REPORT_BUDGET,
): ReportPlan {
  const { written, attempt } = history;
  const renewAt = written ? written.at + budget.renewMs : now;
  const due = !written || !sameView(written.view, view) || now >= renewAt;
  if (!due) return { action: 'idle', at: renewAt };
  const gap =
    attempt === undefined
      ? 0
      : attempt.outcome === 'ok'
        ? budget.minIntervalMs
        : attempt.outcome === 'forbidden'
          ? budget.renewMs
          : budget.retryMs;
  const earliest = attempt === undefined ? now : attempt.at + gap;
  return now >= earliest ? { action: 'write' } : { action: 'wait', at: earliest };
}

/**
 * The history after an attempt to write `view` at `at`. A refusal (401/403/404) changed nothing on the
 * server; any other failure (a timeout, a 5xx) may have, so what the server holds is forgotten and
 * the next plan writes again.
 */
export function recordAttempt(
  history: ReportHistory,
  view: MemberView,
  at: number,
  outcome: WriteOutcome,
): ReportHistory {
  const written = outcome === 'ok' ? { view, at } : outcome === 'forbidden' ? history.written : undefined;
  return { ...(written ? { written } : {}), attempt: { at, outcome } };
}
