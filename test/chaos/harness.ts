/**
 * The chaos run on real things: its own API server and etcd, two operator replicas behind the
 * fault proxy (leader election on), and members that are real BEAM nodes each with a real
 * agent, plus "ghost" pods (peers without a node) whose IPs change. A seeded script
 * (schedule.ts) injects faults and changes; two samplers feed the invariant checker
 * (invariants.ts) with the topology's status and every node's connections.
 */
import {
  privateCluster,
  installCrd,
  kubectlOk,
  kubeconfigForToken,
  kubeconfigForUser,
} from '../support/cluster.js';
import {
  applyTopology,
  createPod,
  deletePod,
  grantOperatorRbac,
  restorePods,
  revokePods,
  serviceAccountToken,
  setPodStatus,
  topologyStatus,
  applyObjects,
  readerRbac,
} from '../support/objects.js';
import { FaultProxy } from '../support/fault-proxy.js';
import { CtopoProcess, localAgentArgs, startOperator } from '../support/operator-process.js';
import { ErlangTestEnv, type BeamNode } from '../support/erlang.js';
import { waitFor } from '../support/wait.js';
import { chaosSchedule, type ChaosAction } from './schedule.js';
import { InvariantChecker, type ChaosReport } from './invariants.js';

const NS = 'chaos';
const GHOSTS = 2;

