import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ControlPlaneState } from '../../dev/cluster/control-plane.js';
import { kubectlOk } from '../support/cluster.js';
import {
  applyTopology,
  createPod,
  makeLeaseStale,
  setPodStatus,
  topologyStatus,
} from '../support/objects.js';
import { CtopoProcess, localAgentArgs, startOperator } from '../support/operator-process.js';
import { waitFor } from '../support/wait.js';
import { operatorNamespace } from '../support/world.js';
import { nodeFlagsOf } from '../../bench/proc.js';

/**
 * The status protocol on a real API server (docs/status-protocol.md): the operator writes the
 * status only when it changes, and renews a per-topology Lease instead; an agent reads the Lease
 * and reports a stale or unknown liveness without disconnecting anyone.
 */

interface Lease {
  metadata: {
    name: string;
    labels?: Record<string, string>;
    ownerReferences?: { kind: string; name: string; uid: string }[];
    resourceVersion: string;
  };
  spec: { holderIdentity?: string; renewTime?: string; leaseDurationSeconds?: number };
}

describe('the status protocol', () => {
  let s: ControlPlaneState;
  let ns: string;
  let opKubeconfig: string;
  let op: CtopoProcess | undefined;
  let agent: CtopoProcess | undefined;
  let dir: string;

  const getJson = async <T>(args: string[]): Promise<T> =>
    JSON.parse(await kubectlOk(s, ['-n', ns, 'get', ...args, '-o', 'json'])) as T;
  const lease = () => getJson<Lease>(['lease', 'clustertopology.web']);
  const rv = async () =>
    (await getJson<{ metadata: { resourceVersion: string } }>(['ctopo', 'web'])).metadata.resourceVersion;

  beforeAll(async () => {
    ({ s, ns, kubeconfig: opKubeconfig } = await operatorNamespace('proto'));
    dir = await mkdtemp(join(tmpdir(), 'ctopo-proto-'));
    for (const [i, pod] of ['p-0', 'p-1'].entries()) {
      await createPod(s, ns, pod);
      await setPodStatus(s, ns, pod, { ip: `10.7.0.${i + 1}` });
    }
    await applyTopology(s, ns, 'web', {
      selector: 'netzlive/pod-type=cluster-service',
      pollingInterval: '1s',
    });
    op = startOperator(opKubeconfig, ['--namespaces', ns, '--no-leader-elect', '--identity', 'first']);
    await waitFor('2 peers', async () => (await topologyStatus(s, ns, 'web'))?.peerCount === 2, 30_000);
  });
  afterAll(async () => {
    await agent?.stop();
    await op?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('writes nothing across several polls when nothing changes (the resourceVersion stays)', async () => {
    // Let the first writes settle: the status once its content is complete.
    await waitFor('the Lease', async () => (await lease().catch(() => undefined))?.spec.renewTime, 20_000);
    const before = await rv();
    const writes = await op!.metricSum('ctopo_status_writes_total');
    const polls = await op!.metricSum('ctopo_reconcile_total');
    // The Lease as each poll leaves it: renewed at most once a minute, not on every poll.
    const renewals = new Set<string>();
    await waitFor(
      'five more polls',
      async () => {
        renewals.add((await lease()).spec.renewTime!);
        return (await op!.metricSum('ctopo_reconcile_total')) >= polls + 5;
      },
      30_000,
    );
    expect(await rv()).toBe(before);
    // Five polls of 1 s fit in one minute: one renewal at most, so two values at most.
    expect(renewals.size).toBeLessThanOrEqual(2);
    expect(await op!.metricSum('ctopo_status_writes_total')).toBe(writes);
    // A change still writes.
    await setPodStatus(s, ns, 'p-1', { ip: '10.7.0.9' });
    await waitFor('the change', async () =>
      (await topologyStatus(s, ns, 'web'))?.peers?.some((p) => p.nodeName === 'p-1@10.7.0.9'),
    );
    expect(await rv()).not.toBe(before);
  });

  it('keeps a Lease per topology: named, labelled, owned by it, with the staleness limit; renewed by the next operator at once', async () => {
    const topo = await getJson<{ metadata: { uid: string } }>(['ctopo', 'web']);
    const first = await lease();
    expect(first.metadata.labels).toEqual({ 'cluster.netzlive.io/topology': 'web' });
    expect(first.metadata.ownerReferences).toEqual([
      expect.objectContaining({ kind: 'ClusterTopology', name: 'web', uid: topo.metadata.uid }),
    ]);
    expect(first.spec).toMatchObject({ holderIdentity: 'first', leaseDurationSeconds: 60 + 3 + 30 });
    await op!.stop();
    op = startOperator(opKubeconfig, ['--namespaces', ns, '--no-leader-elect', '--identity', 'second']);
    const renewed = await waitFor(
      'the new operator to renew the Lease',
      async () => {
        const l = await lease();
        return l.spec.holderIdentity === 'second' ? l : undefined;
      },
      30_000,
    );
    expect(Date.parse(renewed.spec.renewTime!)).toBeGreaterThan(Date.parse(first.spec.renewTime!));
  });

  it('an agent reports a stale, then unknown liveness and keeps its peers', async () => {
    const file = join(dir, 'peers.txt');
    agent = new CtopoProcess([
      ...localAgentArgs({
        kubeconfig: s.kubeconfig,
        namespace: ns,
        topology: 'web',
        pod: 'p-0',
        host: '10.7.0.1',
      }),
      '--connector',
      'file',
      '--file-path',
      file,
    ]);
    await agent.port();
    // bin/ctopo.js re-executed the agent with its runtime flags (docs/operator.md, "Runtime flags").
    expect(await nodeFlagsOf(agent.child.pid!)).toEqual(['--max-semi-space-size=2', '--lite-mode']);
    const peers = async () => (await readFile(file, 'utf8').catch(() => '')).trim();
    await waitFor('the agent to write its peer', async () => (await peers()) === 'p-1@10.7.0.9', 30_000);
    const liveness = (state: string) => agent!.metric('ctopo_agent_operator_liveness', { state });
    await waitFor('liveness live', async () => (await liveness('live')) === 1, 20_000);

    // The operator falls silent past the limit: stopped, and its last renewal made old.
    await op!.stop();
    op = undefined;
    await makeLeaseStale(s, ns, 'web');
    await waitFor('liveness stale', async () => (await liveness('stale')) === 1, 20_000);
    expect(await agent.metric('ctopo_agent_trouble', { cause: 'StatusStale' })).toBe(1);
    expect(agent.output).toMatch(/operator liveness stale/);
    // A pod that leaves meanwhile is not acted on: the status is not current.
    expect(await peers()).toBe('p-1@10.7.0.9');

    // No Lease at all: liveness unknown — reported, not acted on (the status is used as it is).
    await kubectlOk(s, ['-n', ns, 'delete', 'lease', 'clustertopology.web']);
    await waitFor('liveness unknown', async () => (await liveness('unknown')) === 1, 20_000);
    await waitFor(
      'the trouble over',
      async () => (await agent!.metric('ctopo_agent_trouble', { cause: 'StatusStale' })) === 0,
      20_000,
    );
    expect(await peers()).toBe('p-1@10.7.0.9');
    expect(agent.exitCode).toBeUndefined();
    // One line per change, not one per check.
    expect(agent.output.match(/operator liveness stale/g)).toHaveLength(1);
  });
});
