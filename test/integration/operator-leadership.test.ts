import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ControlPlaneState } from '../../dev/cluster/control-plane.js';
import { kubectlOk } from '../support/cluster.js';
import { applyTopology, seedPods } from '../support/objects.js';
import type { FaultProxy } from '../support/fault-proxy.js';
import { CtopoProcess, startOperator } from '../support/operator-process.js';
import { waitFor } from '../support/wait.js';
import { proxiedOperatorNamespace } from '../support/world.js';

/**
 * docs/operator.md, exit codes: "1: lost leadership (a restart campaigns again cleanly)". Two ways
 * to lose it, on the real API server: no renewal gets through for longer than the renew deadline
 * (every request answered 503 by the fault proxy), and the Lease naming someone else.
 */
describe('a leader that loses its Lease exits 1', () => {
  let s: ControlPlaneState;
  let ns: string;
  let proxy: FaultProxy;
  let kubeconfig: string;
  // Short, so a loss is quick to reach (the ratios are the defaults': 15 s / 10 s / 2 s).
  const leader = (identity: string) =>
    startOperator(kubeconfig, [
      '--namespaces',
      ns,
      '--lease-namespace',
      ns,
      '--identity',
      identity,
      '--lease-duration',
      '6s',
      '--renew-deadline',
      '4s',
      '--retry-period',
      '1s',
    ]);
  const lease = async () =>
    JSON.parse(await kubectlOk(s, ['-n', ns, 'get', 'lease', 'cluster-topology-operator', '-o', 'json'])) as {
      spec: { holderIdentity?: string };
    };

  beforeAll(async () => {
    ({ s, ns, proxy, kubeconfig } = await proxiedOperatorNamespace('leader'));
    await seedPods(s, ns, 1, { subnet: '10.33.0' });
    await applyTopology(s, ns, 'web', { selector: 'netzlive/pod-type=cluster-service' });
  });
  afterAll(async () => {
    proxy?.set({ kind: 'pass' });
    await CtopoProcess.stopAll();
    await proxy?.stop();
  });

  it('an API outage longer than the renew deadline', async () => {
    const op = leader('outage');
    await waitFor('it leads', async () => (await op.metric('ctopo_leader').catch(() => 0)) === 1, 60_000);
    proxy.set({ kind: 'status', code: 503 });
    try {
      expect(await op.wait()).toBe(1);
    } finally {
      proxy.set({ kind: 'pass' });
    }
    expect(op.output).toContain('lost leadership (no renewal for 4s); exiting');
  }, 90_000);

  it('the Lease taken over by another identity', async () => {
    const op = leader('first');
    await waitFor('it leads', async () => (await lease()).spec.holderIdentity === 'first', 60_000);
    await waitFor('it says so', async () => (await op.metric('ctopo_leader').catch(() => 0)) === 1);
    // Another replica's claim, written as a newer leader would write it.
    await kubectlOk(s, [
      '-n',
      ns,
      'patch',
      'lease',
      'cluster-topology-operator',
      '--type=merge',
      '-p',
      JSON.stringify({
        spec: { holderIdentity: 'second', renewTime: new Date().toISOString().replace('Z', '000Z') },
      }),
    ]);
    expect(await op.wait()).toBe(1);
    expect(op.output).toMatch(/lost leadership \(.*second.*\); exiting/);
  }, 90_000);
});
