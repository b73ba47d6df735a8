import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { memberView, type MemberView } from '../../../operator/protocol/member-report.js';
import {
  REPORT_MIN_INTERVAL_MS,
  REPORT_RENEW_MS,
  REPORT_RETRY_MS,
  planReport,
  recordAttempt,
  type ReportHistory,
  type WriteOutcome,
} from '../../../operator/protocol/report-plan.js';

/**
 * The writer's budget (docs/status-protocol.md §8) as properties of a simulated writer that does
 * what the plan says: it asks on every change of its view and when the time the plan named comes.
 * The oracles are the budget's own words, checked on the writes the simulation made.
 */

const peers = ['a@h', 'b@h', 'c@h'].map((nodeName) => ({ nodeName, pod: nodeName.slice(0, 1) }));
/** A handful of distinct views (connected to 0, 1 or 2 of its two peers), and one that differs only in resourceVersion. */
const views: MemberView[] = [[], ['b@h'], ['b@h', 'c@h']].map((connected) =>
  memberView({ node: 'a@h', pod: 'a', peers, connected, topologyResourceVersion: '1' }),
);
const sameButRv = (v: MemberView): MemberView => ({ ...v, topologyResourceVersion: '99' });

interface Write {
  at: number;
  view: MemberView;
  outcome: WriteOutcome;
}

/**
 * Runs a writer over `changes` (time of change, index of the new view) until `end`, with the
 * outcomes of successive attempts taken from `outcomes` (then ok). Returns every attempt.
 */
function simulate(
  changes: { at: number; view: number }[],
  end: number,
  outcomes: WriteOutcome[] = [],
): { attempts: Write[]; finalView: MemberView } {
  let history: ReportHistory = {};
  let view = views[0]!;
  let timer: number | undefined = 0; // the writer starts at t = 0 with views[0]
  const attempts: Write[] = [];
  const queue = [...changes].sort((a, b) => a.at - b.at);
  for (;;) {
    const nextChange = queue[0]?.at ?? Infinity;
    const now = Math.min(nextChange, timer ?? Infinity);
    if (now > end || now === Infinity) break;
    if (nextChange === now) view = views[queue.shift()!.view]!;
    if (timer === now) timer = undefined;
    const plan = planReport(history, view, now);
    if (plan.action === 'write') {
      const outcome = outcomes[attempts.length] ?? 'ok';
      attempts.push({ at: now, view, outcome });
      history = recordAttempt(history, view, now, outcome);
      const again = planReport(history, view, now);
      expect(again.action).not.toBe('write'); // a write is never followed by another at once
      timer = 'at' in again ? again.at : undefined;
    } else {
      // a plan that asks again at once would never let time move on
      expect(plan.at).toBeGreaterThan(now);
      timer = timer === undefined || plan.at < timer ? plan.at : timer;
    }
  }
  return { attempts, finalView: view };
}

const changesArb = fc.array(
  fc.record({ at: fc.integer({ min: 0, max: 1_200_000 }), view: fc.integer({ min: 0, max: 2 }) }),
  { maxLength: 40 },
);

