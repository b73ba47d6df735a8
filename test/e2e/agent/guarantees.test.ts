import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ControlPlaneState } from '../../../dev/cluster/control-plane.js';
import { installCrd, kubectl, kubectlOk, kubeconfigForUser, privateCluster } from '../../support/cluster.js';
import {
  applyTopology,
  createPod,
  deletePod,
  grantOperatorRbac,
  setPodStatus,
  applyObjects,
  readerRbac,
} from '../../support/objects.js';
import { CtopoProcess, localAgentArgs, startOperator } from '../../support/operator-process.js';
import { ErlangTestEnv, type BeamNode } from '../../support/erlang.js';
import { waitFor } from '../../support/wait.js';
import { writeAppHook } from '../../support/app-hook.js';
import { MeshWatch, type Mark } from '../../support/mesh-watch.js';

/**
 * Every promise of the agent, on real things: a real API server and operator, real BEAM nodes,
 * real `ctopo agent` processes. What the nodes hold is watched all along (nodes() once a second
 * and every nodedown heard on the node itself, see mesh-watch.ts), so a disconnect that was
 * repaired before the next look still fails the test.
 */

const NS = 'app';
const WEB = ['a', 'b', 'c'];
const NO_MESHING = ['-connect_all', 'false']; // global does not connect this node transitively

