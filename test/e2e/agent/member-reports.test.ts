import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import type { ControlPlaneState } from '../../../dev/cluster/control-plane.js';
import type {
  ClusterTopologyMemberStatus,
  ClusterTopologyStatus,
} from '../../../operator/api/types.generated.js';
import { installCrd, kubectl, kubectlOk, kubeconfigForUser, privateCluster } from '../../support/cluster.js';
import {
  applyObjects,
  applyTopology,
  condition,
  createPod,
  eventsFor,
  grantOperatorRbac,
  memberReportRbac,
  readerRbac,
  setPodStatus,
  topologyStatus,
} from '../../support/objects.js';
import { CtopoProcess, localAgentArgs, startOperator } from '../../support/operator-process.js';
import { ErlangTestEnv, type BeamNode } from '../../support/erlang.js';
import { sleep, waitFor } from '../../support/wait.js';
import { writeAppHook } from '../../support/app-hook.js';
import { MeshWatch } from '../../support/mesh-watch.js';

/**
 * The sidecar writes its member report (docs/status-protocol.md §8) and the operator shows the
 * mesh from them: a real API server, the real operator, one real agent per real BEAM node. The
 * mesh the status claims is checked against the nodes themselves (`nodes()`).
 */

const NS = 'app';
const WARNING = 'cannot write the member report';

