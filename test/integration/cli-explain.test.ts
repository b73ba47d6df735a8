import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ControlPlaneState } from '../../dev/cluster/control-plane.js';
import {
  freshNamespace,
  installCrd,
  kubeconfigForUser,
  kubectlOk,
  sharedCluster,
} from '../support/cluster.js';
import { applyTopology, createPod, setPodStatus, topologyStatus } from '../support/objects.js';
import { startOperator, type CtopoProcess } from '../support/operator-process.js';
import { waitFor } from '../support/wait.js';
import { runCtopo } from './cli-run.js';
import { operatorNamespace } from '../support/world.js';

// `ctopo explain` end to end, against the status the real operator writes.

const HOST = 'netzlive/hostname-naming-jsonpath';
const DNS_PATH = "$.spec.containers[?(@.name >= '0')].env[?(@.name == 'EXTERNAL_DNS')].value";
const SELECTOR = 'netzlive/pod-type=cluster-service,tier notin (cache)';

describe('ctopo explain (real operator)', () => {
  let s: ControlPlaneState;
  let ns: string;
  let op: CtopoProcess;
  const explain = (pod: string, kubeconfig = s.kubeconfig) =>
    runCtopo(['explain', '--kubeconfig', kubeconfig, '-n', ns, 'web', pod]);

  beforeAll(async () => {
    let kubeconfig: string;
    ({ s, ns, kubeconfig } = await operatorNamespace('cli-explain'));
    await createPod(s, ns, 'myname-web-0', {
      annotations: { [HOST]: DNS_PATH },
      env: [{ name: 'EXTERNAL_DNS', value: 'myname-web.netzlive.svc.cluster.local' }],
    });
    await setPodStatus(s, ns, 'myname-web-0', { ip: '10.8.0.5', ready: true });
    await createPod(s, ns, 'redispatch-0');
    await setPodStatus(s, ns, 'redispatch-0', { ip: '10.8.1.10', ready: true });
    await createPod(s, ns, 'pending-0'); // no IP: excluded
    await createPod(s, ns, 'cache-0', { labels: { 'netzlive/pod-type': 'cluster-service', tier: 'cache' } });
    await setPodStatus(s, ns, 'cache-0', { ip: '10.8.2.2', ready: true });
    await applyTopology(s, ns, 'web', { selector: SELECTOR, pollingInterval: '10m' });
    op = startOperator(kubeconfig, ['--namespaces', ns, '--no-leader-elect']);
    await op.port();
    await waitFor('two peers and one exclusion', async () => {
      const st = await topologyStatus(s, ns, 'web');
      return st?.peers?.length === 2 && st.excluded?.length === 1;
    });
  });
  afterAll(async () => {
    await op?.stop();
  });

  it('a peer named through the annotation: node name, where host and name came from; exit 0', async () => {
    const r = await explain('myname-web-0');
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`myname-web-0 is a peer of ClusterTopology ${ns}/web.`);
    expect(r.stdout).toContain('Node name:    myname-web-0@myname-web.netzlive.svc.cluster.local');
    expect(r.stdout).toContain(
      `Host part:    myname-web.netzlive.svc.cluster.local — from the annotation ${HOST}, JSONPath ${JSON.stringify(DNS_PATH)}`,
    );
    expect(r.stdout).toContain('Name part:    myname-web-0 — from metadata.name');
    expect(r.stdout).toContain('Pod IP:       10.8.0.5');
  });

  it('a peer with the fallbacks: host from status.podIP; exit 0', async () => {
    const r = await explain('redispatch-0');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Node name:    redispatch-0@10.8.1.10');
    expect(r.stdout).toContain(
      `Host part:    10.8.1.10 — from status.podIP (the pod has no ${HOST} annotation)`,
    );
  });

  it('an excluded pod: the reason and the message; exit 1', async () => {
    const r = await explain('pending-0');
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(
      `pending-0 is not a peer of ClusterTopology ${ns}/web: the operator excludes it.`,
    );
    expect(r.stdout).toContain('Reason:   NoPodIP');
    expect(r.stdout).toMatch(/Message: {2}the pod has no IP yet/);
  });

  it('a pod the selector does not match: which requirement it fails, its labels; exit 1', async () => {
    const r = await explain('cache-0');
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(
      `Pod ${ns}/cache-0 exists but does not match the selector ${JSON.stringify(SELECTOR)}.`,
    );
    expect(r.stdout).toContain('Requirements it fails: "tier notin (cache)"');
    expect(r.stdout).toContain('Its labels: netzlive/pod-type=cluster-service, tier=cache');
    expect(r.stdout).toContain(
      `kubectl get pods -n ${ns} -l 'netzlive/pod-type=cluster-service,tier notin (cache)'`,
    );
  });

  it('a pod that does not exist: says so and how to list the selected pods; exit 1', async () => {
    const r = await explain('ghost-0');
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(`Pod ${ns}/ghost-0 does not exist.`);
  });

  it('a ClusterTopology that does not exist: exit 69 (cannot tell, not "not a peer")', async () => {
    const r = await runCtopo(['explain', '--kubeconfig', s.kubeconfig, '-n', ns, 'nope', 'redispatch-0']);
    expect(r.code).toBe(69);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(`ClusterTopology ${ns}/nope not found`);
  });

  it('a user who may read topologies but not pods: peers still explained; an unknown pod cannot be judged', async () => {
    const user = `reader-${ns}`;
    const rbac = [
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'Role',
        metadata: { name: 'topology-reader', namespace: ns },
        rules: [{ apiGroups: ['cluster.netzlive.io'], resources: ['clustertopologies'], verbs: ['get'] }],
      },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        metadata: { name: 'topology-reader', namespace: ns },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'topology-reader' },
        subjects: [{ kind: 'User', name: user, apiGroup: 'rbac.authorization.k8s.io' }],
      },
    ];
    await kubectlOk(s, ['apply', '-f', '-'], { input: rbac.map((d) => JSON.stringify(d)).join('\n') });
    const kubeconfig = await kubeconfigForUser(s, user);
    const peer = await waitFor('RBAC to apply', async () => {
      const r = await explain('myname-web-0', kubeconfig);
      return r.code === 0 ? r : undefined;
    });
    // Without the pod, the expression cannot be quoted, but the answer stands.
    expect(peer.stdout).toContain(
      `Host part:    myname-web.netzlive.svc.cluster.local — from the annotation ${HOST}\n`,
    );
    const unknown = await explain('ghost-0', kubeconfig);
    expect(unknown.code).toBe(1);
    expect(unknown.stdout).toMatch(
      new RegExp(`Whether pod ${ns}/ghost-0 exists cannot be told: cannot read pod .*403 Forbidden`),
    );
  });
});

