import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { watchPeers, type PeerMember, type PeerWatch } from '../../operator/index.js';
import type { ControlPlaneState } from '../../dev/cluster/control-plane.js';
import type { ClusterTopologyStatus } from '../../operator/api/types.generated.js';
import { kubectl, kubectlOk } from '../support/cluster.js';
import { applyTopology, condition, createPod, setPodStatus, topologyStatus } from '../support/objects.js';
import { startOperator, type CtopoProcess } from '../support/operator-process.js';
import { waitFor } from '../support/wait.js';
import { operatorNamespace } from '../support/world.js';

/**
 * Naming modes and the membership policy on the real API server, with the real operator: pod
 * readiness is set the way a kubelet sets it, through the pod's status subresource, and a
 * terminating pod is a scheduled pod deleted with a grace period (it keeps its
 * deletionTimestamp, as no kubelet confirms it gone).
 */
describe('spec.naming modes and spec.membership on the real API server', () => {
  let s: ControlPlaneState;
  let ns: string;
  let op: CtopoProcess;
  let watch: PeerWatch;
  const memberLists: (readonly PeerMember[])[] = [];

  const status = () => topologyStatus(s, ns, 'web');
  const until = (what: string, test: (st: ClusterTopologyStatus | undefined) => boolean) =>
    waitFor(
      what,
      async () => {
        const st = await status();
        return test(st) ? st : undefined;
      },
      30_000,
    );
  const spec = (extra: Record<string, unknown>) => ({
    selector: 'netzlive/pod-type=cluster-service',
    pollingInterval: '1s',
    ...extra,
  });
  const excludedAs = (st: ClusterTopologyStatus | undefined, pod: string) =>
    st?.excluded?.find((e) => e.pod === pod)?.reason;
  const peerOf = (st: ClusterTopologyStatus | undefined, pod: string) =>
    st?.peers?.find((p) => p.pod === pod);

  beforeAll(async () => {
    let kubeconfig: string;
    ({ s, ns, kubeconfig } = await operatorNamespace('member'));
    await applyTopology(
      s,
      ns,
      'web',
      spec({
        naming: { basename: 'app', hostFallback: 'PodDNS' },
        membership: { peers: 'Ready', terminating: 'Drop' },
      }),
    );
    op = startOperator(kubeconfig, ['--namespaces', ns, '--no-leader-elect']);
    watch = watchPeers(
      { namespace: ns, name: 'web', kubeconfig: s.kubeconfig, onMembers: (m) => memberLists.push(m) },
      () => {},
    );
  });
  afterAll(async () => {
    watch?.stop();
    await op?.stop();
  });

  it('peers Ready: a running pod that is not ready is excluded, and the deadlock condition says why', async () => {
    await createPod(s, ns, 'web-0', { nodeName: 'node-a' });
    await setPodStatus(s, ns, 'web-0', { ip: '10.9.1.1', ready: false });
    const st = await until('web-0 excluded as not ready', (x) => excludedAs(x, 'web-0') === 'PodNotReady');
    expect(st.peers).toEqual([]);
    expect(condition(st, 'ReadinessDeadlockRisk')).toMatchObject({ status: 'True', reason: 'NoPodReady' });
    expect(st.excluded?.[0]?.message).toContain('spec.membership.peers is Ready');
  });

  it('the Ready condition set through the status subresource makes it a peer, with its PodDNS name and state', async () => {
    await setPodStatus(s, ns, 'web-0', { ip: '10.9.1.1', ready: true });
    const st = await until('web-0 a peer', (x) => peerOf(x, 'web-0') !== undefined);
    expect(peerOf(st, 'web-0')).toMatchObject({
      nodeName: `app@10-9-1-1.${ns}.pod.cluster.local`,
      nameSource: 'Basename',
      hostSource: 'PodDNS',
      ready: true,
      serving: true,
      terminating: false,
    });
    expect(condition(st, 'ReadinessDeadlockRisk')).toMatchObject({ status: 'True', reason: 'ReadyPodsOnly' });
    // The reader library hands the state over as the operator published it.
    await waitFor('watchPeers saw web-0 ready', () =>
      memberLists.some((l) => l.some((m) => m.pod === 'web-0' && m.ready === true && m.serving === true)),
    );
  });

  it('terminating Drop: a pod being deleted leaves the peers at once', async () => {
    await kubectlOk(s, ['-n', ns, 'delete', 'pod', 'web-0', '--grace-period=300', '--wait=false']);
    const st = await until('web-0 dropped', (x) => excludedAs(x, 'web-0') === 'PodTerminating');
    expect(st.peers).toEqual([]);
  });

  it('terminating Keep and peers Running: the same pod is a peer again, flagged terminating, serving, not ready', async () => {
    await applyTopology(
      s,
      ns,
      'web',
      spec({
        naming: { basename: 'app', hostFallback: 'PodDNS' },
        membership: { peers: 'Running', terminating: 'Keep' },
      }),
    );
    const st = await until('web-0 kept', (x) => peerOf(x, 'web-0') !== undefined);
    expect(peerOf(st, 'web-0')).toMatchObject({ terminating: true, ready: false, serving: true });
    expect(condition(st, 'ReadinessDeadlockRisk')).toMatchObject({
      status: 'False',
      reason: 'RunningPodsArePeers',
    });
    await waitFor('watchPeers saw web-0 terminating', () =>
      memberLists.some((l) => l.some((m) => m.pod === 'web-0' && m.terminating && m.ready === false)),
    );
    await kubectlOk(s, ['-n', ns, 'delete', 'pod', 'web-0', '--grace-period=0', '--force', '--wait=false']);
  });

  it('hostFallback Hostname: a StatefulSet pod gets its stable name; one without a subdomain is excluded naming the field', async () => {
    await applyTopology(s, ns, 'web', spec({ naming: { basename: 'app', hostFallback: 'Hostname' } }));
    const statefulPod = (name: string, subdomain?: string) => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: ns, labels: { 'netzlive/pod-type': 'cluster-service' } },
      spec: {
        hostname: name,
        ...(subdomain ? { subdomain } : {}),
        containers: [{ name: 'app', image: 'example.invalid/app' }],
      },
    });
    await kubectlOk(s, ['create', '-f', '-'], { input: JSON.stringify(statefulPod('db-0', 'db')) });
    await kubectlOk(s, ['create', '-f', '-'], { input: JSON.stringify(statefulPod('db-1')) });
    await setPodStatus(s, ns, 'db-0', { ip: '10.9.2.1', ready: true });
    await setPodStatus(s, ns, 'db-1', { ip: '10.9.2.2', ready: true });
    const st = await until(
      'db-0 named, db-1 excluded',
      (x) => peerOf(x, 'db-0') !== undefined && excludedAs(x, 'db-1') !== undefined,
    );
    expect(peerOf(st, 'db-0')!.nodeName).toBe(`app@db-0.db.${ns}.svc.cluster.local`);
    const e = st.excluded!.find((x) => x.pod === 'db-1')!;
    expect(e.reason).toBe('NoSubdomain');
    expect(e.message).toContain('spec.subdomain');
  });

  it('the API server refuses a naming mode or policy that does not exist, naming the field', async () => {
    const bad = (naming: object, membership: object = {}) =>
      kubectl(s, ['apply', '-f', '-'], {
        input: JSON.stringify({
          apiVersion: 'cluster.netzlive.io/v1alpha1',
          kind: 'ClusterTopology',
          metadata: { name: 'bad', namespace: ns },
          spec: spec({ naming, membership }),
        }),
      });
    const r1 = await bad({ hostFallback: 'PodName' });
    expect(r1.code).not.toBe(0);
    expect(r1.stderr).toContain('spec.naming.hostFallback');
    const r2 = await bad({ basename: 'app@x' });
    expect(r2.code).not.toBe(0);
    expect(r2.stderr).toContain('spec.naming.basename');
    const r3 = await bad({}, { peers: 'Serving' });
    expect(r3.code).not.toBe(0);
    expect(r3.stderr).toContain('spec.membership.peers');
  });
});
