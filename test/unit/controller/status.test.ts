import { describe, expect, it } from '@jest/globals';
import { statusMeaning } from '../../../operator/protocol/read.js';
import { validateSpec, type ResolvedSpec } from '../../../operator/api/validate.js';
import type { ClusterTopologyStatus, Peer } from '../../../operator/api/types.generated.js';
import { computeStatus, type StatusInput } from '../../../operator/controller/status.js';
import { summarizePod, type PodSummary } from '../../../operator/controller/pod-summary.js';
import { shouldWrite } from '../../../operator/protocol/publish.js';
import { fullPod as full } from './pod-fixture.js';
import { DEFAULT_NAMING_SETTINGS, resolvePeers } from '../../../operator/naming/index.js';

const t = (s: number) => new Date(Date.UTC(2026, 11, 2, 12, 0, s));
const spec = (extra: Record<string, unknown> = {}): ResolvedSpec => {
  const r = validateSpec({ selector: 'app=web', ...extra });
  if (!r.ok) throw new Error(r.problems.join());
  return r.spec;
};
const pod = (name: string, ip?: string, node?: string): PodSummary =>
  summarizePod(
    {
      metadata: { name, uid: `uid-${name}` },
      spec: node ? { nodeName: node } : {},
      status: {
        ...(ip ? { podIP: ip, phase: 'Running' } : { phase: 'Pending' }),
        conditions: [{ type: 'Ready', status: 'True' }],
      },
    },
    DEFAULT_NAMING_SETTINGS,
  );
const base = (over: Partial<StatusInput> = {}): StatusInput => ({
  generation: 1,
  previous: undefined,
  now: t(0),
  spec: spec(),
  namespace: 'app',
  pods: [pod('web-0', '10.0.0.1'), pod('web-1', '10.0.0.2'), pod('web-2')],
  nodeLabels: () => undefined,
  poll: { ok: true, at: t(0) },
  ...over,
});
const cond = (s: ClusterTopologyStatus, type: string) => s.conditions?.find((c) => c.type === type);
const fail = (code: number | undefined, at = t(10)) => ({
  ok: false as const,
  at,
  failure: {
    code,
    reason: code === 403 ? 'Forbidden' : code ? 'InternalError' : 'TransportError',
    message: 'nope',
  },
});

