import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { watchPeers, type PeerWatch } from '../../operator/index.js';
import type { ControlPlaneState } from '../../dev/cluster/control-plane.js';
import type { ClusterTopologyMemberStatus } from '../../operator/api/types.generated.js';
import { kubeconfigForToken, kubectlOk } from '../support/cluster.js';
import {
  applyObjects,
  applyTopology,
  createPod,
  deletePod,
  makeLeaseStale,
  readerRbac,
  serviceAccountToken,
  setPodStatus,
} from '../support/objects.js';
import { FaultProxy } from '../support/fault-proxy.js';
import { startOperator, type CtopoProcess } from '../support/operator-process.js';
import { waitFor } from '../support/wait.js';
import { operatorNamespace } from '../support/world.js';

describe('watchPeers, the library for Node.js applications', () => {
  let s: ControlPlaneState;
  let ns: string;
  let op: CtopoProcess;
  let watch: PeerWatch;
  const seen: (readonly string[])[] = [];
  const troubles: string[] = [];

  beforeAll(async () => {
    let kubeconfig: string;
    ({ s, ns, kubeconfig } = await operatorNamespace('lib'));
    await applyTopology(s, ns, 'web', {
      selector: 'netzlive/pod-type=cluster-service',
      pollingInterval: '1s',
    });
    op = startOperator(kubeconfig, ['--namespaces', ns, '--no-leader-elect']);
    watch = watchPeers(
      { namespace: ns, name: 'web', kubeconfig: s.kubeconfig, onTrouble: (cause) => troubles.push(cause) },
      (peers) => seen.push(peers),
    );
  });
  afterAll(async () => {
    watch?.stop();
    await op?.stop();
  });

  it('hands over the peers when they change, and only then', async () => {
    await waitFor('an empty first list', () => seen.length >= 1, 20_000);
    expect(seen[0]).toEqual([]);
    await createPod(s, ns, 'n-0');
    await setPodStatus(s, ns, 'n-0', { ip: '10.9.0.1' });
    await waitFor('n-0', () => watch.peers?.includes('n-0@10.9.0.1'), 20_000);
    const count = seen.length;
    // Several polls with nothing new: the operator's, and watchPeers' own re-checks (both every 1 s).
    const polls = await op.metricSum('ctopo_reconcile_total');
    await waitFor(
      'three more polls',
      async () => (await op.metricSum('ctopo_reconcile_total')) >= polls + 3,
      30_000,
    );
    expect(seen.length).toBe(count);
    await deletePod(s, ns, 'n-0');
    await waitFor('n-0 gone', () => watch.peers?.length === 0, 20_000);
  });

  it('writes a member report only when asked to, from the connections the application gives', async () => {
    for (const [i, pod] of ['r-0', 'r-1'].entries()) {
      await createPod(s, ns, pod);
      await setPodStatus(s, ns, pod, { ip: `10.9.1.${i + 1}` });
    }
    const problems: string[] = [];
    const reporting = watchPeers(
      {
        namespace: ns,
        name: 'web',
        kubeconfig: s.kubeconfig,
        report: { pod: 'r-0', node: 'r-0@10.9.1.1', onProblem: (m) => problems.push(m) },
      },
      () => {},
    );
    try {
      await waitFor('both listed', () => reporting.peers?.length === 2, 20_000);
      reporting.connections(['r-1@10.9.1.2']);
      const report = await waitFor(
        'r-0’s report, connected to r-1',
        async () => {
          const r = JSON.parse(await kubectlOk(s, ['-n', ns, 'get', 'ctm', '-o', 'json'])) as {
            items: { metadata: { name: string }; status: ClusterTopologyMemberStatus }[];
          };
          const mine = r.items.find((x) => x.metadata.name === 'r-0.web');
          return mine?.status.connectedOfListed === '1/1' ? r.items : undefined;
        },
        30_000,
      );
      // the first watch did not opt in: r-0's is the only report
      expect(report.map((x) => x.metadata.name)).toEqual(['r-0.web']);
      expect(report[0]!.status).toMatchObject({
        node: 'r-0@10.9.1.1',
        observed: true,
        selfCheck: { result: 'Match' },
        notConnected: [],
      });
      expect(problems).toEqual([]);
    } finally {
      reporting.stop();
      for (const pod of ['r-0', 'r-1']) await deletePod(s, ns, pod);
    }
  });

  it('never hands over an empty list because the object is gone: it reports trouble instead', async () => {
    await createPod(s, ns, 'n-1');
    await setPodStatus(s, ns, 'n-1', { ip: '10.9.0.2' });
    await waitFor('n-1', () => watch.peers?.includes('n-1@10.9.0.2'), 20_000);
    const count = seen.length;
    await kubectlOk(s, ['-n', ns, 'delete', 'ctopo', 'web']);
    await waitFor('ObjectGone reported', () => troubles.includes('ObjectGone'), 20_000);
    expect(seen.length).toBe(count);
    expect(watch.peers).toEqual(['n-1@10.9.0.2']);
  });
});

