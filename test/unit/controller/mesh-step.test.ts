import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import type { ClusterTopologyStatus, Peer } from '../../../operator/api/types.generated.js';
import { meshStep } from '../../../operator/controller/mesh-step.js';
import { MESH_MIN_INTERVAL_MS } from '../../../operator/mesh/publish.js';
import type { MemberReportObject } from '../../../operator/mesh/standing.js';
import { shouldWrite } from '../../../operator/protocol/publish.js';
import { memberReport, memberView } from '../../../operator/protocol/member-report.js';

const T0 = Date.parse('2026-12-04T12:00:00Z');
const peer = (i: number): Peer => ({
  nodeName: `web-${i}@10.0.0.${i}`,
  pod: `web-${i}`,
  uid: `u${i}`,
  podIP: `10.0.0.${i}`,
  node: '',
  hostSource: 'PodIP',
  nameSource: 'PodName',
  terminating: false,
});
const status = (n: number, extra: Partial<ClusterTopologyStatus> = {}): ClusterTopologyStatus => ({
  peers: Array.from({ length: n }, (_, i) => peer(i)),
  peerCount: n,
  lastResponse: { code: '200', reason: 'OK', since: '2026-12-04T11:00:00Z' },
  conditions: [
    {
      type: 'Ready',
      status: 'True',
      reason: 'Listed',
      message: 'm',
      lastTransitionTime: '2026-12-04T11:00:00Z',
    },
  ],
  ...extra,
});

/** Reports of members `who` of the first n peers; member i is connected to those with group[j] === group[i]. */
function reports(n: number, group: number[], who = group.map((_, i) => i)): MemberReportObject[] {
  const peers = Array.from({ length: n }, (_, i) => peer(i));
  return who.map((i) =>
    memberReport(
      { namespace: 'ns', topology: 'web', pod: { name: `web-${i}`, uid: `u${i}` } },
      memberView({
        node: peers[i]!.nodeName,
        pod: peers[i]!.pod,
        peers,
        connected: peers.filter((_, j) => group[j] === group[i]).map((p) => p.nodeName),
        reasons: new Map(peers.map((p) => [p.nodeName, 'Refused' as const])),
      }),
      new Date(T0),
    ),
  );
}

const step = (o: Partial<Parameters<typeof meshStep>[0]> & { status: ClusterTopologyStatus }) =>
  meshStep({
    topology: 'web',
    generation: 1,
    previous: undefined,
    reports: [],
    now: new Date(T0),
    lastMeshWriteAt: undefined,
    ...o,
  });

describe('the mesh in a reconcile', () => {
  it('no member has ever reported: no mesh and no Meshed condition (MESH stays blank)', () => {
    const r = step({ status: status(3), previous: status(3) });
    expect(r.status.mesh).toBeUndefined();
    expect(r.status.conditions!.map((c) => c.type)).toEqual(['Ready']);
    expect(shouldWrite(status(3), r.status)).toBe(false);
  });

  it('reports not known yet (not listed): the written mesh stays as it is', () => {
    const first = step({ status: status(3), reports: reports(3, [0, 0, 1]) });
    const r = step({ status: status(3), previous: first.status, reports: undefined });
    expect(r.status).toEqual(first.status);
  });

  it('the first reports: published at once, with the Meshed condition and its Event', () => {
    const r = step({ status: status(3), previous: status(3), reports: reports(3, [0, 0, 1]) });
    expect(r.meshChanged).toBe(true);
    expect(r.status.mesh!.summary).toBe('2/3');
    expect(r.status.conditions!.map((c) => [c.type, c.status])).toEqual([
      ['Ready', 'True'],
      ['Meshed', 'False'],
    ]);
    expect(r.events.map((e) => e.reason)).toEqual(['NotMeshed']);
  });

  it('a change within 15 s of the last mesh write is held (nothing to write) and looked at again when its slot comes', () => {
    const first = step({ status: status(3), previous: status(3), reports: reports(3, [0, 0, 1]) });
    const r = step({
      status: status(3),
      previous: first.status,
      reports: reports(3, [0, 0, 0]),
      now: new Date(T0 + 5000),
      lastMeshWriteAt: T0,
    });
    expect(r.meshChanged).toBe(false);
    expect(shouldWrite(first.status, r.status)).toBe(false);
    expect(r.recheckAt).toBe(T0 + MESH_MIN_INTERVAL_MS);
    const later = step({
      status: status(3),
      previous: first.status,
      reports: reports(3, [0, 0, 0]),
      now: new Date(T0 + MESH_MIN_INTERVAL_MS),
      lastMeshWriteAt: T0,
    });
    expect(later.status.mesh!.summary).toBe('3/3');
    expect(later.events.map((e) => e.reason)).toEqual(['Meshed']);
  });

  it('a status write that happens anyway (a pod left) carries the new mesh at once', () => {
    const first = step({ status: status(3), previous: status(3), reports: reports(3, [0, 0, 0]) });
    const r = step({
      status: status(2),
      previous: first.status,
      reports: reports(3, [0, 0, 0]),
      now: new Date(T0 + 1000),
      lastMeshWriteAt: T0,
    });
    expect(r.meshChanged).toBe(true);
    expect(r.status.mesh!.members).toBe(2);
  });

  it('never asks for a write of its own output: a second step over the same reports writes nothing', () => {
    const arb = fc.integer({ min: 1, max: 8 }).chain((n) =>
      fc.record({
        n: fc.constant(n),
        group: fc.array(fc.integer({ min: 0, max: 2 }), { minLength: n, maxLength: n }),
        reporting: fc.subarray(Array.from({ length: n }, (_, i) => i)),
        later: fc.integer({ min: 0, max: 400_000 }),
      }),
    );
    fc.assert(
      fc.property(arb, ({ n, group, reporting, later }) => {
        const rs = reports(n, group, reporting);
        const first = step({ status: status(n), previous: status(n), reports: rs });
        // a condition the rest of the plan adds after Meshed was written: the order must stay
        const after = {
          type: 'QuorumAtRisk',
          status: 'False' as const,
          reason: 'r',
          message: 'm',
          lastTransitionTime: '2026-12-04T11:00:00Z',
        };
        const written = { ...first.status, conditions: [...first.status.conditions!, after] };
        const again = step({
          status: status(n, { conditions: written.conditions }),
          previous: written,
          reports: rs,
          now: new Date(T0 + later),
          lastMeshWriteAt: T0,
        });
        // Only staleness (time alone) may change the aggregate; otherwise nothing is to be written.
        if (!again.meshChanged) expect(shouldWrite(written, again.status)).toBe(false);
        else expect(later).toBeGreaterThan(360_000);
      }),
    );
  });
});
