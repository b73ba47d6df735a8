import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ControlPlaneState } from '../../../dev/cluster/control-plane.js';
import { kubectlOk } from '../../support/cluster.js';
import {
  applyTopology,
  createPod,
  deletePod,
  serviceAccountToken,
  setPodStatus,
  topologyStatus,
} from '../../support/objects.js';
import { startOperator, type CtopoProcess } from '../../support/operator-process.js';
import { Atom, MigrationWorld, type MigrationNode, type Term } from '../../support/migration-nodes.js';
import { waitFor } from '../../support/wait.js';
import { operatorNamespace } from '../../support/world.js';

/**
 * Moving a running cluster from libcluster's Kubernetes strategy to cluster-topology and back,
 * one pod at a time, on real BEAM nodes, a real API server and the real operator — the steps
 * docs/migrating-from-libcluster.md describes, in the same order.
 *
 * libcluster cannot be installed here, so a stand-in (test/fixtures/libcluster) forms the
 * cluster the way its Kubernetes strategy does: it lists pods by selector and dials
 * `<basename>@<pod IP>` (NETZlive's fork: `<pod name>@<pod IP>`). Each pod is a BEAM node on its
 * own loopback address. A rolling update is: the new pod starts (a new name and IP) and joins;
 * then the old pod's node stops and its pod goes. Every node samples nodes() each second and
 * reports every nodedown: no node may ever miss a node that is still running.
 */

/** A scenario rolls three pods forward and back: minutes on a loaded 2-core machine. */
const SCENARIO_MS = 480_000;

const SEED_HOST_EXPRESSION = "$.spec.containers[?(@.name >= '0')].env[?(@.name == 'EXTERNAL_DNS')].value";

/** The BEAM client's timings shortened for a test (its defaults are seconds to minutes). */
const FAST = {
  backoff_min_ms: 100,
  backoff_max_ms: 1000,
  retry_ms: 500,
  reconnect_delay_ms: 100,
  watch_timeout_s: 5,
  request_timeout_ms: 5000,
  connect_timeout_ms: 3000,
};

