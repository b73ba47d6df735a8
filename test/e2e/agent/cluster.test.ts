import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import type { ControlPlaneState } from '../../../dev/cluster/control-plane.js';
import { startApiserver, stopApiserver } from '../../../dev/cluster/control-plane.js';
import { installCrd, kubectlOk, kubeconfigForUser, privateCluster } from '../../support/cluster.js';
import {
  applyTopology,
  canI,
  createPod,
  deletePod,
  grantOperatorRbac,
  restorePods,
  revokePods,
  setPodStatus,
  topologyStatus,
  applyObjects,
  readerRbac,
} from '../../support/objects.js';
import { CtopoProcess, localAgentArgs, startOperator } from '../../support/operator-process.js';
import { ErlangTestEnv, type BeamNode } from '../../support/erlang.js';
import { waitFor } from '../../support/wait.js';
import { MeshWatch, type Mark } from '../../support/mesh-watch.js';

/**
 * The whole product on real things: a real API server, the real operator, one real agent per
 * real BEAM node. Assertions are made through the nodes themselves (`nodes()`).
 */

const NS = 'app';
const NAME_ANNOTATION = 'netzlive/nodename-naming-jsonpath';
const HOST_ANNOTATION = 'netzlive/hostname-naming-jsonpath';

describe('agents mesh real Erlang nodes from the operator’s status', () => {
  let s: ControlPlaneState;
  let stopCluster: () => Promise<void>;
  let erl: ErlangTestEnv;
  let watch: MeshWatch;
  let op: CtopoProcess;
  let opKubeconfig: string;
  let agentKubeconfig: string;
  const nodes = new Map<string, BeamNode>();
  const agents = new Map<string, CtopoProcess>();

  const full = (short: string) => `${short}@127.0.0.1`;
  const startAgent = (short: string, extra: string[] = []) => {
    const a = new CtopoProcess(
      [
        ...localAgentArgs({ kubeconfig: agentKubeconfig, namespace: NS, topology: 'web', pod: short }),
        '--connector',
        'erlang',
        '--cookie-file',
        erl.cookieFile,
        ...extra,
      ],
      { ERL_EPMD_PORT: String(erl.epmdPort) },
    );
    agents.set(short, a);
    return a;
  };
  const startMember = async (short: string) => {
    nodes.set(short, await erl.startNode(short));
    await createPod(s, NS, short);
    await setPodStatus(s, NS, short, { ip: '127.0.0.1', ready: true });
    const a = startAgent(short);
    await a.port();
    return a;
  };
  const meshOf = async (members: string[]) => {
    for (const m of members)
      await erl.waitForNodes(full(m), members.filter((x) => x !== m).map(full), 20_000);
  };
  const nodesOf = (short: string) => erl.nodesOf(full(short));
  /** The agent's SelfCheck… Events about pod `pod`, as the API server stores them. */
  const selfCheckEvents = async (pod: string) =>
    (
      JSON.parse(
        await kubectlOk(s, [
          '-n',
          NS,
          'get',
          'events',
          '--field-selector',
          `involvedObject.name=${pod}`,
          '-o',
          'json',
        ]),
      ) as {
        items: { type: string; reason: string; message: string; involvedObject: { kind: string } }[];
      }
    ).items.filter((e) => e.reason.startsWith('SelfCheck'));
  const disconnects = (ms: string[]) =>
    Promise.all(ms.map((m) => agents.get(m)!.metricSum('ctopo_agent_disconnects_total')));
  /** Every nodedown or sample without a peer, since `mark`, on each of `members`. */
  const lossesSince = async (mark: Mark, members: string[]) => {
    const out: string[] = [];
    for (const m of members)
      out.push(...(await watch.lossesSince(mark, full(m), members.filter((x) => x !== m).map(full))));
    return out;
  };
  /**
   * A window counted, not slept: from now until every member has `n` more samples of nodes() and,
   * with `rounds`, every agent named has run `n` more rounds (one every pollingInterval).
   */
  const hold = async (withAgents: string[], members: string[], n: number, o: { rounds: boolean }) => {
    const from = await watch.mark();
    const rounds = o.rounds
      ? await Promise.all(withAgents.map((m) => agents.get(m)!.metricSum('ctopo_agent_rounds_total')))
      : [];
    await waitFor(
      `${n} samples of ${members.join(', ')}${o.rounds ? ` and ${n} rounds of agents ${withAgents.join(', ')}` : ''}`,
      async () => {
        if (members.some((m) => watch.samplesSince(from, full(m)) < n)) return false;
        for (const [i, m] of (o.rounds ? withAgents : []).entries())
          if ((await agents.get(m)!.metricSum('ctopo_agent_rounds_total')) < rounds[i]! + n) return false;
        return true;
      },
      60_000,
      200,
    );
  };

  beforeAll(async () => {
    ({ state: s, stop: stopCluster } = await privateCluster());
    await installCrd(s);
    await kubectlOk(s, ['create', 'namespace', NS]);
    await grantOperatorRbac(s, { kind: 'User', name: 'operator' }, [NS], 'e2e');
    opKubeconfig = await kubeconfigForUser(s, 'operator');
    // The agent may read one ClusterTopology and nothing else.
    await applyObjects(
      s,
      readerRbac({
        namespace: NS,
        name: 'agent',
        topologies: ['web'],
        verbs: ['get', 'list', 'watch'],
        subject: { kind: 'User', name: 'agent' },
      }),
    );
    agentKubeconfig = await kubeconfigForUser(s, 'agent');
    await applyTopology(s, NS, 'web', {
      selector: 'netzlive/pod-type=cluster-service',
      pollingInterval: '1s',
    });
    op = startOperator(opKubeconfig, ['--namespaces', NS, '--no-leader-elect']);
    erl = await ErlangTestEnv.start();
    watch = await MeshWatch.create(erl, tmpdir());
  });
  afterAll(async () => {
    await watch?.stop();
    await CtopoProcess.stopAll();
    await erl?.stop();
    await stopCluster?.();
  });

  it('forms a full mesh once the pods have IPs, with an identity that may not read pods', async () => {
    // The agents' identity may read its one topology and not a single pod …
    expect(await canI(s, agentKubeconfig, ['get', 'clustertopologies/web', '-n', NS])).toBe(true);
    expect(await canI(s, agentKubeconfig, ['list', 'pods', '-n', NS])).toBe(false);
    expect(await canI(s, agentKubeconfig, ['get', 'pods/a', '-n', NS])).toBe(false);
    // … and with it they mesh the nodes and pass the self check (their own pod's name included).
    for (const m of ['a', 'b', 'c']) await startMember(m);
    await meshOf(['a', 'b', 'c']);
    for (const m of ['a', 'b', 'c'])
      await waitFor(
        `agent ${m} ready`,
        async () => (await agents.get(m)!.get('/readyz')).status === 200,
        20_000,
      );
    for (const m of ['a', 'b', 'c']) {
      expect(await agents.get(m)!.metric('ctopo_agent_self_check_ok')).toBe(1);
      expect(await agents.get(m)!.metric('ctopo_agent_trouble', { cause: 'Forbidden' })).toBe(0);
      // From here on every nodedown and a sample of nodes() each second are kept (mesh-watch.ts).
      await watch.watch(full(m));
    }
  });

  it('a new pod joins; a deleted pod is disconnected by every other node', async () => {
    await startMember('d');
    await meshOf(['a', 'b', 'c', 'd']);
    // An agent disconnects only the nodes it connected itself, and d's own agent may have reached
    // a, b and c first: each of their agents holds d before d leaves.
    for (const m of ['a', 'b', 'c'])
      await waitFor(
        `agent ${m} to hold b, c and d`,
        async () => (await agents.get(m)!.metric('ctopo_agent_connected_peers')) === 3,
        20_000,
      );
    // d's pod goes away; its node lingers (no kubelet kills it here), its agent stops.
    await agents.get('d')!.stop();
    await deletePod(s, NS, 'd');
    await waitFor(
      'a, b and c to drop d',
      async () => {
        const holding = [];
        for (const m of ['a', 'b', 'c']) if ((await nodesOf(m)).includes(full('d'))) holding.push(m);
        if (holding.length === 0) return true;
        // What a timeout shows: who still holds d, whether the status still lists it, and what
        // each agent did about it.
        const listed = (await topologyStatus(s, NS, 'web'))?.peers?.some((p) => p.pod === 'd');
        throw new Error(
          `${holding.join(', ')} still connected to d; d ${listed ? 'still' : 'no longer'} listed; ` +
            `disconnects by a, b, c: ${(await disconnects(['a', 'b', 'c'])).join(', ')}`,
        );
      },
      30_000,
    );
    // d still runs, and OTP's global connects a node back while any peer holds it; here d itself
    // connects to a: every agent disconnects it again while it is unlisted (and watched).
    const back = await erl.rpc(full('d'), `net_kernel connect_node ['${full('a')}']`);
    expect(back.stdout.trim()).toBe('true');
    await waitFor(
      'a, b and c to drop d again',
      async () => {
        for (const m of ['a', 'b', 'c']) if ((await nodesOf(m)).includes(full('d'))) return false;
        return true;
      },
      30_000,
    );
    await nodes.get('d')!.stop();
    await meshOf(['a', 'b', 'c']);
  });

  it('a node that cannot be reached is retried by every agent, and joins once it starts', async () => {
    await createPod(s, NS, 'e');
    await setPodStatus(s, NS, 'e', { ip: '127.0.0.1', ready: true });
    await waitFor(
      'e listed as a peer',
      async () => (await topologyStatus(s, NS, 'web'))?.peers?.some((p) => p.pod === 'e'),
      20_000,
    );
    for (const m of ['a', 'b', 'c'])
      await waitFor(
        `${m}'s connects to e failing`,
        async () => ((await agents.get(m)!.metricSum('ctopo_agent_failed_connects_total')) ?? 0) > 0,
        20_000,
      );
    // e starts later, with no agent of its own and without global's transitive connections
    // (-connect_all false): a, b and c each reach it only by retrying their own connect.
    nodes.set('e', await erl.startNode('e', { args: ['-connect_all', 'false'] }));
    await erl.waitForNodes(full('e'), ['a', 'b', 'c'].map(full), 30_000);
    for (const m of ['a', 'b', 'c']) expect(await nodesOf(m)).toContain(full('e'));
    await watch.watch(full('e'));
  });

  it('the operator stopped for several polling intervals: no disconnects at all; everything recovers', async () => {
    const members = ['a', 'b', 'c', 'e'];
    const before = await disconnects(['a', 'b', 'c']);
    const mark = await watch.mark();
    await op.stop();
    // Five rounds of every agent on the status the operator left, each node looked at as often.
    await hold(['a', 'b', 'c'], members, 5, { rounds: true });
    expect(await lossesSince(mark, members)).toEqual([]);
    expect(await disconnects(['a', 'b', 'c'])).toEqual(before);
    op = startOperator(opKubeconfig, ['--namespaces', NS, '--no-leader-elect']);
    await op.port();
    await meshOf(['a', 'b', 'c', 'e']);
  });

  it('the API server stopped for several polling intervals: no disconnects; trouble shown; everything recovers', async () => {
    const members = ['a', 'b', 'c', 'e'];
    const before = await disconnects(['a', 'b', 'c']);
    const mark = await watch.mark();
    await stopApiserver(s);
    for (const m of ['a', 'b', 'c'])
      await waitFor(
        `agent ${m} to report ApiUnreachable`,
        async () => (await agents.get(m)!.metric('ctopo_agent_trouble', { cause: 'ApiUnreachable' })) === 1,
        30_000,
      );
    // Trouble starts no round: the window is five looks at every node once all report it.
    await hold(['a', 'b', 'c'], members, 5, { rounds: false });
    expect(await lossesSince(mark, members)).toEqual([]);
    expect(await disconnects(['a', 'b', 'c'])).toEqual(before);
    for (const m of ['a', 'b', 'c']) expect((await agents.get(m)!.get('/healthz')).status).toBe(200);
    await startApiserver(s);
    await waitFor(
      'agent b out of trouble',
      async () => (await agents.get('b')!.metric('ctopo_agent_trouble', { cause: 'ApiUnreachable' })) === 0,
      60_000,
    );
    await createPod(s, NS, 'f');
    await setPodStatus(s, NS, 'f', { ip: '127.0.0.1', ready: true });
    nodes.set('f', await erl.startNode('f'));
    startAgent('f');
    await meshOf(['a', 'b', 'c', 'e', 'f']);
  });

  it('onForbidden: Retain keeps everyone connected when the operator loses list pods', async () => {
    const members = ['a', 'b', 'c', 'e', 'f'];
    await watch.watch(full('f'));
    const peersBefore = (await topologyStatus(s, NS, 'web'))?.peers?.map((p) => p.uid).sort();
    expect(peersBefore).toHaveLength(members.length);
    const mark = await watch.mark();
    await revokePods(s, NS, 'e2e');
    await waitFor(
      'RBAC applied',
      async () => !(await canI(s, opKubeconfig, ['list', 'pods', '-n', NS])),
      20_000,
    );
    await waitFor(
      'status shows 403',
      async () => (await topologyStatus(s, NS, 'web'))?.lastResponse?.code === '403',
      20_000,
    );
    // Three rounds of every agent on the status that says 403.
    await hold(['a', 'b', 'c', 'f'], members, 3, { rounds: true });
    // The operator kept the peers (same members, by uid), and no node lost a peer at any moment:
    // every nodedown is heard on the node itself, and nodes() was looked at once a second.
    expect((await topologyStatus(s, NS, 'web'))?.peers?.map((p) => p.uid).sort()).toEqual(peersBefore);
    expect(await lossesSince(mark, members)).toEqual([]);
    for (const m of members) expect((await nodesOf(m)).length).toBe(4);
  });

  it('onForbidden: Disconnect empties the list, and every agent disconnects everyone; permission back → mesh again', async () => {
    await kubectlOk(s, [
      '-n',
      NS,
      'patch',
      'ctopo',
      'web',
      '--type=merge',
      '-p',
      '{"spec":{"onForbidden":"Disconnect"}}',
    ]);
    await waitFor('no peers', async () => (await topologyStatus(s, NS, 'web'))?.peerCount === 0, 20_000);
    await waitFor(
      'every node alone',
      async () => {
        for (const m of ['a', 'b', 'c', 'e', 'f']) if ((await nodesOf(m)).length) return false;
        return true;
      },
      30_000,
    );
    await restorePods(s, NS, 'e2e', { kind: 'User', name: 'operator' });
    await meshOf(['a', 'b', 'c', 'e', 'f']);
    await kubectlOk(s, [
      '-n',
      NS,
      'patch',
      'ctopo',
      'web',
      '--type=merge',
      '-p',
      '{"spec":{"onForbidden":"Retain"}}',
    ]);
  });

  it('a name mismatch (annotation computes a name the node does not have) fails the self check loudly', async () => {
    await createPod(s, NS, 'g', {
      labels: { 'netzlive/pod-type': 'cluster-service', erl: 'gee' },
      annotations: { [NAME_ANNOTATION]: '$.metadata.labels.erl' },
    });
    await setPodStatus(s, NS, 'g', { ip: '127.0.0.1', ready: true });
    nodes.set('g', await erl.startNode('g'));
    const g = startAgent('g');
    const ready = await waitFor(
      'g not ready',
      async () => {
        const r = await g.get('/readyz');
        return r.status === 503 && r.body.includes('self check') ? r : undefined;
      },
      30_000,
    );
    expect(ready.body).toContain('gee@127.0.0.1');
    expect(ready.body).toContain('g@127.0.0.1');
    expect(await g.metric('ctopo_agent_self_check_ok')).toBe(0);
    await waitFor(
      'an error log each round',
      () => (g.output.match(/self check failed/g) ?? []).length >= 2,
      20_000,
    );
    // Without create on events (this agent's Role has none) the Event is dropped and the work goes
    // on: rounds keep running …
    const rounds = await g.metricSum('ctopo_agent_rounds_total');
    await waitFor(
      'two more rounds',
      async () => (await g.metricSum('ctopo_agent_rounds_total')) >= rounds + 2,
      20_000,
    );
    expect(await selfCheckEvents('g')).toEqual([]);
    // … and with it, the agent posts a Warning about its own pod (a new agent: its Event for the
    // reason is not held back by the one just dropped).
    await applyObjects(s, [
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'Role',
        metadata: { name: 'agent-events', namespace: NS },
        rules: [{ apiGroups: [''], resources: ['events'], verbs: ['create'] }],
      },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        metadata: { name: 'agent-events', namespace: NS },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'agent-events' },
        subjects: [{ kind: 'User', name: 'agent', apiGroup: 'rbac.authorization.k8s.io' }],
      },
    ]);
    await waitFor('events allowed', () => canI(s, agentKubeconfig, ['create', 'events', '-n', NS]), 20_000);
    await g.stop();
    const g2 = startAgent('g');
    const posted = await waitFor(
      'the SelfCheck event',
      async () => {
        const e = await selfCheckEvents('g');
        return e.length > 0 ? e : undefined;
      },
      30_000,
    );
    expect(posted.map((e) => [e.type, e.reason, e.involvedObject.kind])).toEqual([
      ['Warning', 'SelfCheckNameMismatch', 'Pod'],
    ]);
    expect(posted[0]!.message).toContain('gee@127.0.0.1');
    expect(posted[0]!.message).toContain('g@127.0.0.1');
    await g2.stop();
  });

  // That no shell ever sees a name is proven where a shell could: exec-connector.test.ts and
  // connectors/erlang.test.ts. Here: such a name never reaches an agent at all.
  it('hostile annotation-derived names are excluded by the operator: no agent is handed them', async () => {
    await createPod(s, NS, 'evil', {
      annotations: { [HOST_ANNOTATION]: "$.spec.containers[?(@.name == 'app')].env[?(@.name == 'H')].value" },
      env: [{ name: 'H', value: 'x$(touch /tmp/x);touch /tmp/x' }],
    });
    await setPodStatus(s, NS, 'evil', { ip: '127.0.0.1', ready: true });
    // Judged once the operator has seen the pod's IP (before that it is excluded as NoPodIP).
    const st = await waitFor(
      'evil judged with its IP',
      async () => {
        const x = await topologyStatus(s, NS, 'web');
        const judged =
          x?.peers?.some((p) => p.pod === 'evil') ||
          x?.excluded?.some((e) => e.pod === 'evil' && e.reason !== 'NoPodIP');
        return judged ? x : undefined;
      },
      20_000,
    );
    expect(st.excluded!.find((e) => e.pod === 'evil')!.reason).toBe('InvalidNodeName');
    expect(st.peers!.filter((p) => p.pod === 'evil' || p.nodeName.includes('$'))).toEqual([]);
  });

  it('the file connector writes the peer list atomically for other runtimes', async () => {
    const path = join(tmpdir(), `ctopo-peers-${process.pid}.txt`);
    const a = new CtopoProcess([
      'agent',
      '--kubeconfig',
      agentKubeconfig,
      '--namespace',
      NS,
      '--topology',
      'web',
      '--connector',
      'file',
      '--file-path',
      path,
      '--pod-name',
      'a',
      '--node-name',
      full('a'),
      '--http-host',
      '127.0.0.1',
      '--http-port',
      '0',
    ]);
    const lines = await waitFor(
      'the peer file',
      async () => {
        const text = await readFile(path, 'utf8').catch(() => '');
        const l = text.split('\n').filter(Boolean);
        return l.length >= 5 ? l : undefined;
      },
      20_000,
    );
    expect(lines).toEqual(
      expect.arrayContaining(['b@127.0.0.1', 'c@127.0.0.1', 'e@127.0.0.1', 'f@127.0.0.1']),
    );
    expect(lines).not.toContain('a@127.0.0.1');
    await a.stop();
  });
});