/**
 * docs/agent.md, "watchPeers": never an empty list because of trouble. On the real API server, an
 * application's own identity (get/list/watch on its topology and Lease) through the fault proxy:
 * the API unreachable, its own 403, and the operator's Lease stale — each reported to onTrouble
 * over several checks while onChange hears nothing; a real change afterwards still arrives.
 */
describe('watchPeers in trouble keeps the peers it handed over', () => {
  let s: ControlPlaneState;
  let ns: string;
  let op: CtopoProcess | undefined;
  let opKubeconfig: string;
  let proxy: FaultProxy;
  let watch: PeerWatch;
  const seen: (readonly string[])[] = [];
  const troubles: string[] = [];
  const app = { kind: 'ServiceAccount' as const, name: 'app', namespace: '' };
  const operator = () => startOperator(opKubeconfig, ['--namespaces', ns, '--no-leader-elect']);
  /** The application's own: get/list/watch on its topology and its Lease. */
  const appRbac = () =>
    readerRbac({
      namespace: ns,
      name: 'app',
      topologies: ['web'],
      verbs: ['get', 'list', 'watch'],
      leases: true,
      subject: app,
    });
  /** `cause` reported, then `n` more reports of it (one per check, every pollingInterval). */
  const reported = async (cause: string, n = 3) => {
    await waitFor(`${cause} reported`, () => troubles.includes(cause), 60_000);
    const from = troubles.length;
    await waitFor(
      `${n} more reports`,
      () => troubles.slice(from).filter((c) => c === cause).length >= n,
      30_000,
    );
  };

  beforeAll(async () => {
    ({ s, ns, kubeconfig: opKubeconfig } = await operatorNamespace('libtrouble'));
    app.namespace = ns;
    const token = await serviceAccountToken(s, ns, 'app');
    await applyObjects(s, appRbac());
    proxy = await new FaultProxy(s).start();
    const kubeconfig = await kubeconfigForToken(s, `app-${ns}.kubeconfig`, token, proxy.url);
    await applyTopology(s, ns, 'web', {
      selector: 'netzlive/pod-type=cluster-service',
      pollingInterval: '1s',
    });
    for (const [i, pod] of ['t-0', 't-1', 't-2'].entries()) {
      await createPod(s, ns, pod);
      await setPodStatus(s, ns, pod, { ip: `10.9.1.${i + 1}` });
    }
    op = operator();
    watch = watchPeers(
      { namespace: ns, name: 'web', kubeconfig, onTrouble: (cause) => troubles.push(cause) },
      (peers) => seen.push(peers),
    );
    await waitFor('three peers', () => watch.peers?.length === 3, 60_000);
  });
  afterAll(async () => {
    watch?.stop();
    proxy?.set({ kind: 'pass' });
    await op?.stop();
    await proxy?.stop();
  });

  it('the API server unreachable: ApiUnreachable, no list handed over; a change arrives once it is back', async () => {
    const count = seen.length;
    const peers = watch.peers;
    proxy.set({ kind: 'drop' });
    try {
      await reported('ApiUnreachable');
      expect(seen.length).toBe(count);
      expect(watch.peers).toEqual(peers);
    } finally {
      proxy.set({ kind: 'pass' });
    }
    await deletePod(s, ns, 't-2');
    await waitFor('the change', () => watch.peers?.length === 2, 60_000);
    expect(seen.at(-1)).toEqual(['t-0@10.9.1.1', 't-1@10.9.1.2']);
  });

  it('its own 403: Forbidden, no list handed over; a change arrives once it may read again', async () => {
    const count = seen.length;
    await kubectlOk(s, ['-n', ns, 'delete', 'rolebinding', 'app']);
    try {
      await reported('Forbidden');
      expect(seen.length).toBe(count);
      expect(watch.peers).toEqual(['t-0@10.9.1.1', 't-1@10.9.1.2']);
    } finally {
      await applyObjects(s, appRbac());
    }
    await deletePod(s, ns, 't-1');
    await waitFor('the change', () => watch.peers?.length === 1, 90_000);
  });

  it('the operator’s Lease stale: StatusStale, no list handed over; a change arrives once the operator is back', async () => {
    const count = seen.length;
    await op!.stop();
    op = undefined;
    await makeLeaseStale(s, ns, 'web');
    await reported('StatusStale');
    expect(seen.length).toBe(count);
    expect(watch.peers).toEqual(['t-0@10.9.1.1']);
    op = operator();
    await createPod(s, ns, 't-3');
    await setPodStatus(s, ns, 't-3', { ip: '10.9.1.4' });
    await waitFor('the change', () => watch.peers?.length === 2, 60_000);
  });
});
