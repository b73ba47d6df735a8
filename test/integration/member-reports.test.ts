import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { ControlPlaneState } from '../../dev/cluster/control-plane.js';
import { ApiError, connect, type Kube } from '../../operator/kube/client.js';
import { memberReport, memberView } from '../../operator/protocol/member-report.js';
import { writeMemberReport, type MemberReport } from '../../operator/protocol/member-report-writer.js';
import {
  freshNamespace,
  installCrd,
  kubeconfigForToken,
  kubeconfigForUser,
  kubectl,
  kubectlOk,
  sharedCluster,
} from '../support/cluster.js';
import { EXAMPLES_DIR, renderChart, type K8sObject } from '../support/helm.js';
import { applyObjects, canI, createPod } from '../support/objects.js';
import { waitFor } from '../support/wait.js';

/**
 * A member can report only itself, on the real kube-apiserver: the chart's admission policy and
 * the reader RBAC of the chart and of examples/agent-rbac.yaml, with service-account tokens bound
 * to pods as the kubelet's are (`kubectl create token --bound-object-kind Pod`), and the report
 * kind's own validation. (On the real node, with kubelet-projected tokens: test/node/.)
 */

let s: ControlPlaneState;
let ns: string;
let policy: K8sObject[];
let agentRole: K8sObject;
const uid: Record<string, string> = {};
let asA: Kube;
let asUnbound: Kube;

/** A report of `pod` as its reader would build it: listed with one peer, connected to it. */
function reportOf(
  pod: string,
  podUid: string,
  extra: { owner?: { name: string; uid: string } } = {},
): MemberReport {
  const peers = [
    { nodeName: 'a@10.0.0.1', pod: 'a' },
    { nodeName: 'b@10.0.0.2', pod: 'b' },
  ];
  const node = peers.find((p) => p.pod === pod)?.nodeName ?? `${pod}@10.0.0.9`;
  const view = memberView({ node, pod, peers, connected: peers.map((p) => p.nodeName) });
  const r = memberReport(
    { namespace: ns, topology: 'web', pod: { name: pod, uid: podUid } },
    view,
    new Date(),
  );
  if (extra.owner) r.metadata.ownerReferences = [{ apiVersion: 'v1', kind: 'Pod', ...extra.owner }];
  return r;
}

const refusal = (r: { outcome: string; error?: unknown }) =>
  r.error instanceof ApiError ? `${r.outcome} ${r.error.code}: ${r.error.message}` : `${r.outcome}`;

async function tokenFor(sa: string, pod?: string): Promise<string> {
  const bound = pod
    ? ['--bound-object-kind', 'Pod', '--bound-object-name', pod, '--bound-object-uid', uid[pod]!]
    : [];
  return (await kubectlOk(s, ['-n', ns, 'create', 'token', sa, '--duration=1h', ...bound])).trim();
}

beforeAll(async () => {
  s = await sharedCluster();
  await installCrd(s);
  ns = await freshNamespace(s, 'mr');
  const release = `mr-${randomBytes(3).toString('hex')}`;
  const rendered = await renderChart(release, ns);
  policy = rendered.filter((o) => o.kind.startsWith('ValidatingAdmissionPolicy'));
  agentRole = rendered.find((o) => o.kind === 'ClusterRole' && o.metadata.name.endsWith('-agent'))!;
  await applyObjects(s, [...policy, agentRole]);
  // The example's reader identity: ServiceAccount web-agent, its Role and RoleBinding.
  const example = parseAllDocuments(await readFile(join(EXAMPLES_DIR, 'agent-rbac.yaml'), 'utf8')).map(
    (d) => d.toJS() as K8sObject & { subjects?: { namespace?: string }[] },
  );
  for (const o of example) {
    o.metadata.namespace = ns;
    for (const subj of o.subjects ?? []) subj.namespace = ns;
  }
  await applyObjects(s, example);
  for (const pod of ['a', 'b']) {
    await createPod(s, ns, pod, { serviceAccountName: 'web-agent' });
    uid[pod] = (await kubectlOk(s, ['-n', ns, 'get', 'pod', pod, '-o', 'jsonpath={.metadata.uid}'])).trim();
  }
  const id = randomBytes(3).toString('hex');
  asA = connect({
    kubeconfig: await kubeconfigForToken(s, `mr-a-${id}.kubeconfig`, await tokenFor('web-agent', 'a')),
  });
  asUnbound = connect({
    kubeconfig: await kubeconfigForToken(s, `mr-unbound-${id}.kubeconfig`, await tokenFor('web-agent')),
  });
  // The policy acts once the API server's admission has loaded it: until then a forged report
  // passes. Wait for the refusal of one (its name is never used again).
  await waitFor(
    'the admission policy to refuse a report of another pod',
    async () => (await writeMemberReport(asA, reportOf('b', uid.b!), 'probe')).outcome === 'forbidden',
  );
  await kubectlOk(s, ['-n', ns, 'delete', 'clustertopologymember', 'b.web', '--ignore-not-found']);
});

