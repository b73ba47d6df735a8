import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ControlPlaneState } from '../../dev/cluster/control-plane.js';
import { applyTopology, seedPods } from '../support/objects.js';
import type { FaultProxy } from '../support/fault-proxy.js';
import { CtopoProcess, startOperator } from '../support/operator-process.js';
import { waitFor } from '../support/wait.js';
import { proxiedOperatorNamespace } from '../support/world.js';

/**
 * The operator's /readyz as docs/operator.md states it, on the real API server through the fault
 * proxy: the leader answers 503 until its ClusterTopology and Node lists have synced, and while
 * one of those watches has been down for more than 60 s; 200 otherwise.
 */
describe('the leader’s /readyz', () => {
  let s: ControlPlaneState;
  let ns: string;
  let proxy: FaultProxy;
  let kubeconfig: string;
  const lists = () =>
    new RegExp(
      `^(/apis/cluster.netzlive.io/v1alpha1/namespaces/${ns}/clustertopologies|/api/v1/nodes)\\?(?!.*watch=true)`,
    );
  const topologyWatches = () =>
    new RegExp(`^/apis/cluster.netzlive.io/v1alpha1/namespaces/${ns}/clustertopologies\\?.*watch=true`);

  beforeAll(async () => {
    ({ s, ns, proxy, kubeconfig } = await proxiedOperatorNamespace('readyz'));
    await seedPods(s, ns, 1, { subnet: '10.32.0' });
    await applyTopology(s, ns, 'web', {
      selector: 'netzlive/pod-type=cluster-service',
      pollingInterval: '2s',
    });
  });
  afterAll(async () => {
    await CtopoProcess.stopAll();
    await proxy?.stop();
  });

  it('503 until the ClusterTopology and Node lists have synced, then 200', async () => {
    const before = proxy.faulted;
    proxy.set({ kind: 'status', code: 503 }, lists());
    const op = startOperator(kubeconfig, ['--namespaces', ns, '--no-leader-elect']);
    try {
      await waitFor('both lists refused', () => proxy.faulted >= before + 2, 60_000);
      const r = await op.get('/readyz');
      expect(r.status).toBe(503);
      expect(r.body).toContain(
        `clustertopologies /apis/cluster.netzlive.io/v1alpha1/namespaces/${ns}/clustertopologies: not listed yet`,
      );
      expect(r.body).toContain('nodes: not listed yet');
      proxy.set({ kind: 'pass' });
      await waitFor('ready', async () => (await op.get('/readyz')).status === 200, 60_000);
    } finally {
      proxy.set({ kind: 'pass' });
      await op.stop();
    }
  }, 120_000);

  it('503 while the ClusterTopology watch has been down for more than 60 s, 200 once it is back', async () => {
    const op = startOperator(kubeconfig, ['--namespaces', ns, '--no-leader-elect']);
    try {
      await waitFor('ready', async () => (await op.get('/readyz')).status === 200, 60_000);
      const before = proxy.faulted;
      // Every watch of the topologies is cut before the API server answers it; lists pass.
      proxy.set({ kind: 'drop' }, topologyWatches());
      await waitFor('a watch to be cut', () => proxy.faulted > before, 60_000);
      const down = await waitFor(
        '503 for the watch',
        async () => {
          const r = await op.get('/readyz');
          return r.status === 503 ? r : undefined;
        },
        120_000,
        1_000,
      );
      expect(down.body).toMatch(/clustertopologies \S+: watch down for \d+s/);
      // It is still down then, and came back only after the fault went.
      expect(proxy.faulted).toBeGreaterThan(before + 1);
      proxy.set({ kind: 'pass' });
      await waitFor('ready again', async () => (await op.get('/readyz')).status === 200, 60_000);
    } finally {
      proxy.set({ kind: 'pass' });
      await op.stop();
    }
  }, 240_000);
});
