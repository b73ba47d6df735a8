import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ControlPlaneState } from '../../dev/cluster/control-plane.js';
import { kubectlOk } from '../support/cluster.js';
import { applyTopology, createNode, createPod, setPodStatus, topologyStatus } from '../support/objects.js';
import { startOperator, type CtopoProcess } from '../support/operator-process.js';
import { waitFor } from '../support/wait.js';
import { operatorNamespace } from '../support/world.js';

/**
 * The Events the operator posts on a ClusterTopology (docs/operator.md, "Conditions"), as the real
 * API server stores them: QuorumVerdictChanged (Normal for Survives, Warning otherwise), and at
 * most one event per object and reason every 10 s, what was held back said in the next one.
 */

const ZONE = 'topology.kubernetes.io/zone';

interface EventItem {
  type: string;
  reason: string;
  message: string;
  metadata: { creationTimestamp: string };
  involvedObject: { kind: string; name: string };
}

describe('the operator’s Events (real API server)', () => {
  let s: ControlPlaneState;
  let ns: string;
  let op: CtopoProcess;
  const node = (zone: string) => `${ns}-${zone.toLowerCase()}`;
  const events = async (topology: string, reason: string) =>
    (
      JSON.parse(
        await kubectlOk(s, [
          '-n',
          ns,
          'get',
          'events',
          '--field-selector',
          `involvedObject.name=${topology},reason=${reason}`,
          '-o',
          'json',
        ]),
      ) as { items: EventItem[] }
    ).items
      .filter((e) => e.involvedObject.kind === 'ClusterTopology')
      .sort((a, b) => a.metadata.creationTimestamp.localeCompare(b.metadata.creationTimestamp));
  const member = async (pod: string, zone: string, ip: string, app: string) => {
    await createPod(s, ns, pod, { labels: { app }, nodeName: node(zone) });
    await setPodStatus(s, ns, pod, { ip, ready: true });
  };

  beforeAll(async () => {
    let kubeconfig: string;
    ({ s, ns, kubeconfig } = await operatorNamespace('events'));
    for (const zone of ['A', 'B', 'C']) await createNode(s, node(zone), { [ZONE]: zone });
    // One voter per zone: any single zone may go.
    for (const [i, zone] of ['A', 'B', 'C'].entries())
      await member(`s-${i}`, zone, `10.31.0.${i + 1}`, 'survives');
    // Two of three voters in zone A: losing it costs the majority.
    for (const [i, zone] of ['A', 'A', 'B'].entries())
      await member(`b-${i}`, zone, `10.31.1.${i + 1}`, 'breaks');
    const failureDomains = { levels: [{ key: ZONE }] };
    for (const app of ['survives', 'breaks', 'burst'])
      await applyTopology(s, ns, app, { selector: `app=${app}`, pollingInterval: '10m', failureDomains });
    op = startOperator(kubeconfig, ['--namespaces', ns, '--no-leader-elect']);
    await op.port();
  });
  afterAll(async () => {
    await op?.stop();
    if (s && ns)
      await kubectlOk(s, ['delete', 'node', node('A'), node('B'), node('C'), '--ignore-not-found']);
  });

  it('QuorumVerdictChanged: Normal when the verdict becomes Survives, Warning when it becomes Breaks', async () => {
    const survives = await waitFor('the Survives event', async () => {
      const e = await events('survives', 'QuorumVerdictChanged');
      return e.length > 0 ? e : undefined;
    });
    expect(survives.map((e) => [e.type, e.message.split('.')[0]])).toEqual([['Normal', 'none → Survives']]);
    const breaks = await waitFor('the Breaks event', async () => {
      const e = await events('breaks', 'QuorumVerdictChanged');
      return e.length > 0 ? e : undefined;
    });
    expect(breaks.map((e) => [e.type, e.message.split('.')[0]])).toEqual([['Warning', 'none → Breaks']]);
    // The verdicts themselves, from the status: the events said what the status says.
    expect((await topologyStatus(s, ns, 'survives'))?.failureDomains?.verdict).toBe('Survives');
    expect((await topologyStatus(s, ns, 'breaks'))?.failureDomains?.verdict).toBe('Breaks');
  });

  it('PeersChanged at most once every 10 s per object; what was held back is said in the next one', async () => {
    // A burst of joins, each its own status write with peers changed.
    const writes = await op.metricSum('ctopo_status_writes_total');
    for (let i = 0; i < 6; i++) await member(`u-${i}`, 'ABC'[i % 3]!, `10.31.2.${i + 1}`, 'burst');
    await waitFor('six peers', async () => (await topologyStatus(s, ns, 'burst'))?.peerCount === 6);
    expect(await op.metricSum('ctopo_status_writes_total')).toBeGreaterThan(writes + 1);
    // Then one more join now and then, until an event says how many were held back.
    let extra = 0;
    const held = await waitFor(
      'an event that counts the held-back ones',
      async () => {
        const e = await events('burst', 'PeersChanged');
        if (e.some((x) => /held back\)$/.test(x.message))) return e;
        await member(`v-${extra}`, 'A', `10.31.3.${++extra}`, 'burst');
        return undefined;
      },
      60_000,
      2_000,
    );
    // The API server's own clock: no two PeersChanged events of this topology within 10 s (its
    // timestamps have whole seconds, so two events 10 s apart may read 9 s apart).
    const at = held.map((e) => Date.parse(e.metadata.creationTimestamp));
    for (let k = 1; k < at.length; k++) expect(at[k]! - at[k - 1]!).toBeGreaterThanOrEqual(9_000);
    expect(held.at(-1)!.message).toMatch(/\(\d+ similar events? held back\)$/);
  });
});
