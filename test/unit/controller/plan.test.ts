import { afterEach, describe, expect, it, jest } from '@jest/globals';
import fc from 'fast-check';
import type { ClusterTopologyStatus } from '../../../operator/api/types.generated.js';
import { admit, type Admission } from '../../../operator/controller/admission.js';
import { planReconcile, type ReconcileInput } from '../../../operator/controller/plan.js';
import { OPERATOR_STATUS_FIELDS } from '../../../operator/protocol/publish.js';
import { statusSchema } from '../../../operator/api/schema.js';
import type { PollView } from '../../../operator/controller/last-response.js';
import { summarizePod, type PodSummary } from '../../../operator/controller/pod-summary.js';
import { DEFAULT_NAMING_SETTINGS } from '../../../operator/naming/index.js';

/**
 * The reconcile plan as properties over random histories: a topology goes through a sequence of
 * polls (successes with random pods, failures with random codes), refusals and restarts, each
 * step planned from the status the previous steps published.
 */

const T0 = Date.UTC(2026, 11, 2, 12, 0, 0);

const pod = (i: number, withIp: boolean, node: number): PodSummary =>
  summarizePod(
    {
      metadata: { name: `web-${i}`, namespace: 'app', uid: `uid-${i}`, resourceVersion: String(i) },
      spec: { nodeName: `node-${node}` },
      status: {
        ...(withIp ? { podIP: `10.0.0.${i + 1}`, phase: 'Running' } : { phase: 'Pending' }),
        conditions: [{ type: 'Ready', status: 'True' }],
      },
    },
    DEFAULT_NAMING_SETTINGS,
  );

const admitted = (onForbidden: 'Retain' | 'Disconnect'): Admission =>
  admit({ selector: 'app=web', onForbidden }, 'app', []);
const crossNamespace: Admission = admit({ selector: 'app=web', namespace: 'other' }, 'app', []);
const invalid: Admission = admit({ selector: 'app=web', pollingInterval: 'often' }, 'app', []);

const reasonOf = (code: number | undefined) =>
  code === undefined
    ? 'TransportError'
    : code === 403
      ? 'Forbidden'
      : code === 401
        ? 'Unauthorized'
        : 'Failed';

/** One thing that happens to a topology between two reconciles. */
type Step =
  | { kind: 'ok'; pods: { ip: boolean; node: number }[] }
  | { kind: 'fail'; code: number | undefined }
  | { kind: 'refused'; why: 'cross' | 'invalid' }
  | { kind: 'unlisted' };

const codes = fc.constantFrom(undefined, 400, 401, 403, 404, 410, 429, 500, 503, 504);
const nonForbiddenFailure = fc.constantFrom(undefined, 400, 404, 410, 429, 500, 503, 504);
const okStep = fc.record({
  kind: fc.constant('ok' as const),
  pods: fc.array(fc.record({ ip: fc.boolean(), node: fc.integer({ min: 0, max: 3 }) }), { maxLength: 6 }),
});
const failStep = fc.record({ kind: fc.constant('fail' as const), code: codes });
const refusedStep = fc.record({
  kind: fc.constant('refused' as const),
  why: fc.constantFrom('cross' as const, 'invalid' as const),
});
const unlistedStep = fc.constant({ kind: 'unlisted' as const });
const anyStep: fc.Arbitrary<Step> = fc.oneof(okStep, failStep, refusedStep, unlistedStep);

function inputFor(
  step: Step,
  previous: ClusterTopologyStatus | undefined,
  at: number,
  onForbidden: 'Retain' | 'Disconnect',
): ReconcileInput {
  const now = new Date(T0 + at * 1000);
  let poll: PollView | undefined;
  let pods: PodSummary[] = [];
  let admission = admitted(onForbidden);
  if (step.kind === 'ok') {
    poll = { ok: true, at: now };
    pods = step.pods.map((p, i) => pod(i, p.ip, p.node));
  } else if (step.kind === 'fail')
    poll = { ok: false, at: now, failure: { code: step.code, reason: reasonOf(step.code), message: 'no' } };
  else if (step.kind === 'refused') admission = step.why === 'cross' ? crossNamespace : invalid;
  return {
    generation: 1,
    namespace: 'app',
    previous,
    admission,
    poll,
    pods,
    nodeLabels: (node) => ({ 'topology.kubernetes.io/zone': `zone-${node.slice(-1)}` }),
    now,
  };
}

