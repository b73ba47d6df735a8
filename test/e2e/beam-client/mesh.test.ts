import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ControlPlaneState } from '../../../dev/cluster/control-plane.js';
import { startApiserver, stopApiserver } from '../../../dev/cluster/control-plane.js';
import { mintClient } from '../../../dev/cluster/pki.js';
import { installCrd, kubectl, kubectlOk, kubeconfigForUser, privateCluster } from '../../support/cluster.js';
import {
  applyTopology,
  canIAnswer,
  createPod,
  deletePod,
  grantOperatorRbac,
  serviceAccountToken,
  setPodStatus,
  topologyStatus,
  applyObjects,
  readerRbac,
  type RbacSubject,
} from '../../support/objects.js';
import { CtopoProcess, startOperator } from '../../support/operator-process.js';
import { ErlangTestEnv } from '../../support/erlang.js';
import { buildClient, FAST_CLIENT, ProbeNode } from '../../support/beam-client.js';
import { distTlsOptfile } from '../../support/dist-tls.js';
import { sleep, waitFor } from '../../support/wait.js';

/**
 * The BEAM client library on real things: a real API server, the real operator, real BEAM nodes
 * running the library in their own supervision tree — no sidecar, no erl_call. What each node
 * sees is sampled inside it (`nodes()` every second, every nodedown), so a connection lost and
 * made again between two samples still shows.
 */

const NS = 'app';
const NAME_ANNOTATION = 'netzlive/nodename-naming-jsonpath';

/** What the library needs: get and watch on its one ClusterTopology and its Lease. */
const BEAM_SA: RbacSubject = { kind: 'ServiceAccount', name: 'beam', namespace: NS };
const readerOf = (name: string, topology: string, subject: RbacSubject) =>
  readerRbac({ namespace: NS, name, topologies: [topology], verbs: ['get', 'watch'], leases: true, subject });