describe("computeStatus: the seed's error table", () => {
  const ok = computeStatus(base());

  it('200: the resolved list, Ready, not Degraded', () => {
    expect(ok.peers!.map((p) => p.nodeName)).toEqual(['web-0@10.0.0.1', 'web-1@10.0.0.2']);
    expect(ok.excluded).toEqual([expect.objectContaining({ pod: 'web-2', reason: 'NoPodIP' })]);
    expect([ok.peerCount, ok.excludedCount]).toEqual([2, 1]);
    expect(ok.lastResponse).toEqual({ code: '200', reason: 'OK', since: t(0).toISOString() });
    expect(ok.lastPollTime).toBe(t(0).toISOString());
    expect(cond(ok, 'Ready')).toMatchObject({ status: 'True', observedGeneration: 1 });
    expect(cond(ok, 'Degraded')).toMatchObject({ status: 'False' });
  });

  it('403 with Retain: the last known list, the code, Degraded, a fresh lastPollTime', () => {
    const s = computeStatus(base({ previous: ok, poll: fail(403), pods: [] }));
    expect(s.peers).toEqual(ok.peers);
    expect(s.lastResponse).toMatchObject({ code: '403', reason: 'Forbidden', since: t(10).toISOString() });
    expect(cond(s, 'Degraded')).toMatchObject({ status: 'True', reason: 'Forbidden' });
    expect(cond(s, 'Degraded')!.message).toContain('in app');
    expect(cond(s, 'Ready')).toMatchObject({ status: 'False', reason: 'Forbidden' });
    expect(s.lastPollTime).toBe(t(10).toISOString());
  });

  it('401/403 with Disconnect: an empty list, on purpose', () => {
    for (const code of [401, 403]) {
      const s = computeStatus(
        base({ previous: ok, poll: fail(code), spec: spec({ onForbidden: 'Disconnect' }) }),
      );
      expect(s.peers).toEqual([]);
      expect(s.peerCount).toBe(0);
      expect(s.lastPollTime).toBe(t(10).toISOString());
    }
  });

  it.each([
    [500, 'ListFailed'],
    [503, 'ListFailed'],
    [429, 'ListFailed'],
    [400, 'InvalidSelector'],
    [undefined, 'TransportError'],
  ])(
    'status %s: the last known list, Degraded with reason %s — Disconnect only applies to 401/403',
    (code, reason) => {
      const s = computeStatus(
        base({ previous: ok, poll: fail(code), spec: spec({ onForbidden: 'Disconnect' }) }),
      );
      expect(s.peers).toEqual(ok.peers);
      expect(cond(s, 'Degraded')).toMatchObject({ status: 'True', reason });
      expect(s.lastResponse!.code).toBe(code === undefined ? 'TransportError' : String(code));
    },
  );

  it('a failure before any list ever succeeded publishes no lastPollTime: an unknown list is never an empty one', () => {
    const s = computeStatus(base({ previous: undefined, poll: fail(403) }));
    // The status protocol's "unknown" (no peers array), which readers never take for an empty list.
    expect(s.peers).toBeUndefined();
    expect(statusMeaning(s).kind).toBe('unknown');
    expect(s.peerCount).toBe(0);
    expect(s.lastPollTime).toBeUndefined();
    expect(cond(s, 'Degraded')!.message).toMatch(/No list of pods has succeeded yet/);
  });

  it('recovery: 200 again clears Degraded; lastResponse.since moves only when the code changes', () => {
    const failing = computeStatus(base({ previous: ok, poll: fail(503, t(10)) }));
    const stillFailing = computeStatus(base({ previous: failing, poll: fail(503, t(20)), now: t(20) }));
    expect(stillFailing.lastResponse!.since).toBe(t(10).toISOString());
    expect(cond(stillFailing, 'Degraded')!.lastTransitionTime).toBe(
      cond(failing, 'Degraded')!.lastTransitionTime,
    );
    const back = computeStatus(base({ previous: stillFailing, poll: { ok: true, at: t(30) }, now: t(30) }));
    expect(back.lastResponse).toMatchObject({ code: '200', since: t(30).toISOString() });
    expect(cond(back, 'Degraded')).toMatchObject({
      status: 'False',
      lastTransitionTime: t(30).toISOString(),
    });
  });

  it('lastFailure: opened by the first failed answer, kept through the run, closed by the next success, kept after', () => {
    expect(ok.lastFailure).toBeUndefined();
    const failing = computeStatus(base({ previous: ok, poll: fail(undefined, t(10)), now: t(10) }));
    const first = {
      code: 'TransportError',
      reason: 'TransportError',
      message: 'nope',
      since: t(10).toISOString(),
    };
    expect(failing.lastFailure).toEqual(first);
    // Another answer in the same run: the run's first answer stays, lastResponse follows.
    const other = computeStatus(base({ previous: failing, poll: fail(503, t(20)), now: t(20) }));
    expect(other.lastResponse!.code).toBe('503');
    expect(other.lastFailure).toEqual(first);
    const back = computeStatus(base({ previous: other, poll: { ok: true, at: t(30) }, now: t(30) }));
    expect(back.lastFailure).toEqual({ ...first, until: t(30).toISOString() });
    const later = computeStatus(base({ previous: back, poll: { ok: true, at: t(40) }, now: t(40) }));
    expect(later.lastFailure).toEqual(back.lastFailure);
    const next = computeStatus(base({ previous: later, poll: fail(403, t(50)), now: t(50) }));
    expect(next.lastFailure).toMatchObject({ code: '403', since: t(50).toISOString() });
    expect(next.lastFailure!.until).toBeUndefined();
  });

  it('a failure whose status could not be written (the API server down) is published when the server is back', () => {
    const failing = computeStatus(base({ previous: ok, poll: fail(undefined, t(10)), now: t(10) }));
    // `ok` is what the object holds; `failing` never reached it.
    const back = computeStatus(
      base({ previous: ok, unwritten: failing, poll: { ok: true, at: t(30) }, now: t(30) }),
    );
    expect(back.lastFailure).toEqual({
      code: 'TransportError',
      reason: 'TransportError',
      message: 'nope',
      since: t(10).toISOString(),
      until: t(30).toISOString(),
    });
    expect(back.lastResponse).toEqual({ code: '200', reason: 'OK', since: t(30).toISOString() });
    expect(back.peers).toEqual(ok.peers);
  });
});