/** The status published after each step (a plan without a write leaves the previous one). */
function run(steps: readonly Step[], onForbidden: 'Retain' | 'Disconnect', start?: ClusterTopologyStatus) {
  let published = start;
  steps.forEach((step, i) => {
    const plan = planReconcile(inputFor(step, published, (i + 1) * 10, onForbidden));
    published = plan.write?.status ?? published;
  });
  return published;
}

/**
 * What a reader takes the published peer list for: today a list is current only with a
 * lastPollTime (without one, agents keep the connections they have).
 */
const readsAsList = (s: ClusterTopologyStatus | undefined) => s?.lastPollTime !== undefined;

describe('planReconcile: properties', () => {
  afterEach(() => {
    jest.useRealTimers();
  });

  it('a failure other than 401/403 always keeps the previous peers', () => {
    fc.assert(
      fc.property(
        fc.array(anyStep, { maxLength: 8 }),
        nonForbiddenFailure,
        fc.constantFrom('Retain' as const, 'Disconnect' as const),
        (history, code, onForbidden) => {
          const before = run(history, onForbidden);
          const after = run([{ kind: 'fail', code }], onForbidden, before);
          expect(after?.peers ?? []).toEqual(before?.peers ?? []);
          expect(after?.excluded ?? []).toEqual(before?.excluded ?? []);
        },
      ),
    );
  });

  it('401/403 keeps the previous peers with Retain and empties them only with Disconnect', () => {
    fc.assert(
      fc.property(fc.array(anyStep, { maxLength: 8 }), fc.constantFrom(401, 403), (history, code) => {
        const before = run(history, 'Retain');
        expect(run([{ kind: 'fail', code }], 'Retain', before)?.peers ?? []).toEqual(before?.peers ?? []);
        const disconnected = run([{ kind: 'fail', code }], 'Disconnect', before);
        expect(disconnected?.peers).toEqual([]);
        expect(readsAsList(disconnected)).toBe(true);
      }),
    );
  });

  it('an unknown list is never published as an empty one', () => {
    // Histories in which no list ever succeeded (a 401/403 with Disconnect is an answer, not unknown).
    const unknownSteps: fc.Arbitrary<Step> = fc.oneof(
      fc.record({ kind: fc.constant('fail' as const), code: nonForbiddenFailure }),
      refusedStep,
      unlistedStep,
    );
    fc.assert(
      fc.property(
        fc.array(unknownSteps, { minLength: 1, maxLength: 8 }),
        fc.constantFrom('Retain' as const, 'Disconnect' as const),
        (history, onForbidden) => {
          let published: ClusterTopologyStatus | undefined;
          history.forEach((step, i) => {
            published =
              planReconcile(inputFor(step, published, (i + 1) * 10, onForbidden)).write?.status ?? published;
            expect(readsAsList(published)).toBe(false);
          });
        },
      ),
    );
  });

  it('a refusal or a failure after a success is never published as a current list (except Disconnect)', () => {
    fc.assert(
      fc.property(
        okStep,
        fc.array(anyStep, { maxLength: 4 }),
        fc.oneof(refusedStep, fc.record({ kind: fc.constant('fail' as const), code: nonForbiddenFailure })),
        (first, history, last) => {
          const before = run([first, ...history], 'Retain');
          const after = run([last], 'Retain', before);
          if (last.kind === 'refused') expect(readsAsList(after)).toBe(false);
          // A failure keeps the list current only if it was (the peers are the last known ones).
          else expect(readsAsList(after)).toBe(readsAsList(before));
        },
      ),
    );
  });

  it('is a function of its inputs alone: the same inputs, whatever the clock and random numbers, give the same plan', () => {
    fc.assert(
      fc.property(
        fc.array(anyStep, { maxLength: 6 }),
        anyStep,
        fc.constantFrom('Retain' as const, 'Disconnect' as const),
        fc.integer({ min: 0, max: 2 ** 40 }),
        (history, step, onForbidden, clock) => {
          const previous = run(history, onForbidden);
          const input = inputFor(step, previous, 1000, onForbidden);
          const snapshot = structuredClone({ ...input, nodeLabels: undefined });
          const first = planReconcile(input);
          jest.useFakeTimers({ now: clock });
          const random = jest.spyOn(Math, 'random').mockReturnValue(clock % 2 ? 0.9 : 0.1);
          try {
            const copy = {
              ...structuredClone({ ...input, nodeLabels: undefined }),
              nodeLabels: input.nodeLabels,
            };
            expect(planReconcile(copy)).toEqual(first);
            expect(planReconcile(input)).toEqual(first);
          } finally {
            random.mockRestore();
            jest.useRealTimers();
          }
          // The inputs are left as they were.
          expect(structuredClone({ ...input, nodeLabels: undefined })).toEqual(snapshot);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('a run of failures is published with its first answer and its end, even if no status could be written while it lasted', () => {
    // Polls only (ok or failed), each status write succeeding or not (the API server down): after
    // a success that is written, lastFailure names the first failure of the latest run of
    // failures, its time and the success's time — read off the history, not off the code.
    const pollStep = fc.oneof(okStep, failStep);
    fc.assert(
      fc.property(
        fc.array(fc.tuple(pollStep, fc.boolean()), { minLength: 1, maxLength: 10 }),
        okStep,
        fc.constantFrom('Retain' as const, 'Disconnect' as const),
        (history, last, onForbidden) => {
          let written: ClusterTopologyStatus | undefined;
          let unwritten: ClusterTopologyStatus | undefined;
          const steps: Step[] = [...history.map(([step]) => step), last];
          steps.forEach((step, i) => {
            const input = { ...inputFor(step, written, (i + 1) * 10, onForbidden), unwritten };
            const planned = planReconcile(input).write?.status;
            const writeSucceeds = i === steps.length - 1 || history[i]![1];
            if (planned && !writeSucceeds) unwritten = planned;
            else {
              written = planned ?? written;
              unwritten = undefined;
            }
          });
          const at = (i: number) => new Date(T0 + (i + 1) * 10_000).toISOString();
          // The latest run of failures: the last failed step and the failed steps right before it.
          const end = steps.findLastIndex((x) => x.kind === 'fail');
          if (end < 0) return void expect(written?.lastFailure).toBeUndefined();
          let first = end;
          while (first > 0 && steps[first - 1]!.kind === 'fail') first--;
          const code = (steps[first] as { code: number | undefined }).code;
          expect(written?.lastFailure).toEqual({
            code: code === undefined ? 'TransportError' : String(code),
            reason: reasonOf(code),
            message: 'no',
            since: at(first),
            until: at(end + 1),
          });
        },
      ),
    );
  });

  it('writes nothing when the world has not changed since the last write', () => {
    fc.assert(
      fc.property(fc.array(anyStep, { minLength: 1, maxLength: 6 }), (history) => {
        const previous = run(history, 'Retain');
        const last = history[history.length - 1]!;
        // The same step again, at the same instant, publishes what is already published.
        const again = planReconcile(inputFor(last, previous, history.length * 10, 'Retain'));
        expect(again.write).toBeUndefined();
      }),
    );
  });
});

describe('planReconcile: what a write carries', () => {
  it('the patch, the gauges and the events of the change', () => {
    const first = planReconcile(
      inputFor({ kind: 'ok', pods: [{ ip: true, node: 0 }] }, undefined, 0, 'Retain'),
    );
    expect(first.write?.gauges).toEqual({ peers: 1, excluded: 0 });
    expect(first.write?.events.map((e) => e.reason)).toContain('PeersChanged');
    const second = planReconcile(
      inputFor(
        {
          kind: 'ok',
          pods: [
            { ip: true, node: 0 },
            { ip: false, node: 1 },
          ],
        },
        first.write!.status,
        10,
        'Retain',
      ),
    );
    expect(second.write?.gauges).toEqual({ peers: 1, excluded: 1 });
    expect(second.write?.patch).toMatchObject({ excludedCount: 1 });
    expect(second.write?.patch).not.toHaveProperty('peers');
    expect(second.write?.events.map((e) => e.reason)).not.toContain('PeersChanged');
    const refused = planReconcile({
      ...inputFor({ kind: 'refused', why: 'cross' }, second.write!.status, 20, 'Retain'),
    });
    expect(refused.write?.events.map((e) => e.reason)).toEqual(
      expect.arrayContaining(['PeersChanged', 'CrossNamespaceDenied']),
    );
    expect(refused.write?.gauges.peers).toBe(0);
  });
});

describe('planReconcile: the status the object holds, not only the one last written', () => {
  const step: Step = {
    kind: 'ok',
    pods: [
      { ip: true, node: 0 },
      { ip: true, node: 1 },
    ],
  };
  const written = planReconcile(inputFor(step, undefined, 0, 'Retain')).write!.status;

  it('an owned field someone else changed is written back, from what the object holds', () => {
    for (const observed of [
      { ...written, peers: [], peerCount: 0 },
      { ...written, peers: [{ ...written.peers![0]!, nodeName: 'intruder@10.9.9.9' }] },
      { ...written, lastResponse: undefined },
      undefined,
    ]) {
      const plan = planReconcile({
        ...inputFor(step, written, 10, 'Retain'),
        observed: { status: observed },
      });
      // The same content (lastPollTime, the time of this poll, moves with the object's content).
      const restored = { ...written, lastPollTime: new Date(T0 + 10_000).toISOString() };
      expect(plan.write?.status).toEqual(restored);
      // The patch turns what the object holds into the operator's status.
      expect(mergeApply(observed ?? {}, plan.write!.patch)).toEqual(restored);
      // Putting it back is no change of the operator's: no Event.
      expect(plan.write!.events).toEqual([]);
    }
  });

  it('a mesh someone else wrote is put back to the one the operator wrote (here none)', () => {
    const mesh = { members: 9, reporting: 9, fullyConnected: 9, largestGroup: 9, summary: '9/9 made up' };
    const observed: ClusterTopologyStatus = { ...written, mesh };
    const plan = planReconcile({ ...inputFor(step, written, 10, 'Retain'), observed: { status: observed } });
    expect(plan.write!.patch).toMatchObject({ mesh: null });
    expect(mergeApply(observed, plan.write!.patch)).toEqual({
      ...written,
      lastPollTime: new Date(T0 + 10_000).toISOString(),
    });
  });

  it('nothing to write when the object holds it (only lastPollTime differs, or the keys’ order)', () => {
    const reordered = Object.fromEntries(Object.entries(written).reverse()) as ClusterTopologyStatus;
    for (const observed of [written, reordered, { ...written, lastPollTime: '2020-01-01T00:00:00Z' }])
      expect(
        planReconcile({ ...inputFor(step, written, 10, 'Retain'), observed: { status: observed } }).write,
      ).toBeUndefined();
  });

  it('a field the operator does not own is neither compared nor patched', () => {
    const observed = { ...written, foreign: { by: 'someone else' } } as ClusterTopologyStatus;
    expect(
      planReconcile({ ...inputFor(step, written, 10, 'Retain'), observed: { status: observed } }).write,
    ).toBeUndefined();
    const emptied = { ...observed, peers: [] };
    const plan = planReconcile({ ...inputFor(step, written, 10, 'Retain'), observed: { status: emptied } });
    expect(plan.write!.patch).not.toHaveProperty('foreign');
    expect(mergeApply(emptied, plan.write!.patch)).toEqual({
      ...written,
      lastPollTime: new Date(T0 + 10_000).toISOString(),
      foreign: { by: 'someone else' },
    });
  });

  it('the owned fields are exactly the status schema’s (a new status field must be named owned or not)', () => {
    expect([...OPERATOR_STATUS_FIELDS].sort()).toEqual(Object.keys(statusSchema.properties!).sort());
  });
});

/** RFC 7386: `patch` applied to `target` (what the API server does with a merge patch). */
function mergeApply(target: unknown, patch: unknown): unknown {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) return patch;
  const out: Record<string, unknown> =
    typeof target === 'object' && target !== null && !Array.isArray(target) ? { ...(target as object) } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergeApply(out[k], v);
  }
  for (const k of Object.keys(out)) if (out[k] === undefined) delete out[k];
  return out;
}