afterAll(async () => {
  for (const o of [...(policy ?? []), ...(agentRole ? [agentRole] : [])])
    await kubectl(s, ['delete', o.kind.toLowerCase(), o.metadata.name, '--ignore-not-found']);
});

describe('member reports: the kind', () => {
  it('refuses a report whose parts disagree, naming each rule', async () => {
    const bad = reportOf('a', 'u-1') as unknown as {
      metadata: { name: string };
      status: Record<string, unknown>;
    };
    bad.metadata.name = 'c.web';
    Object.assign(bad.status, {
      listed: 5,
      connectedOfListed: '2/5',
      notConnectedOmitted: 2,
      node: 'other@h',
    });
    const r = await kubectl(s, ['-n', ns, 'apply', '--server-side', '-f', '-'], {
      input: JSON.stringify(bad),
    });
    expect(r.code).not.toBe(0);
    for (const m of [
      'metadata.name must be <spec.pod.name>.<spec.topology>',
      'listed must equal connected plus the peers not connected (notConnected and notConnectedOmitted)',
      'connectedOfListed must be connected/listed',
      'notConnectedOmitted counts peers beyond the first 20: notConnected must then hold 20',
      'selfCheck.actual must be node',
    ])
      expect(r.stderr).toContain(m);
  });

  it('shows a report at a glance: NODE, CONNECTED, SELF CHECK, TROUBLE, AGE', async () => {
    const r = reportOf('q', 'u-q');
    r.status.trouble = { cause: 'StatusStale', since: r.status.reportedAt };
    await kubectlOk(s, ['-n', ns, 'apply', '--server-side', '-f', '-'], { input: JSON.stringify(r) });
    const out = await kubectlOk(s, ['-n', ns, 'get', 'ctm', 'q.web']);
    const [head, row] = out
      .trim()
      .split('\n')
      .map((l) => l.trim().split(/\s{2,}/));
    expect(head).toEqual(['NAME', 'NODE', 'CONNECTED', 'SELF CHECK', 'TROUBLE', 'AGE']);
    expect(row!.slice(0, 5)).toEqual(['q.web', 'q@10.0.0.9', '2/2', 'NotListed', 'StatusStale']);
  });
});

