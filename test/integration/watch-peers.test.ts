import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { watchPeers, type PeerWatch } from '../../operator/index.js';
import type { ControlPlaneState } from '../../dev/cluster/control-plane.js';
import { kubectlOk } from '../support/cluster.js';
import { applyTopology, createPod, deletePod, setPodStatus } from '../support/objects.js';
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