describe('computeStatus: refusals and the first list', () => {
  const ok = computeStatus(base());
  it('an invalid spec keeps the last list but drops lastPollTime (agents keep what they have)', () => {
    const s = computeStatus(
      base({
        previous: ok,
        spec: undefined,
        refusal: { reason: 'InvalidSpec', message: 'spec.x: bad' },
        now: t(5),
      }),
    );
    expect(s.peers).toEqual(ok.peers);
    expect(s.lastPollTime).toBeUndefined();
    expect(s.failureDomains).toBeUndefined();
    expect(cond(s, 'Ready')).toMatchObject({
      status: 'False',
      reason: 'InvalidSpec',
      message: 'spec.x: bad',
    });
    expect(cond(s, 'QuorumAtRisk')).toMatchObject({ status: 'Unknown', reason: 'InvalidSpec' });
  });
  it('a cross-namespace topology publishes nothing', () => {
    const s = computeStatus(
      base({ previous: ok, refusal: { reason: 'CrossNamespaceDenied', message: 'no' } }),
    );
    expect(s.peers).toEqual([]);
    expect(s.excluded).toEqual([]);
    expect(s.lastPollTime).toBeUndefined();
    // ...and readers take it for unknown, not for an empty list: no lastResponse.
    expect(s.lastResponse).toBeUndefined();
    expect(statusMeaning(s).kind).toBe('unknown');
  });
  it('before the first list it keeps the previous status as it is (a restart does not flap it)', () => {
    expect(computeStatus(base({ previous: ok, poll: undefined, now: t(50) }))).toBe(ok);
    expect(cond(computeStatus(base({ poll: undefined })), 'Ready')).toMatchObject({
      status: 'Unknown',
      reason: 'Listing',
    });
  });
  it('the same world computed again is the same status', () => {
    const again = computeStatus(base({ previous: ok, now: t(40), poll: { ok: true, at: t(0) } }));
    expect(again).toEqual(ok);
  });
});

describe('computeStatus: failure domains from Node labels', () => {
  it('analyses the peers by the labels of their Nodes and sets QuorumAtRisk', () => {
    const labels: Record<string, Record<string, string>> = {
      n1: { 'topology.kubernetes.io/zone': 'a' },
      n2: { 'topology.kubernetes.io/zone': 'a' },
      n3: { 'topology.kubernetes.io/zone': 'b' },
    };
    const s = computeStatus(
      base({
        spec: spec({ failureDomains: { levels: [{ key: 'topology.kubernetes.io/zone' }] } }),
        pods: [pod('a', '10.0.0.1', 'n1'), pod('b', '10.0.0.2', 'n2'), pod('c', '10.0.0.3', 'n3')],
        nodeLabels: (n) => labels[n],
      }),
    );
    expect(s.failureDomains!.verdict).toBe('Breaks');
    expect(s.failureDomains!.domains!.find((d) => d.domain === 'a')).toMatchObject({
      votingWeight: 2,
      verdict: 'Breaks',
    });
    expect(cond(s, 'QuorumAtRisk')).toMatchObject({ status: 'True' });
    expect(cond(s, 'QuorumAtRisk')!.message).toContain('a');
  });
});

