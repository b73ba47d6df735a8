import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import {
  checkReport,
  formatCheck,
  type CheckFacts,
  type DeploymentView,
  type OperatorLease,
} from '../../../operator/cli/check-report.js';

/** The verdicts of `ctopo check` for the cases the real API server cannot easily be put in. */

const now = new Date('2026-12-04T12:00:00Z');
const ago = (s: number) => new Date(now.getTime() - s * 1000).toISOString();

const lease = (o: { holder?: string; renewed?: number; version?: string; ns?: string }): OperatorLease => ({
  namespace: o.ns ?? 'ctopo-system',
  name: 'ct-cluster-topology',
  lease: {
    metadata: o.version ? { annotations: { 'cluster.netzlive.io/operator-version': o.version } } : {},
    spec: {
      holderIdentity: o.holder ?? '',
      renewTime: ago(o.renewed ?? 1),
      leaseDurationSeconds: 15,
    },
  },
});
const deployment = (o: {
  replicas?: number;
  ready?: number;
  args?: string[];
  ns?: string;
}): DeploymentView => ({
  metadata: {
    name: 'ct-cluster-topology',
    namespace: o.ns ?? 'ctopo-system',
    labels: { 'app.kubernetes.io/instance': 'ct' },
  },
  spec: {
    replicas: o.replicas ?? 2,
    template: { spec: { containers: [{ args: o.args ?? ['operator', '--leader-elect'] }] } },
  },
  status: { readyReplicas: o.ready ?? 0 },
});
const readerRole = {
  metadata: { name: 'ct-cluster-topology-agent' },
  rules: [
    { apiGroups: ['cluster.netzlive.io'], resources: ['clustertopologies'], verbs: ['get', 'list', 'watch'] },
    { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'list', 'watch'] },
  ],
};
const crd = {
  metadata: { annotations: { 'cluster.netzlive.io/release': '0.1.0' } },
  spec: { versions: [{ name: 'v1alpha1', served: true, storage: true }] },
  status: { conditions: [{ type: 'Established', status: 'True' }] },
};

const facts = (over: Partial<CheckFacts> = {}): CheckFacts => ({
  version: '0.1.0',
  crds: [
    {
      name: 'clustertopologies.cluster.netzlive.io',
      served: 'v1alpha1',
      read: { kind: 'found', value: crd },
    },
  ],
  leases: { kind: 'listed', items: [lease({ holder: 'ct-cluster-topology-abc', version: '0.1.0' })] },
  deployments: { kind: 'listed', items: [deployment({ ready: 2 })] },
  readerRoles: { kind: 'listed', items: [readerRole] },
  now,
  ...over,
});
const operatorLine = (f: CheckFacts) => checkReport(f).lines.find((l) => l.subject.startsWith('operator'))!;