describe('the sidecar reports what its node is connected to; the operator shows the mesh', () => {
  let s: ControlPlaneState;
  let stopCluster: () => Promise<void>;
  let erl: ErlangTestEnv;
  let watch: MeshWatch;
  let work: string;
  let hook: string;
  /** May read the topology and write member reports. */
  let reporterKubeconfig: string;
  /** May read the topology only. */
  let readerKubeconfig: string;
  const nodes = new Map<string, BeamNode>();
  const agents = new Map<string, CtopoProcess>();
  const full = (short: string) => `${short}@127.0.0.1`;
  const status = () => topologyStatus(s, NS, 'web');
  const meshed = (st: ClusterTopologyStatus | undefined) => condition(st, 'Meshed');

  const startAgent = (
    short: string,
    o: { kubeconfig?: string; cookieFile?: string; exec?: boolean; node?: string } = {},
  ) => {
    const base = localAgentArgs({
      kubeconfig: o.kubeconfig ?? reporterKubeconfig,
      namespace: NS,
      topology: 'web',
      pod: short,
      ...(o.node ? { node: o.node } : {}),
    });
    const a = o.exec
      ? new CtopoProcess([...base, '--connector', 'exec', '--exec-program', hook], {
          ERL_EPMD_PORT: String(erl.epmdPort),
          HOME: erl.home,
          LOCAL_NODE: full(short),
        })
      : new CtopoProcess(
          [...base, '--connector', 'erlang', '--cookie-file', o.cookieFile ?? erl.cookieFile],
          { ERL_EPMD_PORT: String(erl.epmdPort) },
        );
    agents.set(short, a);
    return a;
  };
  const addPod = async (short: string) => {
    await createPod(s, NS, short);
    await setPodStatus(s, NS, short, { ip: '127.0.0.1', ready: true });
  };
  const report = async (short: string): Promise<ClusterTopologyMemberStatus | undefined> => {
    const r = await kubectl(s, ['-n', NS, 'get', 'ctm', `${short}.web`, '-o', 'json']);
    return r.code === 0
      ? (JSON.parse(r.stdout) as { status?: ClusterTopologyMemberStatus }).status
      : undefined;
  };
  const warnings = (short: string) => agents.get(short)!.output.split(WARNING).length - 1;

  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'ctopo-member-reports-'));
    hook = join(work, 'app-hook.sh');
    // An application's hook for the exec connector: drives its local node with erl_call.
    await writeAppHook(hook, { list: false });
    ({ state: s, stop: stopCluster } = await privateCluster());
    await installCrd(s);
    await kubectlOk(s, ['create', 'namespace', NS]);
    await grantOperatorRbac(s, { kind: 'User', name: 'operator' }, [NS], 'e2e');
    const read = (user: string) =>
      readerRbac({
        namespace: NS,
        name: user,
        topologies: ['web'],
        verbs: ['get', 'list', 'watch'],
        leases: true,
        subject: { kind: 'User', name: user },
      });
    await applyObjects(s, [
      ...read('reporter'),
      ...read('reader'),
      // what the chart's reader ClusterRole grants for reports
      ...memberReportRbac({
        namespace: NS,
        name: 'member-reports',
        subject: { kind: 'User', name: 'reporter' },
      }),
    ]);
    reporterKubeconfig = await kubeconfigForUser(s, 'reporter');
    readerKubeconfig = await kubeconfigForUser(s, 'reader');
    await applyTopology(s, NS, 'web', {
      selector: 'netzlive/pod-type=cluster-service',
      pollingInterval: '2s',
    });
    startOperator(await kubeconfigForUser(s, 'operator'), ['--namespaces', NS, '--no-leader-elect']);
    erl = await ErlangTestEnv.start();
    watch = await MeshWatch.create(erl, tmpdir());
  });
  afterAll(async () => {
    await watch?.stop();
    await CtopoProcess.stopAll();
    await erl?.stop();
    await stopCluster?.();
  });

  it('three meshed nodes: each reports 2/2 observed, the status says Meshed True, MESH 3/3', async () => {
    for (const m of ['a', 'b', 'c']) {
      nodes.set(m, await erl.startNode(m));
      await addPod(m);
      startAgent(m);
    }
    for (const m of ['a', 'b', 'c'])
      await erl.waitForNodes(full(m), ['a', 'b', 'c'].filter((x) => x !== m).map(full), 30_000);
    const st = await waitFor(
      'MESH 3/3',
      async () => {
        const x = await status();
        return x?.mesh?.summary === '3/3' && meshed(x)?.status === 'True' ? x : undefined;
      },
      60_000,
    );
    expect(st.mesh).toMatchObject({ members: 3, reporting: 3, fullyConnected: 3, largestGroup: 3 });
    expect(await report('a')).toMatchObject({
      node: full('a'),
      observed: true,
      connectedOfListed: '2/2',
      notConnected: [],
      selfCheck: { result: 'Match' },
    });
    const table = await kubectlOk(s, ['-n', NS, 'get', 'ctm']);
    expect(table).toMatch(/a\.web\s+a@127\.0\.0\.1\s+2\/2\s+Match/);
  });

  it('one node restarted with another cookie: Meshed False naming its links both ways, MESH 2/3, its reports say Refused', async () => {
    await agents.get('c')!.stop();
    await nodes.get('c')!.stop();
    const c = await erl.startNode('c', { cookie: 'another-cookie' });
    nodes.set('c', c);
    startAgent('c', { cookieFile: join(c.home, '.erlang.cookie') });
    // MESH 2/3 comes first from c's own report; a's and b's follow within their 10 s budget.
    const st = await waitFor(
      'Meshed False naming the links both ways',
      async () => {
        const x = await status();
        return x?.mesh?.summary === '2/3' && x.mesh.brokenLinks?.length === 4 ? x : undefined;
      },
      90_000,
    );
    expect(meshed(st)!.reason).toBe('LinkBroken');
    expect(meshed(st)!.message).toMatch(/^Groups a, b \| c\. Broken links: a → c \(Refused\)/);
    expect(st.mesh!.brokenLinks).toEqual([
      { from: 'a', to: 'c', reason: 'Refused' },
      { from: 'b', to: 'c', reason: 'Refused' },
      { from: 'c', to: 'a', reason: 'Refused' },
      { from: 'c', to: 'b', reason: 'Refused' },
    ]);
    // what the status claims is what the nodes hold
    expect((await erl.rpc(full('c'), 'erlang nodes []', nodes.get('c')!.home)).stdout.trim()).toBe('[]');
    expect(await erl.nodesOf(full('a'))).toEqual([full('b')]);
    expect(await report('c')).toMatchObject({
      observed: true,
      connectedOfListed: '0/2',
      notConnected: [
        { node: full('a'), reason: 'Refused' },
        { node: full('b'), reason: 'Refused' },
      ],
    });
  });

  it('a reader that may not write its report stays connected and says so once', async () => {
    nodes.set('d', await erl.startNode('d'));
    await addPod('d');
    const d = startAgent('d', { kubeconfig: readerKubeconfig });
    const peers = ['a', 'b'].map(full);
    await erl.waitForNodes(full('d'), peers, 30_000);
    await waitFor(
      'the first write',
      async () => (await d.metricSum('ctopo_agent_member_report_writes_total')) >= 1,
      30_000,
    );
    await watch.watch(full('d'));
    const mark = await watch.mark();
    // Rounds go on every 2 s and d's view changes as the others meet it; for 35 s (past the 30 s
    // a failed write would be retried after) nothing of that is said again, and nothing is lost.
    await sleep(35_000);
    expect(await watch.lossesSince(mark, full('d'), peers)).toEqual([]);
    expect(watch.samplesSince(mark, full('d'))).toBeGreaterThanOrEqual(3);
    expect(warnings('d')).toBe(1);
    const line = d.output.split('\n').find((l) => l.includes(WARNING))!;
    expect(JSON.parse(line)).toMatchObject({
      level: 'warn',
      outcome: 'forbidden',
      error: expect.stringMatching(/^403 Forbidden: .*cannot patch resource "clustertopologymembers"/),
    });
    // refused once, and not asked again within the 5 minutes a refusal waits
    expect(await d.metricSum('ctopo_agent_member_report_writes_total')).toBe(1);
    expect(await d.metric('ctopo_agent_member_report_writes_total', { result: 'forbidden' })).toBe(1);
    expect(await report('d')).toBeUndefined();
    expect((await status())?.mesh?.unreported).toContainEqual({ pod: 'd', reason: 'NoReport' });
  });

  it('the exec connector reports what it called, as not observed', async () => {
    nodes.set('e', await erl.startNode('e'));
    await addPod('e');
    startAgent('e', { exec: true });
    await erl.waitForNodes(full('e'), ['a', 'b', 'd'].map(full), 30_000);
    const r = await waitFor(
      'e’s report with its calls',
      async () => {
        const x = await report('e');
        return x?.listed === 4 && x.connected === 3 ? x : undefined;
      },
      60_000,
    );
    expect(r).toMatchObject({
      observed: false,
      connectedOfListed: '3/4',
      notConnected: [{ node: full('c'), reason: 'Refused' }],
    });
    // the operator counts e as listed, and its report as one that cannot say what formed
    await waitFor(
      'e counted as not observed',
      async () => {
        const x = await status();
        return (
          x?.mesh?.members === 5 &&
          x.mesh.unreported?.some((u) => u.pod === 'e' && u.reason === 'NotObserved')
        );
      },
      60_000,
    );
  });

  it('a node under the wrong name: its report says Mismatch, the status a self-check failure, and an Event', async () => {
    // Pod f's node runs as x@127.0.0.1 and its sidecar is told that name (as RELEASE_NODE tells
    // both in a pod); the operator lists the pod as f@127.0.0.1, a name nobody answers.
    nodes.set('f', await erl.startNode('x'));
    await addPod('f');
    startAgent('f', { node: 'x' });
    const st = await waitFor(
      'the self-check failure in the status',
      async () => {
        const x = await status();
        return x?.mesh?.selfCheckFailures?.length ? x : undefined;
      },
      60_000,
    );
    expect(st.mesh!.selfCheckFailures).toEqual([{ pod: 'f', expected: full('f'), actual: full('x') }]);
    expect(meshed(st)).toMatchObject({
      status: 'False',
      reason: 'SelfCheckFailed',
      message: expect.stringMatching(/^f runs as x@127\.0\.0\.1 but is listed as f@127\.0\.0\.1/),
    });
    const e = await waitFor(
      'the operator’s SelfCheckFailed event',
      async () => (await eventsFor(s, NS, 'web')).find((x) => x.reason === 'SelfCheckFailed'),
      30_000,
    );
    expect(e).toMatchObject({
      type: 'Warning',
      message: expect.stringMatching(/^f runs as x@127\.0\.0\.1 but is listed as f@127\.0\.0\.1/),
    });
    // what the status says comes from f's own report, with the name its node answers to
    expect(await report('f')).toMatchObject({
      node: full('x'),
      observed: true,
      selfCheck: { result: 'Mismatch', expected: full('f'), actual: full('x') },
    });
    expect((await erl.rpc(full('x'), 'erlang node []')).stdout.trim()).toBe(`'${full('x')}'`);
  });
});
