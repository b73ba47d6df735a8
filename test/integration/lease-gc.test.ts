import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn, type ChildProcess } from 'node:child_process';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { ensureControllerManager } from '../../dev/cluster/binaries.js';
import type { ControlPlaneState } from '../../dev/cluster/control-plane.js';
import { installCrd, kubectl, kubectlOk, kubeconfigForUser, privateCluster } from '../support/cluster.js';
import { applyTopology, grantOperatorRbac, seedPods } from '../support/objects.js';
import { startOperator, type CtopoProcess } from '../support/operator-process.js';
import { waitFor } from '../support/wait.js';

/**
 * docs/status-protocol.md §4: "an ownerReference to the ClusterTopology (deleting the topology
 * deletes its Lease)". A test control plane has no controllers, so this runs the garbage collector
 * of a real kube-controller-manager beside a private one (its other controllers off): what a
 * cluster does with the ownerReference the operator writes.
 */
describe('deleting a ClusterTopology deletes its liveness Lease (the real garbage collector)', () => {
  let s: ControlPlaneState;
  let stopCluster: () => Promise<void>;
  let gc: ChildProcess | undefined;
  let op: CtopoProcess | undefined;
  const NS = 'gc';
  const leaseNames = async () =>
    (await kubectlOk(s, ['-n', NS, 'get', 'leases', '-o', 'name'])).split('\n').filter(Boolean).sort();

  beforeAll(async () => {
    ({ state: s, stop: stopCluster } = await privateCluster());
    await installCrd(s);
    await kubectlOk(s, ['create', 'namespace', NS]);
    const binary = await ensureControllerManager((l) => process.stderr.write(`${l}\n`));
    const log = await open(join(s.dir, 'garbage-collector.log'), 'a');
    gc = spawn(
      binary,
      [
        `--kubeconfig=${s.kubeconfig}`,
        '--controllers=garbage-collector-controller',
        '--leader-elect=false',
        '--secure-port=0',
        '--v=1',
      ],
      { stdio: ['ignore', log.fd, log.fd] },
    );
    await log.close();
    await grantOperatorRbac(s, { kind: 'User', name: 'operator' }, [NS], 'gc');
    await seedPods(s, NS, 1, { subnet: '10.34.0' });
    for (const name of ['web', 'other'])
      await applyTopology(s, NS, name, { selector: 'netzlive/pod-type=cluster-service' });
    op = startOperator(await kubeconfigForUser(s, 'operator'), ['--namespaces', NS, '--no-leader-elect']);
  }, 600_000);
  afterAll(async () => {
    await op?.stop();
    gc?.kill('SIGKILL');
    await stopCluster?.();
  });

  it('the Lease of the deleted topology goes; the other topology keeps its own', async () => {
    await waitFor(
      'both Leases',
      async () =>
        (await leaseNames()).join() ===
        'lease.coordination.k8s.io/clustertopology.other,lease.coordination.k8s.io/clustertopology.web',
      60_000,
    );
    expect(gc!.exitCode).toBeNull();
    const del = await kubectl(s, ['-n', NS, 'delete', 'clustertopology', 'web']);
    expect(del.code).toBe(0);
    await waitFor(
      'the garbage collector to delete clustertopology.web',
      async () => (await leaseNames()).join() === 'lease.coordination.k8s.io/clustertopology.other',
      120_000,
      500,
    );
  }, 240_000);
});
