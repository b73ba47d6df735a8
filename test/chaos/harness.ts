/**
 * The chaos run on real things: its own API server and etcd, two operator replicas behind the
 * fault proxy (leader election on), and members that are real BEAM nodes each with a real
 * agent, plus "ghost" pods (peers without a node) whose IPs change. A seeded script
 * (schedule.ts) injects faults and changes. The invariant checker (invariants.ts) is fed with
 * the topology's status, every nodedown each node hears (a monitor inside each node, so a drop
 * mended between two looks is still seen) and samples of every node's connections.
 *
 * An action counts only once its effect was observed: a fault the proxy answered a request
 * with, the Role change as the API server's authorizer answers it, the operator or agent process
 * gone, the pod as the API server returns it. An action that fails, or whose effect never shows,
 * is reported as failed; one the script asks for when it cannot apply (a sixth member, a third
 * departure) as skipped. Neither is counted.
 */
import {
  privateCluster,
  installCrd,
  kubectl,
  kubectlOk,
  kubeconfigForToken,
  kubeconfigForUser,
} from '../support/cluster.js';
import {
  applyTopology,
  canI,
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
import { MeshWatch } from '../support/mesh-watch.js';
import { FaultProxy } from '../support/fault-proxy.js';
import { CtopoProcess, localAgentArgs, startOperator } from '../support/operator-process.js';
import { ErlangTestEnv, type BeamNode } from '../support/erlang.js';
import { waitFor } from '../support/wait.js';
import { chaosSchedule, type ChaosAction, type ChaosKind } from './schedule.js';
import { InvariantChecker, type ActionLog, type ChaosReport } from './invariants.js';

const NS = 'chaos';
const GHOSTS = 2;

export interface ChaosOptions {
  seed: number;
  minutes: number;
  gapMs?: [number, number];
  /** Progress and every action's outcome (default: standard error). */
  log?: (line: string) => void;
}

/** How long an action may take to show its effect before it is reported as failed. */
const EFFECT_LIMIT_MS = 60_000;

/** An action the script asked for that cannot apply now: not run, not counted. */
class Skipped extends Error {}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

interface Member {
  short: string;
  node: BeamNode;
  agent: CtopoProcess;
}

export async function runChaos(o: ChaosOptions): Promise<ChaosReport> {
  const log = o.log ?? ((line: string) => void process.stderr.write(`${line}\n`));
  const durationMs = Math.round(o.minutes * 60_000);
  const schedule = chaosSchedule({
    seed: o.seed,
    durationMs,
    ghosts: GHOSTS,
    ...(o.gapMs ? { gapMs: o.gapMs } : {}),
  });
  const checker = new InvariantChecker();
  const actions: ActionLog = { attempted: {}, tookEffect: {}, effects: [], skipped: [], failed: [] };

  const { state: s, stop: stopCluster } = await privateCluster();
  let erl: ErlangTestEnv | undefined;
  let watch: MeshWatch | undefined;
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
    // The same identity straight to the API server: what its authorizer answers it.
    const opDirect = await kubeconfigForToken(s, `chaos-operator-direct.kubeconfig`, token);
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
    const mesh = (watch = await MeshWatch.create(world, world.root, { sample: false }));
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
      // Its monitor runs before anything connects to it: every nodedown it hears is kept.
      await mesh.watch(full(short));
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
    const stillListed = async (n: string) => ((await readStatus()) ?? (await names())).includes(n);
    /** Per node: how many of its nodedowns the checker has been given. */
    const downsSeen = new Map<string, number>();
    const observeMember = async (name: string, alive: ReadonlySet<string>) => {
      // nodes() first, then the nodedowns (up to now, so every drop behind that sample is in them).
      const nodes = await world.nodesOf(name).catch(() => undefined);
      const downs = await mesh.downs(name).catch((e: unknown) => {
        checker.note(`${now()} ms: the nodedowns of ${name} could not be read: ${(e as Error).message}`);
        return undefined;
      });
      if (downs) {
        for (const d of downs.slice(downsSeen.get(name) ?? 0))
          await checker.observeDown(d.at - t0, name, d.node, d.reason, alive, stillListed);
        downsSeen.set(name, downs.length);
      }
      if (nodes) await checker.observeMesh(now(), name, nodes, alive, stillListed);
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
            await observeMember(full(m.short), alive);
          }
          await sleep(1500);
        }
      })(),
    ];

    /** Waits until `probe` holds; an effect that never shows fails the action. */
    const until = (what: string, probe: () => Promise<boolean> | boolean, limitMs = EFFECT_LIMIT_MS) =>
      waitFor(what, probe, limitMs, 200);
    const podIp = async (pod: string) =>
      (await kubectlOk(s, ['-n', NS, 'get', 'pod', pod, '-o', 'jsonpath={.status.podIP}'])).trim();
    const podGone = async (pod: string) => {
      const r = await kubectl(s, ['-n', NS, 'get', 'pod', pod, '-o', 'name']);
      if (r.code !== 0 && /NotFound/.test(r.stderr)) return true;
      if (r.code !== 0) throw new Error(`kubectl get pod ${pod}: ${r.stderr}`);
      return false;
    };
    /** Holds a proxy fault for `forMs` and until it answered at least one request. */
    const holdFault = async (forMs: number, what: string) => {
      const before = proxy!.faulted;
      await sleep(forMs);
      await until(`a pod list to meet the fault (${what})`, () => proxy!.faulted > before);
      const hits = proxy!.faulted - before;
      proxy!.set({ kind: 'pass' });
      return hits;
    };
    const operatorMayListPods = () => canI(s, opDirect, ['list', 'pods', '-n', NS]);
    const agentMayRead = () =>
      canI(s, agentKubeconfig, ['get', 'clustertopologies.cluster.netzlive.io/web', '-n', NS]);
    const aLeader = () =>
      until('a leader', async () => (await leader()) !== undefined).then(async () => (await leader())!);

    /** Runs one action; returns what was observed of its effect. */
    const act = async (a: ChaosAction): Promise<string> => {
      switch (a.kind) {
        case 'status5xx': {
          proxy!.set({ kind: 'status', code: a.code }, podLists);
          const hits = await holdFault(a.forMs, `${a.code}`);
          return `${hits} pod lists answered ${a.code}`;
        }
        case 'dropConnections': {
          const open = proxy!.set({ kind: 'drop' }, podLists);
          const hits = await holdFault(500, 'drop');
          return `${open} open connections dropped, then ${hits} pod lists`;
        }
        case 'hangLists': {
          proxy!.set({ kind: 'hang' }, podLists);
          const hits = await holdFault(a.forMs, 'hang');
          return `${hits} pod lists left unanswered`;
        }
        case 'rbacOperator': {
          const refused = proxy!.passed.get(403) ?? 0;
          await revokePods(s, NS, NS);
          await until('the operator may no longer list pods', async () => !(await operatorMayListPods()));
          await sleep(a.forMs);
          await until('a pod list answered 403', () => (proxy!.passed.get(403) ?? 0) > refused);
          const answered = (proxy!.passed.get(403) ?? 0) - refused;
          await restorePods(s, NS, NS, opSubject);
          await until('the operator may list pods again', operatorMayListPods);
          return `the API server refused the operator's pods (can-i: no), ${answered} requests answered 403; restored (can-i: yes)`;
        }
        case 'rbacAgent': {
          await kubectlOk(s, ['-n', NS, 'delete', 'rolebinding', 'agent']);
          await until('the agents may no longer read the topology', async () => !(await agentMayRead()));
          await sleep(a.forMs);
          await applyObjects(s, [agentBinding]);
          await until('the agents may read the topology again', agentMayRead);
          return 'the agents may not read the topology (can-i: no); restored (can-i: yes)';
        }
        case 'killOperator':
        case 'failover': {
          const l = await aLeader();
          const was = operators.indexOf(l);
          let code: number | null;
          try {
            code = await l.stop(a.kind === 'killOperator' ? 'SIGKILL' : 'SIGTERM');
            if (a.kind === 'killOperator') await sleep(a.restartAfterMs);
          } finally {
            while (alive().length < 2) startReplica();
          }
          // stop() sends SIGKILL after 15 s: a leader that outlived SIGTERM that long shows here.
          const how = code ?? l.child.signalCode;
          if (a.kind === 'failover' && code !== 0)
            throw new Error(`the leader op-${was} exited with ${how} on SIGTERM (0 expected)`);
          const next = await aLeader();
          return `the leader op-${was} is gone (${how}); op-${operators.indexOf(next)} leads`;
        }
        case 'killAgent': {
          const m = members[a.member % members.length]!;
          const pid = m.agent.child.pid;
          await m.agent.stop('SIGKILL');
          if (m.agent.child.signalCode !== 'SIGKILL')
            throw new Error(`the agent of ${m.short} was not killed`);
          await sleep(a.restartAfterMs);
          m.agent = startAgent(m.short);
          await m.agent.port();
          return `the agent of ${m.short} (pid ${pid}) killed; a new one serves (pid ${m.agent.child.pid})`;
        }
        case 'createMember': {
          if (members.length >= 5) throw new Skipped('5 members already');
          const at = now();
          const m = await addMember();
          checker.expectChange(`${m.short} joins`, at, (p) => p.includes(full(m.short)));
          await until(`pod ${m.short} to have its IP`, async () => (await podIp(m.short)) === '127.0.0.1');
          return `${m.short} runs, its pod has its IP`;
        }
        case 'deleteMember': {
          if (members.length <= 2) throw new Skipped(`only ${members.length} members`);
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
              mesh.unwatch(full(m.short));
              await m.node.stop();
              checker.markGone(full(m.short), now());
            });
          await until(`pod ${m.short} to be gone`, () => podGone(m.short));
          return `pod ${m.short} deleted`;
        }
        case 'reIp': {
          const g = `g${a.ghost}`;
          // An address another ghost holds would not be a change of this one: the next free one.
          let n = a.ip;
          while ([...ghostIp.values()].includes(`127.0.0.${n}`)) n = n >= 250 ? 2 : n + 1;
          const ip = `127.0.0.${n}`;
          const old = `${g}@${ghostIp.get(g)}`;
          ghostIp.set(g, ip);
          checker.expectChange(`${g} → ${ip}`, now(), (p) => p.includes(`${g}@${ip}`) && !p.includes(old));
          await setPodStatus(s, NS, g, { ip, ready: true });
          await until(`pod ${g} to have ${ip}`, async () => (await podIp(g)) === ip);
          return `pod ${g} moved to ${ip}`;
        }
      }
    };
    const record = async (a: ChaosAction) => {
      const kind: ChaosKind = a.kind;
      const stamp = `${(now() / 1000).toFixed(1)} s ${kind}`;
      actions.attempted[kind] = (actions.attempted[kind] ?? 0) + 1;
      log(`${stamp}: ${JSON.stringify(a)}`);
      try {
        const effect = await act(a);
        actions.tookEffect[kind] = (actions.tookEffect[kind] ?? 0) + 1;
        actions.effects.push(`${stamp}: ${effect}`);
        log(`${stamp}: took effect: ${effect}`);
      } catch (e) {
        proxy!.set({ kind: 'pass' });
        const line = `${stamp}: ${(e as Error).message}`;
        (e instanceof Skipped ? actions.skipped : actions.failed).push(line);
        log(`${stamp}: ${e instanceof Skipped ? 'skipped' : 'FAILED'}: ${(e as Error).message}`);
      }
    };

    for (const { at, action } of schedule) {
      const wait = at - now();
      if (wait > 0) await sleep(wait);
      await record(action);
    }
    // Time for the last changes to arrive before the samplers stop.
    await sleep(Math.min(30_000, Math.max(10_000, durationMs - now())));
    stopping = true;
    await Promise.all(samplers);
    // The nodedowns heard since the last look.
    const aliveNow = new Set(members.filter((m) => m.node.alive).map((m) => full(m.short)));
    for (const m of members) if (m.node.alive) await observeMember(full(m.short), aliveNow);
    return checker.report({ seed: o.seed, minutes: o.minutes, actions });
  } finally {
    stopping = true;
    await CtopoProcess.stopAll();
    await watch?.stop();
    await erl?.stop();
    await proxy?.stop();
    await stopCluster();
  }
}