describe('ctopo explain on a topology no operator serves', () => {
  let s: ControlPlaneState;
  let ns: string;

  beforeAll(async () => {
    s = await sharedCluster();
    await installCrd(s);
    ns = await freshNamespace(s, 'cli-explain-idle');
    await applyTopology(s, ns, 'idle', { selector: 'app=idle' });
    await createPod(s, ns, 'late-0', { labels: { app: 'idle' } });
  });

  const explain = (pod: string) => runCtopo(['explain', '--kubeconfig', s.kubeconfig, '-n', ns, 'idle', pod]);

  it('without a status: no operator has processed it; exit 1', async () => {
    const r = await explain('late-0');
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('The topology has no status yet: no operator has processed it.');
    expect(r.stdout).toContain(`serves namespace ${ns}`);
  });

  it('with a status that does not list a matching pod yet: points at the operator; exit 1', async () => {
    const now = new Date().toISOString();
    await kubectlOk(s, [
      '-n',
      ns,
      'patch',
      'ctopo',
      'idle',
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify({
        status: {
          peers: [],
          excluded: [],
          lastPollTime: now,
          lastResponse: { code: '200', reason: 'OK', since: now },
        },
      }),
    ]);
    const r = await explain('late-0');
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(
      `Pod ${ns}/late-0 exists and matches the selector "app=idle", but the status does not list it yet.`,
    );
    expect(r.stdout).toContain(`The status is from ${now}`);
  });
});