describe('member reports: a member can report only itself', () => {
  it('a pod writes its own report in one request, and rewrites it', async () => {
    const first = await writeMemberReport(asA, reportOf('a', uid.a!), 'ctopo-test');
    expect(refusal(first)).toBe('ok');
    const again = reportOf('a', uid.a!);
    again.status.trouble = { cause: 'ApiUnreachable', since: again.status.reportedAt };
    expect(refusal(await writeMemberReport(asA, again, 'ctopo-test'))).toBe('ok');
    const stored = JSON.parse(
      await kubectlOk(s, ['-n', ns, 'get', 'ctm', 'a.web', '-o', 'json']),
    ) as MemberReport;
    expect(stored.spec).toEqual({ topology: 'web', pod: { name: 'a', uid: uid.a } });
    expect(stored.status.trouble?.cause).toBe('ApiUnreachable');
    expect(stored.metadata.ownerReferences).toEqual([
      expect.objectContaining({ apiVersion: 'v1', kind: 'Pod', name: 'a', uid: uid.a }),
    ]);
  });

  it("a pod that writes another pod's report is refused, with a message that says whose it may write", async () => {
    const other = await writeMemberReport(asA, reportOf('b', uid.b!), 'ctopo-test');
    expect(refusal(other)).toMatch(
      new RegExp(
        `^forbidden 403: .*pod a may write only its own report \\(a\\.<topology> with spec\\.pod name a and uid ${uid.a}\\), not b\\.web for pod b$`,
      ),
    );
    // its own name, but the uid of another (an earlier pod a): refused too
    expect(refusal(await writeMemberReport(asA, reportOf('a', 'uid-of-an-earlier-a'), 'ctopo-test'))).toMatch(
      /^forbidden 403: .*not a\.web for pod a uid uid-of-an-earlier-a$/,
    );
    // its own report, handed to another owner
    const owned = reportOf('a', uid.a!, { owner: { name: 'b', uid: uid.b! } });
    expect(refusal(await writeMemberReport(asA, owned, 'ctopo-test'))).toMatch(
      new RegExp(`^forbidden 403: .*a\\.web: its ownerReferences may name only pod a \\(uid ${uid.a}\\)`),
    );
  });

  it('an existing report of another pod cannot be changed either', async () => {
    await kubectlOk(s, ['-n', ns, 'apply', '--server-side', '-f', '-'], {
      input: JSON.stringify(reportOf('b', uid.b!)),
    });
    const r = await writeMemberReport(asA, reportOf('b', uid.b!), 'ctopo-test');
    expect(refusal(r)).toMatch(/^forbidden 403: .*pod a may write only its own report/);
  });

  it("a token bound to no pod is refused: a report is written only with the pod's own token", async () => {
    const r = await writeMemberReport(asUnbound, reportOf('a', uid.a!), 'ctopo-test');
    expect(refusal(r)).toMatch(
      new RegExp(
        `^forbidden 403: .*a\\.web: system:serviceaccount:${ns}:web-agent presents a token bound to no pod`,
      ),
    );
  });

  it('anyone else is left to RBAC: an admin writes any report; a user without the verbs is refused by RBAC', async () => {
    expect(
      refusal(await writeMemberReport(connect({ kubeconfig: s.kubeconfig }), reportOf('b', uid.b!), 'admin')),
    ).toBe('ok');
    const eve = connect({ kubeconfig: await kubeconfigForUser(s, `eve-${randomBytes(3).toString('hex')}`) });
    const r = await writeMemberReport(eve, reportOf('b', uid.b!), 'eve');
    expect(refusal(r)).toMatch(/^forbidden 403: .*cannot patch resource "clustertopologymembers"/);
    expect(refusal(r)).not.toMatch(/ValidatingAdmissionPolicy/);
  });

  it("the reader ClusterRole of the chart grants create, update and patch on reports (and the example's Role does)", async () => {
    await kubectlOk(s, ['-n', ns, 'create', 'serviceaccount', 'reader2']);
    await kubectlOk(s, [
      '-n',
      ns,
      'create',
      'rolebinding',
      'reader2',
      `--clusterrole=${agentRole.metadata.name}`,
      `--serviceaccount=${ns}:reader2`,
    ]);
    const id = randomBytes(3).toString('hex');
    const viaChart = await kubeconfigForToken(s, `mr-r2-${id}.kubeconfig`, await tokenFor('reader2'));
    const viaExample = await kubeconfigForToken(s, `mr-ex-${id}.kubeconfig`, await tokenFor('web-agent'));
    for (const kc of [viaChart, viaExample]) {
      for (const verb of ['create', 'update', 'patch'])
        await waitFor(`${verb} on reports`, () =>
          canI(s, kc, [verb, 'clustertopologymembers.cluster.netzlive.io', '-n', ns]),
        );
      expect(await canI(s, kc, ['delete', 'clustertopologymembers.cluster.netzlive.io', '-n', ns])).toBe(
        false,
      );
    }
  });
});