describe('ctopo check: the operator', () => {
  it('a Lease renewed in time: ok, with the version the holder wrote', () => {
    const r = checkReport(facts());
    expect(r.code).toBe(0);
    expect(operatorLine(facts())).toMatchObject({
      verdict: 'ok',
      detail: expect.stringContaining('version 0.1.0'),
    });
  });

  it('a Lease its holder stopped renewing: failed, with the age and the Deployment’s counts', () => {
    const f = facts({
      leases: { kind: 'listed', items: [lease({ holder: 'ct-cluster-topology-abc', renewed: 40 })] },
      deployments: { kind: 'listed', items: [deployment({ replicas: 2, ready: 0 })] },
    });
    expect(operatorLine(f)).toMatchObject({
      verdict: 'fail',
      detail: expect.stringMatching(
        /last renewed by ct-cluster-topology-abc 40 s ago \(limit 15 s\); .* wants 2 replica\(s\) and none is ready/,
      ),
      fix: expect.stringContaining('kubectl -n ctopo-system logs deployment/ct-cluster-topology'),
    });
    expect(checkReport(f).code).toBe(1);
  });

  it('scaled to 0 while its leader’s pod is still terminating: failed, saying so, and the fix scales it up', () => {
    const held = lease({ holder: 'ct-cluster-topology-abc', version: '0.1.0' });
    const terminating = {
      metadata: { name: 'ct-cluster-topology-abc', deletionTimestamp: ago(2) },
      status: { conditions: [{ type: 'Ready', status: 'True' }] },
    };
    const f = (replicas: number) =>
      facts({
        leases: { kind: 'listed', items: [{ ...held, holderPod: { kind: 'found', value: terminating } }] },
        deployments: { kind: 'listed', items: [deployment({ replicas, ready: 1 })] },
      });
    expect(operatorLine(f(0))).toMatchObject({
      verdict: 'fail',
      detail: expect.stringMatching(
        /whose pod is terminating; the Deployment ctopo-system\/ct-cluster-topology is scaled to 0 replicas$/,
      ),
      fix: expect.stringContaining(
        'kubectl -n ctopo-system scale deployment ct-cluster-topology --replicas=2',
      ),
    });
    // Still wanted (a rollout replaces it): the pod's own story is the fix.
    expect(operatorLine(f(2))).toMatchObject({
      verdict: 'fail',
      detail: expect.stringMatching(/whose pod is terminating$/),
      fix: expect.stringContaining('describe pod ct-cluster-topology-abc'),
    });
  });

  it('a Lease left over with no Deployment beside it: failed, and the fix deletes the Lease', () => {
    const f = facts({
      deployments: { kind: 'listed', items: [] },
      leases: { kind: 'listed', items: [lease({})] },
    });
    expect(operatorLine(f).fix).toBe(
      'start the operator there; if it was uninstalled, the Lease is left over: kubectl -n ctopo-system delete lease ct-cluster-topology',
    );
  });

  it('no Lease and no Deployment anywhere: failed, and the fix installs the chart of this version', () => {
    const f = facts({ leases: { kind: 'listed', items: [] }, deployments: { kind: 'listed', items: [] } });
    expect(operatorLine(f)).toMatchObject({
      verdict: 'fail',
      detail: expect.stringContaining('no operator found in any namespace'),
      fix: expect.stringContaining('helm install ctopo cluster-topology-0.1.0.tgz'),
    });
  });

  it('a Deployment without leader election: ok when a replica is ready, failed when none is', () => {
    const args = ['operator', '--no-leader-elect'];
    const none = { kind: 'listed' as const, items: [] };
    expect(
      operatorLine(
        facts({
          leases: none,
          deployments: { kind: 'listed', items: [deployment({ replicas: 1, ready: 1, args })] },
        }),
      ).verdict,
    ).toBe('ok');
    expect(
      operatorLine(
        facts({ leases: none, deployments: { kind: 'listed', items: [deployment({ replicas: 0, args })] } }),
      ),
    ).toMatchObject({
      verdict: 'fail',
      detail: expect.stringContaining('scaled to 0'),
    });
  });

  it('two operators (two releases): one line each, judged apart', () => {
    const f = facts({
      leases: { kind: 'listed', items: [lease({ holder: 'a', ns: 'one' }), lease({ ns: 'two' })] },
      deployments: {
        kind: 'listed',
        items: [deployment({ ns: 'one', ready: 2 }), deployment({ ns: 'two', replicas: 0 })],
      },
    });
    const ops = checkReport(f).lines.filter((l) => l.subject.startsWith('operator'));
    expect(ops.map((l) => [l.subject, l.verdict])).toEqual([
      ['operator one/ct-cluster-topology', 'ok'],
      ['operator two/ct-cluster-topology', 'fail'],
    ]);
  });
});

describe('ctopo check: exit codes and the text', () => {
  it('a failure wins over a check that could not be made (1); could-not-check alone is 69', () => {
    const unreadable = { kind: 'unreadable' as const, message: 'cannot read ClusterRoles: 403 Forbidden' };
    expect(checkReport(facts({ readerRoles: unreadable })).code).toBe(69);
    expect(
      checkReport(
        facts({
          readerRoles: unreadable,
          leases: { kind: 'listed', items: [] },
          deployments: { kind: 'listed', items: [] },
        }),
      ).code,
    ).toBe(1);
  });

  it('a reader ClusterRole that only grants by name does not count (readers of any topology need it unrestricted)', () => {
    const named = { ...readerRole, rules: readerRole.rules.map((r) => ({ ...r, resourceNames: ['web'] })) };
    expect(checkReport(facts({ readerRoles: { kind: 'listed', items: [named] } })).lines[2]).toMatchObject({
      verdict: 'fail',
    });
  });

  it('whatever the cluster holds, every printed line is one line without control characters', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), fc.string({ unit: 'binary' }), (holder, version) => {
        const f = facts({
          leases: { kind: 'listed', items: [lease({ holder: holder || 'x', version, renewed: 100 })] },
          topology: {
            namespace: 'app',
            name: 'web',
            topology: {
              kind: 'found',
              value: {
                status: {
                  conditions: [
                    {
                      type: 'Meshed',
                      status: 'False',
                      reason: holder,
                      message: version,
                      lastTransitionTime: ago(1),
                    },
                  ],
                },
              },
            },
            lease: { kind: 'missing' },
          },
        });
        // eslint-disable-next-line no-control-regex -- control characters are what it looks for
        const control = /[\u0000-\u001f\u007f-\u009f]/;
        for (const l of formatCheck(checkReport(f), 'head')) expect(l).not.toMatch(control);
      }),
    );
  });
});