describe('the BEAM client meshes real nodes from the operator’s status, inside the VM', () => {
  let s: ControlPlaneState;
  let stopCluster: () => Promise<void>;
  let erl: ErlangTestEnv;
  let ebin: string;
  let op: CtopoProcess;
  let opKubeconfig: string;
  let saDir: string;
  let token: string;
  const nodes = new Map<string, ProbeNode>();
  const full = (short: string) => `${short}@127.0.0.1`;

  /** A service-account mount as a pod has it (token, ca.crt, namespace), with the API's env. */
  const inPod = (dir: string) => ({
    client: { name: 'web', service_account_dir: dir, ...FAST_CLIENT },
    env: { KUBERNETES_SERVICE_HOST: '127.0.0.1', KUBERNETES_SERVICE_PORT: String(s.apiserver.port) },
  });
  const startNode = async (short: string, dir = saDir) => {
    const p = await ProbeNode.start(erl, ebin, short, { ...inPod(dir), hostname: short });
    nodes.set(short, p);
    return p;
  };
  const addPod = async (short: string, o: Parameters<typeof createPod>[3] = {}) => {
    await createPod(s, NS, short, o);
    await setPodStatus(s, NS, short, { ip: '127.0.0.1', ready: true });
  };
  const meshOf = async (members: string[], timeoutMs = 30_000) => {
    for (const m of members)
      await nodes.get(m)!.waitForNodes(members.filter((x) => x !== m).map(full), timeoutMs);
  };
  /** Every sample since `t` on every member shows the full mesh, and no member saw a nodedown. */
  const nothingLost = (members: string[], t: number) => {
    for (const m of members) {
      const p = nodes.get(m)!;
      const want = members
        .filter((x) => x !== m)
        .map(full)
        .sort()
        .join(',');
      const samples = p.samplesSince(t);
      expect(samples.length).toBeGreaterThan(2);
      expect(samples.filter((x) => x.join(',') !== want)).toEqual([]);
      expect(p.nodedownsSince(t)).toEqual([]);
    }
  };
  const lease = (renewTime: Date, seconds: number) => ({
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: {
      name: 'clustertopology.web',
      namespace: NS,
      labels: { 'cluster.netzlive.io/topology': 'web' },
    },
    spec: {
      holderIdentity: 'test',
      renewTime: renewTime.toISOString().replace('Z', '000Z'),
      leaseDurationSeconds: seconds,
    },
  });

  beforeAll(async () => {
    ({ state: s, stop: stopCluster } = await privateCluster());
    [erl, ebin] = await Promise.all([ErlangTestEnv.start(), buildClient()]);
    await installCrd(s);
    await kubectlOk(s, ['create', 'namespace', NS]);
    await grantOperatorRbac(s, { kind: 'User', name: 'operator' }, [NS], 'e2e');
    opKubeconfig = await kubeconfigForUser(s, 'operator');
    // The client may get/watch its one ClusterTopology and its one Lease, nothing else.
    await applyObjects(s, readerOf('beam-reader', 'web', BEAM_SA));
    token = await serviceAccountToken(s, NS, 'beam');
    saDir = join(erl.root, 'sa');
    await mkdir(saDir);
    await writeFile(join(saDir, 'token'), token);
    await writeFile(
      join(saDir, 'ca.crt'),
      await import('node:fs/promises').then((f) => f.readFile(s.pki.caCert)),
    );
    await writeFile(join(saDir, 'namespace'), NS);
    await applyTopology(s, NS, 'web', {
      selector: 'netzlive/pod-type=cluster-service',
      pollingInterval: '1s',
    });
    op = startOperator(opKubeconfig, ['--namespaces', NS, '--no-leader-elect']);
  });
  afterAll(async () => {
    await ProbeNode.stopAll();
    await CtopoProcess.stopAll();
    await erl?.stop();
    await stopCluster?.();
  });

  it('forms a full mesh with an identity that may not read pods; each client reports its peers, a passing self check and no trouble', async () => {
    // The clients' identity may get its topology and nothing of the pods …
    const beamMay = async (...args: string[]) =>
      canIAnswer(
        args,
        await kubectl(s, ['auth', 'can-i', ...args, '-n', NS, '--as', `system:serviceaccount:${NS}:beam`]),
      );
    expect(await beamMay('get', 'clustertopologies/web')).toBe(true);
    expect(await beamMay('list', 'pods')).toBe(false);
    expect(await beamMay('get', 'pods/a')).toBe(false);
    // … and with it the clients mesh the nodes.
    for (const m of ['a', 'b', 'c']) await addPod(m);
    for (const m of ['a', 'b', 'c']) await startNode(m);
    await meshOf(['a', 'b', 'c']);
    const st = await nodes.get('a')!.state();
    expect(st.self).toBe(full('a'));
    expect(st.peers.map((p) => p.node).sort()).toEqual(['a', 'b', 'c'].map(full));
    expect(st.peers.filter((p) => p.node !== full('a')).every((p) => p.connected)).toBe(true);
    expect(st.self_check.ok).toBe(true);
    expect(st.trouble).toBeNull();
    // ready is carried as the operator gives it: every pod here is Ready.
    expect(st.peers.map((p) => p.ready)).toEqual([true, true, true]);
    // Liveness comes from the operator's Lease, which the running operator renews.
    const live = await waitFor('a to find the operator live', async () => {
      const x = await nodes.get('a')!.state();
      return x.liveness.value === 'live' ? x.liveness : undefined;
    });
    expect(live.reason).toBeTruthy();
  });

  it('a pod added joins; a pod deleted is disconnected by every other node', async () => {
    await addPod('d');
    await startNode('d');
    await meshOf(['a', 'b', 'c', 'd']);
    // A client disconnects only the nodes it connected itself, and d's own client may have reached
    // a, b and c first: each of their clients holds d before d leaves.
    for (const m of ['a', 'b', 'c'])
      await waitFor(
        `${m}'s client to hold d`,
        async () => (await nodes.get(m)!.state()).remembered.includes(full('d')),
        20_000,
      );
    // d's pod goes away; its node lingers (no kubelet here), its client stops.
    await nodes.get('d')!.stopClient();
    await deletePod(s, NS, 'd');
    await waitFor(
      'a, b and c to drop d',
      () => ['a', 'b', 'c'].every((m) => !nodes.get(m)!.lastNodes().includes(full('d'))),
      30_000,
    );
    await nodes.get('d')!.stop();
    await meshOf(['a', 'b', 'c']);
    const round = nodes
      .get('a')!
      .eventsSince(0, 'round')
      .find((e) => (e.disconnected as string[]).includes(full('d')));
    expect(round).toBeDefined();
  });

  it('the operator stopped past the staleness limit: stale reported, no connection lost', async () => {
    await op.stop();
    // The operator's Lease as it is once the operator has been silent past its limit.
    await applyObjects(s, [lease(new Date(Date.now() - 120_000), 93)]);
    const t = Date.now();
    await waitFor(
      'a to report the operator stale',
      async () => (await nodes.get('a')!.state()).liveness.value === 'stale',
      20_000,
    );
    await sleep(4_000);
    nothingLost(['a', 'b', 'c'], t);
    // A Lease renewed a moment ago: live again.
    await applyObjects(s, [lease(new Date(), 93)]);
    await waitFor(
      'a to report the operator live',
      async () => (await nodes.get('a')!.state()).liveness.value === 'live',
      20_000,
    );
    op = startOperator(opKubeconfig, ['--namespaces', NS, '--no-leader-elect']);
    await op.port();
  });

  it('the API server stopped: trouble reported, no connection lost; recovery afterwards', async () => {
    const t = Date.now();
    await stopApiserver(s);
    await waitFor(
      'b to report the API unreachable',
      async () => (await nodes.get('b')!.state()).trouble?.cause === 'api_unreachable',
      30_000,
    );
    await sleep(4_000);
    nothingLost(['a', 'b', 'c'], t);
    await startApiserver(s);
    await waitFor('b out of trouble', async () => (await nodes.get('b')!.state()).trouble === null, 60_000);
    await addPod('e');
    await startNode('e');
    await meshOf(['a', 'b', 'c', 'e']);
  });

  it('the client loses its RoleBinding (a real 403): trouble reported, no connection lost', async () => {
    const t = Date.now();
    await kubectlOk(s, ['-n', NS, 'delete', 'rolebinding', 'beam-reader']);
    await waitFor(
      'c to report forbidden',
      async () => (await nodes.get('c')!.state()).trouble?.cause === 'forbidden',
      30_000,
    );
    expect((await nodes.get('c')!.state()).trouble!.detail).toContain('403');
    await sleep(3_000);
    nothingLost(['a', 'b', 'c', 'e'], t);
    await applyObjects(s, [readerOf('beam-reader', 'web', BEAM_SA)[1]]);
    await waitFor('c out of trouble', async () => (await nodes.get('c')!.state()).trouble === null, 30_000);
  });

  it('the object deleted: trouble reported, no connection lost; created again, followed again', async () => {
    const t = Date.now();
    await kubectlOk(s, ['-n', NS, 'delete', 'ctopo', 'web']);
    await waitFor(
      'a to report the object gone',
      async () => (await nodes.get('a')!.state()).trouble?.cause === 'object_gone',
      30_000,
    );
    await sleep(3_000);
    nothingLost(['a', 'b', 'c', 'e'], t);
    await applyTopology(s, NS, 'web', {
      selector: 'netzlive/pod-type=cluster-service',
      pollingInterval: '1s',
    });
    await waitFor('a out of trouble', async () => (await nodes.get('a')!.state()).trouble === null, 30_000);
    await meshOf(['a', 'b', 'c', 'e']);
  });

  it('a name mismatch (the operator computes a name the node does not have) is reported', async () => {
    await addPod('g', {
      labels: { 'netzlive/pod-type': 'cluster-service', erl: 'gee' },
      annotations: { [NAME_ANNOTATION]: '$.metadata.labels.erl' },
    });
    const g = await startNode('g');
    const st = await waitFor(
      'g to report the mismatch',
      async () => {
        const x = await g.state();
        return x.self_check.ok === false ? x : undefined;
      },
      30_000,
    );
    expect(st.self_check.computed).toBe(full('gee'));
    expect(st.self_check.node).toBe(full('g'));
    expect(st.self_check.problem).toContain('gee@127.0.0.1');
    expect(g.output).toContain('self check failed');
    await g.stop();
    await deletePod(s, NS, 'g');
  });

  it('a rotated service-account token is read again: a client that starts with a bad one recovers', async () => {
    const dir = join(erl.root, 'sa-h');
    await mkdir(dir);
    await writeFile(join(dir, 'token'), 'not-a-token');
    await writeFile(
      join(dir, 'ca.crt'),
      await import('node:fs/promises').then((f) => f.readFile(s.pki.caCert)),
    );
    await writeFile(join(dir, 'namespace'), NS);
    const h = await startNode('h', dir);
    await waitFor('h to report 401', async () => (await h.state()).trouble?.cause === 'unauthorized', 30_000);
    expect((await h.state()).status.seen).toBe(false);
    // As the kubelet does it: a new file swapped in.
    await writeFile(join(dir, 'token.new'), token);
    await rename(join(dir, 'token.new'), join(dir, 'token'));
    await waitFor('h to read its topology', async () => (await h.state()).status.seen, 30_000);
    expect((await h.state()).trouble).toBeNull();
    await addPod('h');
    await meshOf(['a', 'b', 'c', 'e', 'h']);
    expect((await h.state()).self_check.ok).toBe(true);
  });

  it('TLS distribution (-proto_dist inet_tls): nodes the sidecar cannot drive mesh through the client', async () => {
    // Certificates made here: a CA, and a node certificate it signs for 127.0.0.1 (IP and DNS SAN).
    const optfile = await distTlsOptfile(join(erl.root, 'dist-pki'), '127.0.0.1');

    // A second topology for the TLS nodes; their client authenticates with a client certificate.
    await applyTopology(s, NS, 'tls', { selector: 'netzlive/pod-type=tls-service', pollingInterval: '1s' });
    const creds = await mintClient(s.pki, 'user-beam-tls', 'beam-tls', []);
    await applyObjects(s, readerOf('beam-tls', 'tls', { kind: 'User', name: 'beam-tls' }));
    const members = ['t1', 't2', 't3'];
    // The nodes start first (in parallel), then their pods are listed.
    const started = members.map((m) =>
      ProbeNode.start(erl, ebin, m, {
        client: {
          name: 'tls',
          namespace: NS,
          api_url: s.server,
          ca_file: s.pki.caCert,
          cert_file: creds.cert,
          key_file: creds.key,
          ...FAST_CLIENT,
        },
        hostname: m,
        erlArgs: ['-proto_dist', 'inet_tls', '-ssl_dist_optfile', optfile],
      }),
    );
    for (const [i, p] of (await Promise.all(started)).entries()) nodes.set(members[i]!, p);
    for (const m of members) await addPod(m, { labels: { 'netzlive/pod-type': 'tls-service' } });
    await meshOf(members).catch((e: Error) => {
      throw new Error(`${e.message}\n${nodes.get('t1')!.output.slice(0, 3000)}`);
    });
    const st = await nodes.get('t1')!.state();
    expect(st.self_check.ok).toBe(true);
    // Not one of the plain-TCP nodes got in, nor did a TLS node reach them.
    expect(
      nodes
        .get('a')!
        .lastNodes()
        .some((n) => n.startsWith('t')),
    ).toBe(false);
    expect((await topologyStatus(s, NS, 'tls'))?.peers?.length).toBe(3);
  }, 300_000);
});