describe('planReport: when a member writes its report', () => {
  it('writes at once when it has never written, and not again for an unchanged view until the renewal', () => {
    const v = views[1]!;
    expect(planReport({}, v, 1000)).toEqual({ action: 'write' });
    const h = recordAttempt({}, v, 1000, 'ok');
    expect(planReport(h, v, 2000)).toEqual({ action: 'idle', at: 1000 + REPORT_RENEW_MS });
    expect(planReport(h, sameButRv(v), 2000)).toEqual({ action: 'idle', at: 1000 + REPORT_RENEW_MS });
    expect(planReport(h, v, 1000 + REPORT_RENEW_MS)).toEqual({ action: 'write' });
  });

  it('holds a change until 10 s after the last attempt, and retries refusals slowly', () => {
    const h = recordAttempt({}, views[0]!, 1000, 'ok');
    expect(planReport(h, views[1]!, 3000)).toEqual({ action: 'wait', at: 1000 + REPORT_MIN_INTERVAL_MS });
    expect(planReport(h, views[1]!, 11_000)).toEqual({ action: 'write' });
    const refused = recordAttempt(h, views[1]!, 11_000, 'forbidden');
    expect(planReport(refused, views[1]!, 30_000)).toEqual({ action: 'wait', at: 11_000 + REPORT_RENEW_MS });
    // A refusal changed nothing on the server: back to the written view, nothing is due.
    expect(planReport(refused, views[0]!, 30_000).action).toBe('idle');
    const failed = recordAttempt(h, views[1]!, 11_000, 'failed');
    expect(planReport(failed, views[1]!, 12_000)).toEqual({ action: 'wait', at: 11_000 + REPORT_RETRY_MS });
    // Another failure may have reached the server: whatever the view, the next plan writes.
    expect(planReport(failed, views[0]!, 11_000 + REPORT_RETRY_MS)).toEqual({ action: 'write' });
  });

  it('never writes twice within 10 s, and writes only a change, a first report or a renewal', () => {
    fc.assert(
      fc.property(changesArb, (changes) => {
        const { attempts } = simulate(changes, 1_800_000);
        for (let i = 1; i < attempts.length; i++) {
          const [prev, cur] = [attempts[i - 1]!, attempts[i]!];
          expect(cur.at - prev.at).toBeGreaterThanOrEqual(REPORT_MIN_INTERVAL_MS);
          const changed = JSON.stringify(cur.view) !== JSON.stringify(prev.view);
          if (!changed) expect(cur.at - prev.at).toBeGreaterThanOrEqual(REPORT_RENEW_MS);
        }
      }),
    );
  });

  it('coalesces: the last view is written within 10 s of the last change', () => {
    fc.assert(
      fc.property(changesArb, (changes) => {
        const lastChange = Math.max(0, ...changes.map((c) => c.at));
        const { attempts, finalView } = simulate(changes, lastChange + REPORT_MIN_INTERVAL_MS);
        const last = attempts[attempts.length - 1]!;
        expect(last.view).toEqual(finalView);
        expect(last.at).toBeLessThanOrEqual(lastChange + REPORT_MIN_INTERVAL_MS);
      }),
    );
  });

  it('renews an unchanged view every 5 minutes, so a silent member is seen: no gap longer than that', () => {
    fc.assert(
      fc.property(changesArb, fc.integer({ min: 1, max: 5 }), (changes, renewals) => {
        const end = 1_200_000 + renewals * REPORT_RENEW_MS;
        const { attempts } = simulate(changes, end);
        const times = attempts.map((a) => a.at);
        for (let i = 1; i < times.length; i++)
          expect(times[i]! - times[i - 1]!).toBeLessThanOrEqual(REPORT_RENEW_MS);
        expect(end - times[times.length - 1]!).toBeLessThan(REPORT_RENEW_MS);
      }),
    );
  });

  it('idle, it writes at most once per 5 minutes (the 0.2 writes a minute of the goal)', () => {
    const { attempts } = simulate([], 3_600_000);
    expect(attempts.map((a) => a.at)).toEqual(Array.from({ length: 13 }, (_, i) => i * REPORT_RENEW_MS));
  });

  it('after a failure it waits 30 s, after a refusal 5 minutes, whatever the view does', () => {
    fc.assert(
      fc.property(
        changesArb,
        fc.array(fc.constantFrom<WriteOutcome>('ok', 'forbidden', 'failed'), { maxLength: 30 }),
        (changes, outcomes) => {
          const { attempts } = simulate(changes, 1_800_000, outcomes);
          for (let i = 1; i < attempts.length; i++) {
            const gap = attempts[i]!.at - attempts[i - 1]!.at;
            const prev = attempts[i - 1]!.outcome;
            const min =
              prev === 'forbidden'
                ? REPORT_RENEW_MS
                : prev === 'failed'
                  ? REPORT_RETRY_MS
                  : REPORT_MIN_INTERVAL_MS;
            expect(gap).toBeGreaterThanOrEqual(min);
          }
        },
      ),
    );
  });
});