describe('migrating from libcluster, one pod at a time, and back', () => {
  let s: ControlPlaneState;
  let ns: string;
  let op: CtopoProcess;
  let world: MigrationWorld;
  let tokenFile: string;

  beforeAll(async () => {
    let opKubeconfig: string;
    ({ s, ns, kubeconfig: opKubeconfig } = await operatorNamespace('migrate'));
    world = await MigrationWorld.start({ 'web.mig.test': '127.0.0.61' });
    // The application's service account: libcluster needs to list pods; the BEAM client needs
    // get/watch on its ClusterTopology and its Lease. During the migration it has both.
    const token = await serviceAccountToken(s, ns, 'app');
    tokenFile = join(world.root, 'token');
    await writeFile(tokenFile, token);
    const rules = [
      { apiGroups: [''], resources: ['pods'], verbs: ['list'] },
      { apiGroups: ['cluster.netzlive.io'], resources: ['clustertopologies'], verbs: ['get', 'watch'] },
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'watch'] },
    ];
    const docs = [
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'Role',
        metadata: { name: 'app', namespace: ns },
        rules,
      },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        metadata: { name: 'app', namespace: ns },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'app' },
        subjects: [{ kind: 'ServiceAccount', name: 'app', namespace: ns }],
      },
    ];
    await kubectlOk(s, ['apply', '-f', '-'], { input: docs.map((d) => JSON.stringify(d)).join('\n') });
    op = startOperator(opKubeconfig, ['--namespaces', ns, '--no-leader-elect']);
  });

  afterAll(async () => {
    await world?.stopAll();
    await op?.stop();
  });
  // A failed scenario leaves no node behind to spoil the next one.
  afterEach(async () => {
    await world?.stopAll();
  });

  const standinConf = (selector: string, mode: 'basename' | 'podname'): Record<string, Term> => ({
    api_url: s.server,
    token_file: tokenFile,
    ca_file: s.pki.caCert,
    namespace: ns,
    selector,
    mode: new Atom(mode),
    basename: 'app',
    polling_ms: 1000,
  });
  const clientConf = (topology: string, pod: string): Record<string, Term> => ({
    api_url: s.server,
    token_file: tokenFile,
    ca_file: s.pki.caCert,
    namespace: ns,
    name: topology,
    pod_name: pod,
    service_account_dir: world.root,
    ...FAST,
  });

  /** A pod as its controller makes it, running and ready at `ip`. */
  const addPod = async (pod: string, label: string, ip: string, env?: Record<string, string>) => {
    await createPod(s, ns, pod, {
      labels: { app: label },
      nodeName: 'node-a',
      ...(env
        ? {
            env: Object.entries(env).map(([name, value]) => ({ name, value })),
            annotations: { 'netzlive/hostname-naming-jsonpath': SEED_HOST_EXPRESSION },
          }
        : {}),
    });
    await setPodStatus(s, ns, pod, { ip, ready: true });
  };

  /** Waits until every running node sees every other running node; marks them joined. */
  const meshed = async (what: string) => {
    try {
      await waitFor(
        `${what}: every running node sees all the others`,
        () => {
          const run = world.running();
          return run.every((x) => {
            const want = run.filter((y) => y !== x).map((y) => y.name);
            return want.every((w) => x.latest.includes(w));
          });
        },
        60_000,
        200,
      );
    } catch (e) {
      const seen = world.running().map((n) => `${n.name} (${n.kind}) sees ${JSON.stringify(n.latest)}`);
      const logs = world
        .running()
        .filter((n) => n.kind === 'ctopo' || n.latest.length === 0)
        .map((n) => {
          const notes = n.output.split('\n').filter((l) => !l.startsWith('{"t":"nodes"'));
          return `--- ${n.name}\n${notes.join('\n').slice(-3000)}`;
        });
      throw new Error(`${(e as Error).message}\n${seen.join('\n')}\n${logs.join('\n')}`, { cause: e });
    }
    const now = Date.now();
    for (const n of world.running()) n.joinedAt ??= now;
  };

  /**
   * Waits until every running node has reported `n` samples of nodes() taken after `mark` (each
   * node samples once a second; clients and stand-ins poll as often): a window of several polls
   * counted, not slept.
   */
  const samplesAfter = (mark: number, n: number, what: string) =>
    waitFor(
      what,
      () => world.running().every((x) => x.samples.filter((p) => p.at > mark).length >= n),
      60_000,
      200,
    );

  /** One step of a rolling update: the new pod's node joins, then the old one stops and goes. */
  const replace = async (
    old: { node: MigrationNode; pod: string },
    next: { pod: string; node: () => Promise<MigrationNode> },
    what: string,
  ) => {
    const node = await next.node();
    await meshed(`${what}: ${node.name} joined`);
    await old.node.stop();
    await deletePod(s, ns, old.pod);
    // Some polls with the old node gone, before the next step.
    await samplesAfter(Date.now(), 3, `${what}: 3 samples of every node after ${old.node.name} stopped`);
    return { node, pod: next.pod };
  };

  const noCutOffs = () => expect(world.cutOffs()).toEqual([]);

  it(
    'libcluster names <basename>@<ip>: three nodes move to the BEAM client with the same names, and back',
    async () => {
      if (!world.client) throw new Error('the BEAM client (clients/cluster_topology) is not in this tree');
      const label = 'mig-a';
      const selector = `app=${label}`;
      // 1. The cluster as it runs today: three pods, each node dialling the others as libcluster does.
      let members: { node: MigrationNode; pod: string }[] = [];
      for (const [i, pod] of ['a-1', 'a-2', 'a-3'].entries()) {
        const ip = `127.0.0.${11 + i}`;
        await addPod(pod, label, ip);
        members.push({
          pod,
          node: await world.startNode('app', ip, ip, 'standin', standinConf(selector, 'basename')),
        });
      }
      await meshed('libcluster cluster formed');

      // 2. The ClusterTopology, named as libcluster names the nodes (spec.naming.basename).
      //    It changes nothing yet: no node reads it. Its peers are exactly the nodes' own names.
      await applyTopology(s, ns, 'mig-a', { selector, pollingInterval: '1s', naming: { basename: 'app' } });
      await waitFor('the topology names the running nodes', async () => {
        const st = await topologyStatus(s, ns, 'mig-a');
        const names = (st?.peers ?? []).map((p) => p.nodeName).sort();
        return JSON.stringify(names) === JSON.stringify(members.map((m) => m.node.name).sort());
      });

      // 3. Roll the pods one at a time onto the BEAM client (libcluster off: topologies: []).
      for (const [i, m] of [...members].entries()) {
        const pod = `a-${i + 1}-ct`;
        const ip = `127.0.0.${21 + i}`;
        const moved = await replace(
          m,
          {
            pod,
            node: async () => {
              await addPod(pod, label, ip);
              return world.startNode('app', ip, ip, 'ctopo', clientConf('mig-a', pod));
            },
          },
          `to cluster-topology ${i + 1}/3`,
        );
        members = members.map((x) => (x === m ? moved : x));
      }
      // Only BEAM clients run now: the mesh must hold on its own for several polls.
      await samplesAfter(Date.now(), 4, 'all on cluster-topology: 4 more samples of every node');
      await meshed('all on cluster-topology');
      noCutOffs();

      // 4. Rollback: the same, back onto libcluster.
      for (const [i, m] of [...members].entries()) {
        const pod = `a-${i + 1}-lc`;
        const ip = `127.0.0.${31 + i}`;
        const moved = await replace(
          m,
          {
            pod,
            node: async () => {
              await addPod(pod, label, ip);
              return world.startNode('app', ip, ip, 'standin', standinConf(selector, 'basename'));
            },
          },
          `back to libcluster ${i + 1}/3`,
        );
        members = members.map((x) => (x === m ? moved : x));
      }
      await meshed('all back on libcluster');
      noCutOffs();
      // Every node sampled while it ran: the check above had something to check.
      for (const n of world.nodes) expect(n.samples.length).toBeGreaterThan(2);
      await Promise.all(members.map((m) => m.node.stop()));
    },
    SCENARIO_MS,
  );

  it(
    "NETZlive's fork names <pod>@<ip>: three nodes move with the default naming, and back",
    async () => {
      if (!world.client) throw new Error('the BEAM client (clients/cluster_topology) is not in this tree');
      const label = 'mig-b';
      const selector = `app=${label}`;
      let members: { node: MigrationNode; pod: string }[] = [];
      for (const [i, pod] of ['b-1', 'b-2', 'b-3'].entries()) {
        const ip = `127.0.0.${41 + i}`;
        await addPod(pod, label, ip);
        members.push({
          pod,
          node: await world.startNode(pod, ip, ip, 'standin', standinConf(selector, 'podname')),
        });
      }
      await meshed('fork cluster formed');
      await applyTopology(s, ns, 'mig-b', { selector, pollingInterval: '1s' });
      await waitFor('the topology names the running nodes', async () => {
        const st = await topologyStatus(s, ns, 'mig-b');
        const names = (st?.peers ?? []).map((p) => p.nodeName).sort();
        return JSON.stringify(names) === JSON.stringify(members.map((m) => m.node.name).sort());
      });
      const roll = async (suffix: string, base: number, kind: 'standin' | 'ctopo') => {
        for (const [i, m] of [...members].entries()) {
          const pod = `b-${i + 1}-${suffix}`;
          const ip = `127.0.0.${base + i}`;
          const moved = await replace(
            m,
            {
              pod,
              node: async () => {
                await addPod(pod, label, ip);
                return world.startNode(
                  pod,
                  ip,
                  ip,
                  kind,
                  kind === 'ctopo' ? clientConf('mig-b', pod) : standinConf(selector, 'podname'),
                );
              },
            },
            `${kind} ${i + 1}/3`,
          );
          members = members.map((x) => (x === m ? moved : x));
        }
      };
      await roll('ct', 51, 'ctopo');
      await samplesAfter(Date.now(), 4, 'all on cluster-topology: 4 more samples of every node');
      await meshed('all on cluster-topology');
      noCutOffs();
      await roll('lc', 71, 'standin');
      await meshed('all back on the fork');
      noCutOffs();
      await Promise.all(members.map((m) => m.node.stop()));
    },
    SCENARIO_MS,
  );

  it(
    'a single replica named <pod>@<EXTERNAL_DNS>: the BEAM client publishes and keeps the same name',
    async () => {
      if (!world.client) throw new Error('the BEAM client (clients/cluster_topology) is not in this tree');
      const label = 'mig-c';
      const ip = '127.0.0.61';
      const dns = 'web.mig.test';
      await applyTopology(s, ns, 'mig-c', { selector: `app=${label}`, pollingInterval: '1s' });
      // Before: the replica runs libcluster (it has no peers to dial) as web-0@web.mig.test.
      await addPod('c-web-0', label, ip, { EXTERNAL_DNS: dns });
      const before = await world.startNode(
        'c-web-0',
        dns,
        ip,
        'standin',
        standinConf(`app=${label}`, 'podname'),
      );
      const st = await waitFor('the topology names the replica', async () => {
        const x = await topologyStatus(s, ns, 'mig-c');
        return x?.peers?.length === 1 ? x : undefined;
      });
      expect(st.peers![0]!.nodeName).toBe(before.name);
      // After (Recreate: a single replica cannot run twice under one DNS name): the old node stops,
      // the new pod runs the BEAM client under its own pod name and the same DNS host.
      await before.stop();
      await deletePod(s, ns, 'c-web-0');
      await addPod('c-web-1', label, ip, { EXTERNAL_DNS: dns });
      const after = await world.startNode('c-web-1', dns, ip, 'ctopo', clientConf('mig-c', 'c-web-1'));
      await waitFor('the topology names the new replica', async () => {
        const x = await topologyStatus(s, ns, 'mig-c');
        return x?.peers?.length === 1 && x.peers[0]!.nodeName === after.name;
      });
      // A node that dials the published name reaches the replica: an observer running the client
      // on another address joins it.
      await addPod('c-observer', 'mig-c-obs', '127.0.0.62');
      await applyTopology(s, ns, 'mig-c-obs', {
        selector: `app in (${label},mig-c-obs)`,
        pollingInterval: '1s',
      });
      const observer = await world.startNode(
        'obs',
        '127.0.0.62',
        '127.0.0.62',
        'ctopo',
        clientConf('mig-c-obs', 'c-observer'),
      );
      await waitFor(
        'the observer reaches the replica by its DNS name',
        () => observer.latest.includes(after.name),
        60_000,
      );
      await Promise.all([after.stop(), observer.stop()]);
    },
    SCENARIO_MS,
  );
});
