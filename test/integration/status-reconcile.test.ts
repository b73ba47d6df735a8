import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ControlPlaneState } from '../../dev/cluster/control-plane.js';
import type { ClusterTopologyStatus } from '../../operator/api/types.generated.js';
import { kubectlOk } from '../support/cluster.js';
import {
  applyTopology,
  createPod,
  patchTopologyStatus,
  setPodStatus,
  topologyStatus,
} from '../support/objects.js';
import { startOperator, type CtopoProcess } from '../support/operator-process.js';
import { waitFor } from '../support/wait.js';
import { operatorNamespace } from '../support/world.js';

/**
 * docs/operator.md, "What the operator owns in .status": a value someone else writes into an owned
 * field is put back — on the real API server, through the status subresource as a person or
 * another controller would write it — and the status is still written only when it differs.
 */
describe('the operator puts back the status it owns', () => {
  let s: ControlPlaneState;
  let ns: string;
  let op: CtopoProcess;
  let published: ClusterTopologyStatus;
  const names = (st: ClusterTopologyStatus | undefined) => st?.peers?.map((p) => p.nodeName) ?? [];
  const rv = async () =>
    (
      await kubectlOk(s, ['-n', ns, 'get', 'ctopo', 'web', '-o', 'jsonpath={.metadata.resourceVersion}'])
    ).trim();
  const overwrite = (status: Record<string, unknown>) => patchTopologyStatus(s, ns, 'web', status);
  const putBack = (what: string) =>
    waitFor(
      `${what} put back`,
      async () => {
        const st = await topologyStatus(s, ns, 'web');
        return JSON.stringify(names(st)) === JSON.stringify(names(published)) && st?.lastResponse
          ? st
          : undefined;
      },
      60_000,
    );

  beforeAll(async () => {
    let kubeconfig: string;
    ({ s, ns, kubeconfig } = await operatorNamespace('owned'));
    for (const [i, pod] of ['w-0', 'w-1', 'w-2'].entries()) {
      await createPod(s, ns, pod);
      await setPodStatus(s, ns, pod, { ip: `10.35.0.${i + 1}`, ready: true });
    }
    await applyTopology(s, ns, 'web', {
      selector: 'netzlive/pod-type=cluster-service',
      pollingInterval: '1s',
    });
    op = startOperator(kubeconfig, ['--namespaces', ns, '--no-leader-elect']);
    published = await waitFor('three peers', async () => {
      const st = await topologyStatus(s, ns, 'web');
      return st?.peerCount === 3 ? st : undefined;
    });
  });
  afterAll(async () => {
    await op?.stop();
  });

  it('an empty peer list written by hand is put back, and then nothing more is written', async () => {
    const held = await overwrite({ peers: [], peerCount: 0 });
    expect(held.peers).toEqual([]); // what every reader would take for "disconnect everyone"
    const st = await putBack('the peers');
    expect(st.peers).toEqual(published.peers);
    expect(st.peerCount).toBe(3);
    // Written only on change still: polls go on, the object stays as it is.
    const [writes, polls, version] = [
      await op.metricSum('ctopo_status_writes_total'),
      await op.metricSum('ctopo_reconcile_total'),
      await rv(),
    ];
    await waitFor(
      'five more polls',
      async () => (await op.metricSum('ctopo_reconcile_total')) >= polls + 5,
      30_000,
    );
    expect(await op.metricSum('ctopo_status_writes_total')).toBe(writes);
    expect(await rv()).toBe(version);
  });

  it('a wrong list is put back', async () => {
    const intruder = {
      ...published.peers![0]!,
      nodeName: 'intruder@10.99.0.1',
      pod: 'intruder',
      uid: 'not-a-pod',
    };
    const held = await overwrite({ peers: [intruder, ...published.peers!.slice(1)] });
    expect(names({ peers: held.peers! })).toContain('intruder@10.99.0.1');
    const st = await putBack('the peers');
    expect(st.peers).toEqual(published.peers);
  });

  it('an owned field removed is put back (without lastResponse every reader takes the list for unknown)', async () => {
    const held = await overwrite({
      lastResponse: null,
      excluded: [{ pod: 'x', reason: 'NoPodIP', message: 'made up' }],
    });
    expect(held.lastResponse).toBeUndefined();
    const st = await putBack('lastResponse');
    expect(st.lastResponse).toEqual(published.lastResponse);
    expect(st.excluded).toEqual(published.excluded);
  });
});