describe('computeStatus: declared voters and analysis Off', () => {
  const labelled = (name: string, ip: string, node: string, labels: Record<string, string>, votes?: string) =>
    summarizePod(
      {
        metadata: {
          name,
          uid: `uid-${name}`,
          labels,
          ...(votes ? { annotations: { 'netzlive/votes': votes } } : {}),
        },
        spec: { nodeName: node },
        status: { podIP: ip, phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
      },
      DEFAULT_NAMING_SETTINGS,
    );
  const pods = [
    labelled('ra-0', '10.0.0.1', 'n1', { ra: 'voter' }, '2'),
    labelled('ra-1', '10.0.0.2', 'n2', { ra: 'voter' }),
    labelled('obs', '10.0.0.3', 'n1', { ra: 'observer' }),
    labelled('web', '10.0.0.4', 'n2', {}),
  ];
  const zone = (n: string) => ({ 'topology.kubernetes.io/zone': n === 'n1' ? 'a' : 'b' });

  it('counts the voters the pod labels select, with the votes their annotation gives', () => {
    const s = computeStatus(
      base({
        spec: spec({
          failureDomains: {
            levels: [{ key: 'topology.kubernetes.io/zone' }],
            voters: { selector: 'ra', learnerSelector: 'ra=observer' },
          },
        }),
        pods,
        nodeLabels: zone,
      }),
    );
    expect(s.peerCount).toBe(4);
    expect(s.failureDomains).toMatchObject({ voters: 2, votingWeight: 3, learners: 1, ignoredPeers: 1 });
  });

  it('Off: status.failureDomains is {verdict: Off}, QuorumAtRisk Unknown', () => {
    const s = computeStatus(
      base({ spec: spec({ failureDomains: { analysis: 'Off' } }), pods, nodeLabels: zone }),
    );
    expect(s.failureDomains).toEqual({ verdict: 'Off' });
    expect(cond(s, 'QuorumAtRisk')).toMatchObject({ status: 'Unknown', reason: 'AnalysisOff' });
  });
});

describe('writing', () => {
  const ok = computeStatus(base());
  it('writes when the content changed, never for lastPollTime alone (no heartbeat: the Lease carries liveness)', () => {
    expect(shouldWrite(undefined, ok)).toBe(true);
    const later = { ...ok, lastPollTime: t(30).toISOString() };
    expect(shouldWrite(ok, later)).toBe(false);
    expect(shouldWrite(ok, { ...ok, lastPollTime: t(3600).toISOString() })).toBe(false);
    expect(shouldWrite(ok, { ...ok, peerCount: 9 })).toBe(true);
  });
});

describe('computeStatus from summarized pods', () => {
  it('gives computeStatus the same peers and exclusions as resolving the pods whole', () => {
    const shared = {
      ...full.metadata,
      annotations: {
        ...full.metadata.annotations,
        'netzlive/nodename-naming-jsonpath': "$.metadata.labels['app']",
      },
    };
    const pods = [
      { ...full, metadata: shared },
      { ...full, metadata: { ...shared, name: 'web-1', uid: 'u1' } }, // both web@web: a duplicate
      { ...full, metadata: { ...full.metadata, name: 'web-2', uid: 'u2' } }, // web-2@web
      { metadata: { name: 'pending' }, status: { phase: 'Pending' } },
    ];
    const st = computeStatus(base({ pods: pods.map((p) => summarizePod(p, DEFAULT_NAMING_SETTINGS)) }));
    const whole = resolvePeers(pods, DEFAULT_NAMING_SETTINGS);
    expect(st.peers).toEqual(whole.peers);
    expect(st.excluded).toEqual(whole.excluded);
    expect(st.excluded!.map((e) => e.reason).sort()).toEqual([
      'DuplicateNodeName',
      'DuplicateNodeName',
      'NoPodIP',
    ]);
  });
});

describe('computeStatus: the ReadinessDeadlockRisk condition', () => {
  const ready = spec({ membership: { peers: 'Ready' } });
  const notReadyPod = (name: string, ip: string) =>
    summarizePod(
      {
        metadata: { name, uid: `uid-${name}` },
        status: { podIP: ip, phase: 'Running', conditions: [{ type: 'Ready', status: 'False' }] },
      },
      { ...DEFAULT_NAMING_SETTINGS, membership: ready.membership },
    );
  it('is absent under Running when it never was there', () => {
    expect(cond(computeStatus(base()), 'ReadinessDeadlockRisk')).toBeUndefined();
  });
  it('is True, NoPodReady, when peers is Ready and no pod is ready', () => {
    const s = computeStatus(base({ spec: ready, pods: [notReadyPod('web-0', '10.0.0.1')] }));
    expect(s.peers).toEqual([]);
    expect(s.excluded?.map((e) => e.reason)).toEqual(['PodNotReady']);
    expect(cond(s, 'ReadinessDeadlockRisk')).toMatchObject({ status: 'True', reason: 'NoPodReady' });
  });
  it('turns False when the policy goes back to Running', () => {
    const before = computeStatus(base({ spec: ready, pods: [notReadyPod('web-0', '10.0.0.1')] }));
    const after = computeStatus(base({ previous: before, now: t(5), poll: { ok: true, at: t(5) } }));
    expect(cond(after, 'ReadinessDeadlockRisk')).toMatchObject({
      status: 'False',
      reason: 'RunningPodsArePeers',
    });
  });
});

describe('computeStatus: a large topology lists each peer with the fields readers use', () => {
  const many = (n: number) =>
    Array.from({ length: n }, (_, i) => pod(`web-${i}`, `10.0.${i >> 8}.${i & 255}`, `node-${i % 3}`));
  const zones: Record<string, Record<string, string>> = {
    'node-0': { 'topology.kubernetes.io/zone': 'a' },
    'node-1': { 'topology.kubernetes.io/zone': 'b' },
    'node-2': { 'topology.kubernetes.io/zone': 'c' },
  };
  const zoned = spec({ failureDomains: { levels: [{ key: 'topology.kubernetes.io/zone' }] } });

  it('at 1,000 peers every field; above, nodeName, pod, uid, terminating, ready and serving only', () => {
    const at = computeStatus(base({ pods: many(1000) }));
    expect(Object.keys(at.peers![0]!).sort()).toEqual(
      [
        'hostSource',
        'nameSource',
        'node',
        'nodeName',
        'pod',
        'podIP',
        'ready',
        'serving',
        'terminating',
        'uid',
      ].sort(),
    );
    const above = computeStatus(base({ pods: many(1001) }));
    expect(above.peerCount).toBe(1001);
    // Every pod here is ready and not terminating: what status.peerDefaults says, so no flag is written.
    expect(above.peerDefaults).toEqual({ terminating: false, ready: true, serving: true });
    for (const p of above.peers!) expect(Object.keys(p).sort()).toEqual(['nodeName', 'pod', 'uid']);
    // What a reader makes of it is the same list, every flag as the full list has it.
    const meaning = statusMeaning(above);
    const readerFields = ({ nodeName, pod, uid, terminating, ready, serving }: Peer) => ({
      nodeName,
      pod,
      uid,
      terminating,
      ready,
      serving,
    });
    expect(meaning.kind === 'current' && meaning.peers.map(readerFields)).toEqual(
      computeStatus(base({ pods: many(1001), lightPeersAbove: Infinity })).peers!.map(readerFields),
    );
  });

  it('above 1,000 peers a flag is written where it differs from status.peerDefaults, and reads back as it was', () => {
    const odd = (name: string, ip: string, deleting: boolean): PodSummary =>
      summarizePod(
        {
          metadata: {
            name,
            uid: `uid-${name}`,
            ...(deleting ? { deletionTimestamp: '2026-12-04T12:00:00Z' } : {}),
          },
          spec: { nodeName: 'node-0' },
          status: {
            podIP: ip,
            phase: 'Running',
            conditions: [{ type: 'Ready', status: deleting ? 'True' : 'False' }],
          },
        },
        DEFAULT_NAMING_SETTINGS,
      );
    const pods = [...many(1001), odd('zz-going', '10.9.0.1', true), odd('zz-unready', '10.9.0.2', false)];
    const full = computeStatus(
      base({ pods, spec: spec({ membership: { peers: 'Running' } }), lightPeersAbove: Infinity }),
    );
    const light = computeStatus(base({ pods, spec: spec({ membership: { peers: 'Running' } }) }));
    const entry = (s: ClusterTopologyStatus, pod: string) => s.peers!.find((p) => p.pod === pod)!;
    expect(entry(light, 'zz-going')).toMatchObject({ terminating: true, ready: false });
    expect(entry(light, 'zz-going').serving).toBeUndefined();
    expect(entry(light, 'zz-unready')).toMatchObject({ ready: false, serving: false });
    expect(entry(light, 'zz-unready').terminating).toBeUndefined();
    const meaning = statusMeaning(light);
    for (const pod of ['zz-going', 'zz-unready', 'web-7']) {
      const read = meaning.kind === 'current' ? meaning.peers.find((p) => p.pod === pod) : undefined;
      const { terminating, ready, serving } = entry(full, pod);
      expect(read).toMatchObject({ terminating, ready, serving });
    }
  });

  it('a failed poll keeps the light list and the same failure-domain analysis (the Nodes from the pods held)', () => {
    const ok = computeStatus(base({ spec: zoned, pods: many(1200), nodeLabels: (n) => zones[n] }));
    expect(ok.failureDomains?.verdict).toBeDefined();
    const failed = computeStatus(
      base({ spec: zoned, previous: ok, poll: fail(503), pods: many(1200), nodeLabels: (n) => zones[n] }),
    );
    expect(failed.peers).toEqual(ok.peers);
    expect(failed.failureDomains).toEqual(ok.failureDomains);
  });
});