export interface ChaosOptions {
  seed: number;
  minutes: number;
  gapMs?: [number, number];
  log?: (line: string) => void;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

interface Member {
  short: string;
  node: BeamNode;
  agent: CtopoProcess;
}

export async function runChaos(o: ChaosOptions): Promise<ChaosReport> {
  const log = o.log ?? (() => undefined);
  const durationMs = Math.round(o.minutes * 60_000);
  const schedule = chaosSchedule({
    seed: o.seed,
    durationMs,
    ghosts: GHOSTS,
    ...(o.gapMs ? { gapMs: o.gapMs } : {}),
  });
  const checker = new InvariantChecker();
  const actions: Record<string, number> = {};

  const { state: s, stop: stopCluster } = await privateCluster();
  let erl: ErlangTestEnv | undefined;
  let proxy: FaultProxy | undefined;
  const operators: CtopoProcess[] = [];
  const members: Member[] = [];
  let stopping = false;
  try {
    await installCrd(s);
    await kubectlOk(s, ['create', 'namespace', NS]);
    const opSubject = { kind: 'ServiceAccount' as const, name: 'operator', namespace: NS };
    const token = await serviceAccountToken(s, NS, 'operator');
    await grantOperatorRbac(s, opSubject, [NS], NS);
    proxy = await new FaultProxy(s).start();
    const opKubeconfig = await kubeconfigForToken(s, `chaos-operator.kubeconfig`, token, proxy.url);
    const [agentRole, agentBinding] = readerRbac({
      namespace: NS,
      name: 'agent',
      topologies: ['web'],
      verbs: ['get', 'list', 'watch'],
      subject: { kind: 'User', name: 'agent' },
    });
    await applyObjects(s, [agentRole, agentBinding]);
    const agentKubeconfig = await kubeconfigForUser(s, 'agent');
    await applyTopology(s, NS, 'web', {
      selector: 'netzlive/pod-type=cluster-service',
      pollingInterval: '2s',
    });
    erl = await ErlangTestEnv.start();
    const world = erl;
    const podLists = new RegExp(`^/api/v1/namespaces/${NS}/pods\\?(?!.*watch=true)`);

    let operatorCount = 0;
    const startReplica = () => {
      const p = startOperator(opKubeconfig, [
        '--namespaces',
        NS,
        '--lease-namespace',
        NS,
        '--identity',
        `op-${operatorCount++}`,
        '--log-level',
        'warn',
      ]);
      operators.push(p);
      return p;
    };
    const alive = () => operators.filter((p) => p.exitCode === undefined);
    const leader = async () => {
      for (const p of alive()) if ((await p.metric('ctopo_leader').catch(() => undefined)) === 1) return p;
      return undefined;
    };

    const full = (short: string) => `${short}@127.0.0.1`;
    const startAgent = (short: string) =>
      new CtopoProcess(
        [
          ...localAgentArgs({
            kubeconfig: agentKubeconfig,
            namespace: NS,
            topology: 'web',
            pod: short,
            logLevel: 'warn',
          }),
          '--connector',
          'erlang',
          '--cookie-file',
          world.cookieFile,
        ],
        { ERL_EPMD_PORT: String(world.epmdPort) },
      );
    let memberCount = 0;
    const addMember = async () => {
      const short = `m${memberCount++}`;
      const node = await world.startNode(short);
      await createPod(s, NS, short);
      await setPodStatus(s, NS, short, { ip: '127.0.0.1', ready: true });
      const m = { short, node, agent: startAgent(short) };
      members.push(m);
      return m;
    };
    const ghostIp = new Map<string, string>();

    for (let k = 0; k < 3; k++) await addMember();
    for (let k = 0; k < GHOSTS; k++) {
      const g = `g${k}`;
      await createPod(s, NS, g);
      await setPodStatus(s, NS, g, { ip: `127.0.0.${10 + k}`, ready: true });
      ghostIp.set(g, `127.0.0.${10 + k}`);
    }
    startReplica();
    startReplica();
    const names = async () => (await topologyStatus(s, NS, 'web'))?.peers?.map((p) => p.nodeName) ?? [];
    await waitFor('the first peers', async () => (await names()).length === 3 + GHOSTS, 120_000);
    for (const m of members)
      await world.waitForNodes(
        full(m.short),
        members.filter((x) => x !== m).map((x) => full(x.short)),
        60_000,
      );
    log(`chaos: seed ${o.seed}, ${o.minutes} min, ${schedule.length} actions; the cluster is formed`);

    const t0 = Date.now();
    const now = () => Date.now() - t0;
    /** Reads the status into the checker; the peer names, or undefined when it could not. */
    const readStatus = async () => {
      const from = now();
      const st = await topologyStatus(s, NS, 'web').catch(() => undefined);
      if (!st) return undefined;
      const peers = st.peers?.map((p) => p.nodeName);
      checker.observeStatus(now(), peers, st.lastResponse !== undefined, from);
      return peers ?? [];
    };
    const samplers = [
      (async () => {
        while (!stopping) {
          await readStatus();
          await sleep(700);
        }
      })(),
      (async () => {
        while (!stopping) {
          const alive = new Set(members.filter((m) => m.node.alive).map((m) => full(m.short)));
          for (const m of [...members]) {
            if (!m.node.alive || stopping) continue;
            const nodes = await world.nodesOf(full(m.short)).catch(() => undefined);
            if (nodes)
              await checker.observeMesh(now(), full(m.short), nodes, alive, async (n) =>
                ((await readStatus()) ?? (await names())).includes(n),
              );
          }
          await sleep(1500);
        }
      })(),
    ];

    const act = async (a: ChaosAction) => {
      actions[a.kind] = (actions[a.kind] ?? 0) + 1;
      log(`${(now() / 1000).toFixed(1)} s: ${JSON.stringify(a)}`);
      switch (a.kind) {
        case 'status5xx':
          proxy!.set({ kind: 'status', code: a.code }, podLists);
          await sleep(a.forMs);
          proxy!.set({ kind: 'pass' });
          return;
        case 'dropConnections':
          proxy!.set({ kind: 'drop' }, podLists);
          await sleep(500);
          proxy!.set({ kind: 'pass' });
          return;
        case 'hangLists':
          proxy!.set({ kind: 'hang' }, podLists);
          await sleep(a.forMs);
          proxy!.set({ kind: 'pass' });
          return;
        case 'rbacOperator':
          await revokePods(s, NS, NS);
          await sleep(a.forMs);
          await restorePods(s, NS, NS, opSubject);
          return;
        case 'rbacAgent':
          await kubectlOk(s, ['-n', NS, 'delete', 'rolebinding', 'agent']);
          await sleep(a.forMs);
          await applyObjects(s, [agentBinding]);
          return;
        case 'killOperator':
        case 'failover': {
          const l = (await leader()) ?? alive()[0];
          if (l) await l.stop(a.kind === 'killOperator' ? 'SIGKILL' : 'SIGTERM');
          if (a.kind === 'killOperator') await sleep(a.restartAfterMs);
          while (alive().length < 2) startReplica();
          return;
        }
        case 'killAgent': {
          const m = members[a.member % members.length]!;
          await m.agent.stop('SIGKILL');
          await sleep(a.restartAfterMs);
          m.agent = startAgent(m.short);
          return;
        }
        case 'createMember': {
          if (members.length >= 5) return;
          const at = now();
          const m = await addMember();
          checker.expectChange(`${m.short} joins`, at, (p) => p.includes(full(m.short)));
          return;
        }
        case 'deleteMember': {
          if (members.length <= 2) return;
          const m = members[a.member % members.length]!;
          checker.markLeaving(full(m.short), now());
          checker.expectChange(`${m.short} leaves`, now(), (p) => !p.includes(full(m.short)));
          await deletePod(s, NS, m.short);
          members.splice(members.indexOf(m), 1);
          // The node goes once the status no longer lists it (as a pod's would, after its
          // deletion reached the agents), or after a minute.
          void waitFor('unlisted', async () => !(await names()).includes(full(m.short)), 60_000)
            .catch(() => undefined)
            .then(async () => {
              await m.agent.stop('SIGKILL');
              await m.node.stop();
              checker.markGone(full(m.short), now());
            });
          return;
        }
        case 'reIp': {
          const g = `g${a.ghost}`;
          const ip = `127.0.0.${a.ip}`;
          if (ghostIp.get(g) === ip || [...ghostIp.values()].includes(ip)) return;
          const old = `${g}@${ghostIp.get(g)}`;
          ghostIp.set(g, ip);
          checker.expectChange(`${g} → ${ip}`, now(), (p) => p.includes(`${g}@${ip}`) && !p.includes(old));
          await setPodStatus(s, NS, g, { ip, ready: true });
          return;
        }
      }
    };

    for (const { at, action } of schedule) {
      const wait = at - now();
      if (wait > 0) await sleep(wait);
      await act(action).catch((e: unknown) => log(`action ${action.kind} failed: ${(e as Error).message}`));
    }
    // Time for the last changes to arrive before the samplers stop.
    await sleep(Math.min(30_000, Math.max(10_000, durationMs - now())));
    stopping = true;
    await Promise.all(samplers);
    return checker.report({ seed: o.seed, minutes: o.minutes, actions });
  } finally {
    stopping = true;
    await CtopoProcess.stopAll();
    await erl?.stop();
    await proxy?.stop();
    await stopCluster();
  }
}