describe('the agent keeps its promises with real BEAM nodes', () => {
  let s: ControlPlaneState;
  let stopCluster: () => Promise<void>;
  let erl: ErlangTestEnv;
  let watch: MeshWatch;
  let op: CtopoProcess;
  let opKubeconfig: string;
  let agentKubeconfig: string;
  let work: string;
  let hook: string;
  const nodes = new Map<string, BeamNode>();
  const agents = new Map<string, CtopoProcess>();
  const full = (short: string) => `${short}@127.0.0.1`;
  const peersOf = (m: string) => WEB.filter((x) => x !== m).map(full);

  const agentArgs = (short: string, topology: string) =>
    localAgentArgs({ kubeconfig: agentKubeconfig, namespace: NS, topology, pod: short });
  const startErlangAgent = (short: string, topology = 'web', extra: string[] = []) => {
    const a = new CtopoProcess(
      [
        ...agentArgs(short, topology),
        '--connector',
        'erlang',
        '--cookie-file',
        erl.cookieFile,
        '--state-file',
        join(work, `${short}.state.json`),
        ...extra,
      ],
      { ERL_EPMD_PORT: String(erl.epmdPort) },
    );
    agents.set(short, a);
    return a;
  };
  const startExecAgent = (short: string, topology: string, extra: string[]) => {
    const a = new CtopoProcess(
      [...agentArgs(short, topology), '--connector', 'exec', '--exec-program', hook, ...extra],
      { ERL_EPMD_PORT: String(erl.epmdPort), HOME: erl.home, LOCAL_NODE: full(short) },
    );
    agents.set(short, a);
    return a;
  };
  const addPod = async (short: string, type = 'cluster-service') => {
    await createPod(s, NS, short, { labels: { 'netzlive/pod-type': type } });
    await setPodStatus(s, NS, short, { ip: '127.0.0.1', ready: true });
  };
  const nodesOf = (short: string) => erl.nodesOf(full(short));
  const trouble = (short: string, cause: string) =>
    agents.get(short)!.metric('ctopo_agent_trouble', { cause });
  const everyAgentIn = async (cause: string, value: number) => {
    for (const m of WEB)
      await waitFor(
        `agent ${m}: trouble ${cause} = ${value}`,
        async () => (await trouble(m, cause)) === value,
        60_000,
      );
  };
  const noLosses = async (mark: Mark) => {
    // The window must have been watched for a few samples before "nothing lost" means anything.
    for (const m of WEB)
      await waitFor(`3 samples of ${m} since the mark`, () => watch.samplesSince(mark, full(m)) >= 3, 30_000);
    const losses: string[] = [];
    for (const m of WEB) losses.push(...(await watch.lossesSince(mark, full(m), peersOf(m))));
    expect(losses).toEqual([]);
    for (const m of WEB) expect(watch.samplesSince(mark, full(m))).toBeGreaterThanOrEqual(3);
  };
  /** A window counted, not slept: from now until every node has `n` more samples of nodes(). */
  const holdSamples = async (n: number) => {
    const from = await watch.mark();
    for (const m of WEB)
      await waitFor(`${n} samples of ${m}`, () => watch.samplesSince(from, full(m)) >= n, 30_000);
  };
  const agentRbac = () =>
    readerRbac({
      namespace: NS,
      name: 'agent',
      topologies: ['web', 'solo'],
      verbs: ['get', 'list', 'watch'],
      leases: true,
      subject: { kind: 'User', name: 'agent' },
    });

  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'ctopo-guarantees-'));
    hook = join(work, 'app-hook.sh');
    // An application's hook for the exec connector: drives its local node with erl_call.
    await writeAppHook(hook, { list: true });
    ({ state: s, stop: stopCluster } = await privateCluster());
    await installCrd(s);
    await kubectlOk(s, ['create', 'namespace', NS]);
    await grantOperatorRbac(s, { kind: 'User', name: 'operator' }, [NS], 'e2e');
    opKubeconfig = await kubeconfigForUser(s, 'operator');
    await applyObjects(s, agentRbac());
    agentKubeconfig = await kubeconfigForUser(s, 'agent');
    await applyTopology(s, NS, 'web', {
      selector: 'netzlive/pod-type=cluster-service',
      pollingInterval: '1s',
    });
    await applyTopology(s, NS, 'solo', { selector: 'netzlive/pod-type=solo', pollingInterval: '1s' });
    op = startOperator(opKubeconfig, ['--namespaces', NS, '--no-leader-elect']);
    erl = await ErlangTestEnv.start();
    watch = await MeshWatch.create(erl, work);
  });
  afterAll(async () => {
    await watch?.stop();
    await CtopoProcess.stopAll();
    await erl?.stop();
    await stopCluster?.();
    if (work) await rm(work, { recursive: true, force: true });
  });

  it('three nodes mesh through their agents', async () => {
    for (const m of WEB) {
      nodes.set(m, await erl.startNode(m));
      await addPod(m);
      startErlangAgent(m);
    }
    for (const m of WEB) await erl.waitForNodes(full(m), peersOf(m), 30_000);
    for (const m of WEB) await watch.watch(full(m));
  });

  it("the agent's own 403 (its RoleBinding removed): trouble shown, no node ever loses a peer", async () => {
    const mark = await watch.mark();
    await kubectlOk(s, ['-n', NS, 'delete', 'rolebinding', 'agent']);
    await everyAgentIn('Forbidden', 1);
    await holdSamples(3);
    await noLosses(mark);
    await applyObjects(s, agentRbac());
    await everyAgentIn('Forbidden', 0);
    await noLosses(mark);
  });

  it('the ClusterTopology deleted: trouble shown, no node loses a peer; created again → back to normal', async () => {
    const mark = await watch.mark();
    await kubectlOk(s, ['-n', NS, 'delete', 'clustertopology', 'web']);
    await everyAgentIn('ObjectGone', 1);
    await holdSamples(3);
    await noLosses(mark);
    await applyTopology(s, NS, 'web', {
      selector: 'netzlive/pod-type=cluster-service',
      pollingInterval: '1s',
    });
    await everyAgentIn('ObjectGone', 0);
    // Back to normal means the operator's status of the new object has been read, not only the
    // object: a test after this one must not find a status the operator never wrote.
    await everyAgentIn('NoStatusYet', 0);
    await noLosses(mark);
  });

  it('the operator silent past the staleness limit: trouble shown, no node loses a peer', async () => {
    const mark = await watch.mark();
    await op.stop();
    // Past the limit without waiting it out: the operator's last sign of life is dated an hour back.
    const hourAgo = new Date(Date.now() - 3_600_000).toISOString();
    await kubectlOk(s, [
      '-n',
      NS,
      'patch',
      'clustertopology',
      'web',
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify({ status: { lastPollTime: hourAgo.replace(/\.\d+Z$/, 'Z') } }),
    ]);
    const lease = await kubectl(s, ['-n', NS, 'get', 'lease', 'clustertopology.web', '-o', 'name']);
    if (lease.code === 0)
      await kubectlOk(s, [
        '-n',
        NS,
        'patch',
        'lease',
        'clustertopology.web',
        '--type=merge',
        '-p',
        JSON.stringify({ spec: { renewTime: hourAgo.replace(/\.(\d{3})Z$/, '.$1000Z') } }),
      ]);
    await everyAgentIn('StatusStale', 1);
    await holdSamples(3);
    await noLosses(mark);
    op = startOperator(opKubeconfig, ['--namespaces', NS, '--no-leader-elect']);
    await everyAgentIn('StatusStale', 0);
    await noLosses(mark);
  });

  it('the agent killed mid-round and restarted: a peer removed while it was down is disconnected', async () => {
    const mark = await watch.mark();
    // d answers nothing while frozen, so a connect to it hangs: a round is under way.
    const d = await erl.startNode('d', { args: NO_MESHING });
    nodes.set('d', d);
    d.suspend();
    await addPod('d');
    await waitFor(
      "agent a's erl_call connecting d",
      () => erlCallsOf(full('a')).some((cmd) => cmd.includes(full('d'))),
      30_000,
    );
    await agents.get('a')!.stop('SIGKILL');
    d.resume(); // the orphaned erl_call completes: a now holds d, and no agent knows it did that
    await waitFor('a to hold d', async () => (await nodesOf('a')).includes(full('d')), 20_000);
    await deletePod(s, NS, 'd');
    await waitFor(
      'b and c to drop d (their agents are running)',
      async () => !(await nodesOf('b')).includes(full('d')) && !(await nodesOf('c')).includes(full('d')),
      30_000,
    );
    expect(await nodesOf('a')).toContain(full('d')); // nobody but a's own agent can undo it
    const a = startErlangAgent('a');
    await a.port();
    await waitFor('a to drop d', async () => !(await nodesOf('a')).includes(full('d')), 30_000);
    expect(a.output).toMatch(/remembered connections read/);
    await noLosses(mark);
    await d.stop();
    nodes.delete('d');
  });

  describe('the local BEAM node restarted under a running agent', () => {
    // Topology "solo": x and y, no global meshing; only x runs an agent, so only x's agent can
    // connect x to y — after x restarts too.
    let y: BeamNode;
    beforeAll(async () => {
      y = await erl.startNode('y', { args: NO_MESHING });
      await addPod('y', 'solo');
      await addPod('x', 'solo');
    });
    afterAll(async () => {
      await y?.stop();
    });

    const restartX = async (start: () => CtopoProcess) => {
      const x = await erl.startNode('x', { args: NO_MESHING });
      const agent = start();
      const xHoldsY = async (what: string) => {
        try {
          await erl.waitForNodes(full('x'), [full('y')], 60_000);
        } catch (e) {
          throw new Error(`${what}: ${(e as Error).message}; the agent said:\n${agent.output.slice(-3000)}`, {
            cause: e,
          });
        }
      };
      await xHoldsY('first connect');
      await x.stop();
      await erl.waitForNodes(full('y'), [], 20_000);
      const again = await erl.startNode('x', { args: NO_MESHING });
      await xHoldsY('after x restarted');
      expect((await agent.get('/healthz')).status).toBe(200);
      await agent.stop();
      await again.stop();
      await erl.waitForNodes(full('y'), [], 20_000);
    };

    it('erlang connector: the agent connects the restarted node to its peers again', async () => {
      await restartX(() => startErlangAgent('x', 'solo'));
    });

    it('exec connector with --exec-list: the program is asked and told the whole list again', async () => {
      await restartX(() => startExecAgent('x', 'solo', ['--exec-list']));
    });

    it('exec connector with --resync-interval: the whole list is applied again', async () => {
      await restartX(() => startExecAgent('x', 'solo', ['--resync-interval', '2s']));
    });
  });
});

/** The command lines of running erl_call processes that drive `node` (`-name node`). */
function erlCallsOf(node: string): string[] {
  const out: string[] = [];
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      if (!argv[0]?.endsWith('erl_call')) continue;
      const i = argv.indexOf('-name');
      if (i >= 0 && argv[i + 1] === node) out.push(argv.join(' '));
    } catch {
      // gone
    }
  }
  return out;
}
