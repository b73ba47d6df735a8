/**
 * The agent and its connectors.
 *
 * 1. Connectors on their own, against real things on loopback:
 *    - erlang: real BEAM nodes (a private epmd; `ErlangTestEnv`), the connector driving the
 *      local node `agent@127.0.0.1` with erl_call: connect to a running node that is not
 *      connected (after a disconnect), connect again while connected, disconnect, connect to a
 *      node that is not running (epmd does not know it). Milliseconds per call.
 *    - exec: one call of a small shell script (fork + exec + the script's own `date`).
 *    - file: one round of 100 peers (the atomic write with fsync the agent does every round).
 * 2. `ctopo agent` as users run it, on a real control plane (etcd + kube-apiserver), with the
 *    real operator, one ClusterTopology (pollingInterval 2s) selecting 101 pods with IPs — the
 *    agent's own pod and 100 peers:
 *    - resident memory (VmRSS from /proc) of an agent holding 100 peers, with the exec connector
 *      and, beside it, one with the file connector; CPU and connector calls per minute;
 *    - pod IP set → the exec connector's connect call for the new peer, one pod at a time: from
 *      the bench's PATCH of the pod status (through the operator), and from the moment the
 *      ClusterTopology status shows the peer on a WATCH from this process (the agent's share).
 *      The connect call's time is what the script records (`date +%s%N`).
 *    - the erlang connector's rounds (agent-erlang-rounds.ts): the real agent beside a real local
 *      BEAM node, 100 real BEAM peers listed, pollingInterval 10s: erl_call runs and their CPU in
 *      a minute with nothing changing, after one peer leaves, and after one joins — counted, not
 *      computed.
 *
 * Knobs (environment): BENCH_AGENT_CHANGES (40), BENCH_AGENT_CALLS (25 per erl_call case),
 * BENCH_AGENT_ERLANG_WINDOW_S (60), BENCH_AGENT_ERLANG_ONLY=1 (only the erlang rounds).
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { formatFigure, type Figure } from './figure.js';
import { CT_GROUP_PATH, startBenchCluster, type BenchCluster } from './bench-cluster.js';
import { onCleanup, runCleanups } from './cleanup.js';
import { mapLimit } from './concurrency.js';
import { BENCH_SELECTOR, ipFor, podManifest, podName, podStatus } from './pods.js';
import { processCpuSeconds, processMemory, type Memory } from './proc.js';
import { percentile, perMinute } from './stats.js';
import { TopologyWatch } from './topology-watch.js';
import {
  bursts,
  CallLogReader,
  type Burst,
  clockAnchor,
  firstCall,
  firstCallAfter,
  parseProcStatChildrenCpu,
  toWallMs,
  writeCallScript,
} from './agent-calls.js';
import { CtopoProcess, startOperator } from '../test/support/operator-process.js';
import { ErlangTestEnv } from '../dev/cluster/beam.js';
import { createConnector, type ConnectResult, type Connector } from '../operator/agent/connectors/index.js';
import { measureErlangRounds, type ErlangRoundsResult, type WindowCost } from './agent-erlang-rounds.js';

const env = (k: string, d: number) => (process.env[k] !== undefined ? Number(process.env[k]) : d);
const CHANGES = env('BENCH_AGENT_CHANGES', 40);
const CALLS = env('BENCH_AGENT_CALLS', 25);
const PEERS = 100;
const TOPOLOGY = 'web';
const POLLING_INTERVAL = '2s';
const MEMORY_READINGS = 15;
const CHANGE_TIMEOUT_MS = 15_000;
const MB = 1e6;
/** BENCH_AGENT_ERLANG_ONLY=1: only the erlang connector's rounds on the cluster. */
const ERLANG_ONLY = process.env.BENCH_AGENT_ERLANG_ONLY === '1';
const ERLANG_OPTS = {
  peers: PEERS,
  windowMs: env('BENCH_AGENT_ERLANG_WINDOW_S', 60) * 1000,
  pollingInterval: '10s', // the default
  log: (l: string) => log(l),
};

const log = (l: string) =>
  process.stderr.write(`[agent bench ${new Date().toISOString().slice(11, 19)}] ${l}\n`);
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const fmt = (x: number) =>
  Number.isFinite(x) ? (Math.abs(x) >= 100 ? x.toFixed(0) : x.toFixed(1)) : String(x);
const p50p99 = (xs: number[]) => `p50 ${fmt(percentile(xs, 50))} ms, p99 ${fmt(percentile(xs, 99))} ms`;

/** A temp directory removed however the module ends. */
async function tempDir(prefix: string): Promise<{ dir: string; remove: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  const remove = onCleanup(`temp dir ${dir}`, () => rm(dir, { recursive: true, force: true }));
  return { dir, remove };
}

async function timed(call: () => Promise<ConnectResult>): Promise<{ ms: number; r: ConnectResult }> {
  const t0 = performance.now();
  const r = await call();
  return { ms: performance.now() - t0, r };
}

// ---------------------------------------------------------------------------------------------
// 1. Connectors on their own

interface ErlCallResult {
  firstConnect: number[];
  againConnect: number[];
  disconnect: number[];
  notRunning: number[];
  failures: string[];
  otp: string;
  /** CPU per erl_call run over the whole loop: erl_call itself, and the local node answering it. */
  cpuPerCallMs: { erlCall: number; localNode: number };
}

async function measureErlCall(): Promise<ErlCallResult> {
  log('erlang connector: starting a private epmd and three BEAM nodes');
  const world = await ErlangTestEnv.start();
  const stopWorld = onCleanup('BEAM nodes and epmd', () => world.stop());
  let connector: Connector | undefined;
  try {
    const local = await world.startNode('agent');
    const targets = [await world.startNode('peer1'), await world.startNode('peer2')];
    const otp = (await world.rpc(local.name, 'erlang system_info [otp_release]')).stdout.trim();
    connector = await createConnector(
      {
        kind: 'erlang',
        nodeName: local.name,
        cookieFile: world.cookieFile,
        erlCall: world.erlCall,
        timeoutMs: 10_000,
        concurrency: 1,
      },
      { env: { ...process.env, ERL_EPMD_PORT: String(world.epmdPort) } },
    );
    const c = connector;
    const out: ErlCallResult = {
      firstConnect: [],
      againConnect: [],
      disconnect: [],
      notRunning: [],
      failures: [],
      otp,
      cpuPerCallMs: { erlCall: NaN, localNode: NaN },
    };
    const record = (list: number[], t: { ms: number; r: ConnectResult }, wantOk: boolean, what: string) => {
      if (t.r.ok === wantOk) list.push(t.ms);
      else out.failures.push(`${what}: ${t.r.ok ? 'succeeded' : t.r.error}`);
    };
    // Warm-up (page cache, the local node's first hidden connection): not counted.
    await c.connect(targets[0]!.name);
    await c.disconnect(targets[0]!.name);
    const connected = await world.nodesOf(local.name);
    if (connected.includes(targets[0]!.name))
      throw new Error(`the warm-up disconnect left ${targets[0]!.name} connected`);

    log(`erlang connector: ${CALLS} × (connect, connect again, disconnect, connect to a node not running)`);
    const deadline = Date.now() + 90_000;
    // erl_call runs are this process's children: their CPU shows in its cutime + cstime once
    // reaped. Nothing else this process starts ends during the loop (the nodes outlive it).
    const cpu0 = { self: await childCpu(process.pid), node: await processCpuSeconds(local.pid) };
    let runs = 0;
    for (let k = 0; k < CALLS && Date.now() < deadline; k++) {
      // Alternate the targets, so a node's disconnect has a whole cycle to settle before it is
      // connected again.
      const target = targets[k % targets.length]!.name;
      record(out.firstConnect, await timed(() => c.connect(target)), true, `connect ${target}`);
      if (k === 0 && !(await world.nodesOf(local.name)).includes(target))
        throw new Error(`connect said yes but ${local.name} is not connected to ${target}`);
      record(out.againConnect, await timed(() => c.connect(target)), true, `connect ${target} again`);
      record(out.disconnect, await timed(() => c.disconnect(target)), true, `disconnect ${target}`);
      record(out.notRunning, await timed(() => c.connect('ghost@127.0.0.1')), false, 'connect ghost');
      runs += k === 0 ? 5 : 4;
    }
    out.cpuPerCallMs = {
      erlCall: (((await childCpu(process.pid)) - cpu0.self) * 1000) / runs,
      localNode: (((await processCpuSeconds(local.pid)) - cpu0.node) * 1000) / runs,
    };
    if (out.firstConnect.length === 0)
      throw new Error(`erl_call never connected: ${out.failures.slice(0, 3).join('; ')}`);
    return out;
  } finally {
    await connector?.close();
    await stopWorld();
  }
}

async function measureExecAndFile(): Promise<{ exec: number[]; file: number[] }> {
  const { dir, remove } = await tempDir('ctopo-bench-connectors-');
  try {
    const { script } = await writeCallScript(join(dir, 'exec'));
    const exec = await createConnector({ kind: 'exec', program: script, timeoutMs: 10_000 });
    const peers = Array.from({ length: PEERS }, (_, i) => `${podName(i)}@${ipFor(i + 1)}`);
    const file = await createConnector({ kind: 'file', path: join(dir, 'peers.txt'), format: 'lines' });
    const out = { exec: [] as number[], file: [] as number[] };
    try {
      await exec.connect(peers[0]!); // warm-up
      for (let k = 0; k < CALLS; k++) {
        const t = await timed(() => exec.connect(peers[k % PEERS]!));
        if (!t.r.ok) throw new Error(`exec connector: ${t.r.error}`);
        out.exec.push(t.ms);
      }
      // What the agent hands the file connector every round: every peer, connected again.
      for (let k = 0; k <= CALLS; k++) {
        const t0 = performance.now();
        const r = await file.applyRound!({ disconnect: [], connect: peers });
        const ms = performance.now() - t0;
        const failed = r.connect.find((x) => !x.ok);
        if (failed && !failed.ok) throw new Error(`file connector: ${failed.error}`);
        if (k > 0) out.file.push(ms); // the first write creates the file: warm-up
      }
    } finally {
      await exec.close();
      await file.close();
    }
    return out;
  } finally {
    await remove();
  }
}

// ---------------------------------------------------------------------------------------------
// 2. `ctopo agent` on a real control plane

const AGENT_POD = PEERS; // pods 0 … PEERS-1 are the peers, pod PEERS is the agent's own
const agentNodeName = `${podName(AGENT_POD)}@${ipFor(AGENT_POD + 1)}`; // growPods gives pod i ipFor(i + 1)

function startAgent(
  c: BenchCluster,
  connector: string[],
): { agent: CtopoProcess; stop: () => Promise<void> } {
  const agent = new CtopoProcess([
    'agent',
    '--kubeconfig',
    c.state.kubeconfig,
    '--namespace',
    c.namespace,
    '--topology',
    TOPOLOGY,
    ...connector,
    '--pod-name',
    podName(AGENT_POD),
    '--node-name',
    agentNodeName,
    '--http-host',
    '127.0.0.1',
    '--http-port',
    '0',
  ]);
  const stop = onCleanup(`agent process ${agent.child.pid}`, async () => void (await agent.stop()));
  return { agent, stop };
}

/**
 * One metric of an agent, summed over its label sets. (Not parsed with prometheus.ts: prom-client
 * writes NaN as `Nan` — the default event-loop-lag gauges are NaN just after start — and that
 * parser refuses it; Prometheus itself reads it.)
 */
function agentMetric(a: CtopoProcess, name: string): Promise<number> {
  return a.metricSum(name);
}

async function waitForPeers(a: CtopoProcess, n: number, what: string, timeoutMs = 90_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: number | undefined;
  while (Date.now() < deadline) {
    if (a.exitCode !== undefined)
      throw new Error(`${what} exited with ${a.exitCode}: ${a.output.slice(-2000)}`);
    try {
      last = await a.metric('ctopo_agent_connected_peers');
      if (last === n) return;
    } catch {
      // not listening yet
    }
    await sleep(250);
  }
  throw new Error(
    `${what}: ${last} peers connected after ${timeoutMs / 1000} s, not ${n}; said:\n${a.output.slice(-2000)}`,
  );
}

/** Waits until the agent has run at least `n` rounds in all. */
async function waitForRounds(a: CtopoProcess, n: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if ((await agentMetric(a, 'ctopo_agent_rounds_total')) >= n) return;
    await sleep(200);
  }
  throw new Error(`the agent ran fewer than ${n} rounds in ${timeoutMs / 1000} s`);
}

interface AgentMemory {
  readings: Memory[];
  promRss: number;
  heapUsed: number;
  /** Over the reading window. */
  ms: number;
  rounds: number;
  cpuSeconds: number;
  childCpuSeconds: number;
}

async function childCpu(pid: number): Promise<number> {
  return parseProcStatChildrenCpu(await readFile(`/proc/${pid}/stat`, 'utf8'));
}

/** MEMORY_READINGS readings of each agent, a second apart, with CPU and rounds over the same window. */
async function measureAgents(
  agents: CtopoProcess[],
): Promise<{ results: AgentMemory[]; wallFrom: number; wallTo: number }> {
  const pids = agents.map((a) => a.child.pid!);
  const before = await Promise.all(
    agents.map(async (a, i) => ({
      rounds: await agentMetric(a, 'ctopo_agent_rounds_total'),
      cpu: await processCpuSeconds(pids[i]!),
      child: await childCpu(pids[i]!),
    })),
  );
  const t0 = performance.now();
  const wallFrom = Date.now();
  const readings: Memory[][] = agents.map(() => []);
  for (let k = 0; k < MEMORY_READINGS; k++) {
    for (let i = 0; i < agents.length; i++) readings[i]!.push(await processMemory(pids[i]!));
    if (k < MEMORY_READINGS - 1) await sleep(1000);
  }
  const ms = performance.now() - t0;
  const wallTo = Date.now();
  const results = await Promise.all(
    agents.map(async (a, i) => ({
      readings: readings[i]!,
      promRss: await agentMetric(a, 'ctopo_agent_process_resident_memory_bytes'),
      heapUsed: await agentMetric(a, 'ctopo_agent_nodejs_heap_size_used_bytes'),
      ms,
      rounds: (await agentMetric(a, 'ctopo_agent_rounds_total')) - before[i]!.rounds,
      cpuSeconds: (await processCpuSeconds(pids[i]!)) - before[i]!.cpu,
      childCpuSeconds: (await childCpu(pids[i]!)) - before[i]!.child,
    })),
  );
  return { results, wallFrom, wallTo };
}

interface Change {
  /** PATCH sent → connect call. */
  total: number;
  /** PATCH sent → the status showed the peer. */
  operator: number;
  /** The status showed the peer → connect call. */
  agent: number;
  /** The status showed the peer → the agent's first connector call of any node after it. */
  firstCall: number;
}

interface LatencyResult {
  changes: Change[];
  timeouts: string[];
}

async function measureLatency(
  c: BenchCluster,
  watch: TopologyWatch,
  calls: CallLogReader,
  startedAt: string,
): Promise<LatencyResult> {
  const out: LatencyResult = { changes: [], timeouts: [] };
  const deadline = Date.now() + 100_000;
  for (let k = 0; k < CHANGES && Date.now() < deadline; k++) {
    const i = PEERS + 1 + k; // a pod created without an IP
    const pod = podName(i);
    const ip = ipFor((1 << 21) + k); // disjoint from the ipFor(i + 1) of the first pods
    const node = `${pod}@${ip}`;
    const seen = watch.until((s) => s.ipOf(pod) === ip, CHANGE_TIMEOUT_MS, `${pod} → ${ip}`);
    const anchor = clockAnchor();
    const t0 = performance.now();
    await c.kube.request('PATCH', `/api/v1/namespaces/${c.namespace}/pods/${pod}/status`, {
      body: podStatus(i, ip, startedAt),
      contentType: 'application/merge-patch+json',
    });
    let seenAt: number;
    try {
      seenAt = await seen;
    } catch (e) {
      out.timeouts.push((e as Error).message);
      continue;
    }
    const call = await calls.waitFor((cs) => firstCall(cs, 'connect', node, 0), CHANGE_TIMEOUT_MS);
    if (!call) {
      out.timeouts.push(`no connect call for ${node} within ${CHANGE_TIMEOUT_MS / 1000} s of the status`);
      continue;
    }
    const wall0 = toWallMs(anchor, t0);
    const wallSeen = toWallMs(anchor, seenAt);
    const first = firstCallAfter(calls.calls, wallSeen) ?? call;
    out.changes.push({
      total: call.atMs - wall0,
      operator: seenAt - t0,
      agent: call.atMs - wallSeen,
      firstCall: first.atMs - wallSeen,
    });
    // Unaligned with the 2 s polling rounds, and the previous round finished.
    await sleep(300 + Math.random() * 400);
  }
  return out;
}

interface ClusterResult {
  memory?: { exec: AgentMemory; file: AgentMemory; execConnectCalls: number; rounds: Burst[] };
  latency?: LatencyResult;
  erlang: ErlangRoundsResult;
}

async function measureOnCluster(): Promise<ClusterResult> {
  const cluster = await startBenchCluster(log);
  const { dir, remove } = await tempDir('ctopo-bench-agent-');
  const stops: (() => Promise<void>)[] = [];
  try {
    log(`pods: ${PEERS} peers and the agent's own, with IPs; ${CHANGES} more without`);
    await cluster.growPods(PEERS + 1, 24, log);
    const startedAt = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    await mapLimit(
      Array.from({ length: CHANGES }, (_, k) => PEERS + 1 + k),
      16,
      (i) =>
        cluster.kube.request('POST', `/api/v1/namespaces/${cluster.namespace}/pods`, {
          body: podManifest(i, cluster.namespace),
        }),
    );
    await cluster.kube.request('POST', `${CT_GROUP_PATH}/namespaces/${cluster.namespace}/clustertopologies`, {
      body: {
        apiVersion: 'cluster.netzlive.io/v1alpha1',
        kind: 'ClusterTopology',
        metadata: { name: TOPOLOGY, namespace: cluster.namespace },
        spec: { selector: BENCH_SELECTOR, pollingInterval: POLLING_INTERVAL },
      },
    });
    const w = new TopologyWatch(cluster.kube, cluster.namespace, TOPOLOGY);
    stops.push(onCleanup('topology watch', () => w.stop()));
    await w.start();

    const op = startOperator(cluster.state.kubeconfig, [
      '--namespaces',
      cluster.namespace,
      '--no-leader-elect',
    ]);
    stops.push(onCleanup('operator process', async () => void (await op.stop())));
    await op.port();
    await w
      .reach((s) => s.peerCount === PEERS + 1, 60_000, `${PEERS + 1} peers in the status`)
      .catch((e: Error) => {
        throw new Error(`${e.message}; operator said:\n${op.output.slice(-2000)}`);
      });

    if (ERLANG_ONLY) {
      const erlang = await measureErlangRounds(cluster, dir, ERLANG_OPTS);
      return { erlang };
    }
    const { script, log: callLog } = await writeCallScript(join(dir, 'exec'));
    const calls = new CallLogReader(callLog);
    log('agents: one with the exec connector, one with the file connector');
    const exec = startAgent(cluster, ['--connector', 'exec', '--exec-program', script]);
    stops.push(exec.stop);
    const file = startAgent(cluster, ['--connector', 'file', '--file-path', join(dir, 'peers.txt')]);
    stops.push(file.stop);
    await Promise.all([
      waitForPeers(exec.agent, PEERS, 'the exec agent'),
      waitForPeers(file.agent, PEERS, 'the file agent'),
    ]);
    // Steady state: the agent's first polling timer is its default 10 s (it is set before the
    // topology's interval is known), so wait for two polling rounds after the first one.
    await waitForRounds(exec.agent, 3, 40_000);
    log(`memory: ${MEMORY_READINGS} readings a second apart`);
    const mem = await measureAgents([exec.agent, file.agent]);
    await file.stop();
    await calls.poll();
    const execConnectCalls = calls
      .between(mem.wallFrom, mem.wallTo)
      .filter((x) => x.action === 'connect').length;
    // The exec agent's rounds so far, with nothing changing: the first (connecting everyone)
    // and the last (maybe still running) left out.
    const all = bursts(calls.calls, 1000);
    const rounds = all.slice(1, -1);
    log(
      `exec agent rounds (start s, duration ms, calls): ${all
        .map(
          (r) =>
            `${((r.startMs - all[0]!.startMs) / 1000).toFixed(2)}/${(r.endMs - r.startMs).toFixed(0)}/${r.calls}`,
        )
        .join(
          ' ',
        )}; memory window ${((mem.wallFrom - all[0]!.startMs) / 1000).toFixed(2)}–${((mem.wallTo - all[0]!.startMs) / 1000).toFixed(2)} s`,
    );

    log(`latency: ${CHANGES} pods given an IP, one at a time`);
    const latency = await measureLatency(cluster, w, calls, startedAt);
    if (latency.changes.length === 0)
      throw new Error(
        `no change reached the connector: ${latency.timeouts.slice(0, 3).join('; ')}; agent said:\n${exec.agent.output.slice(-2000)}`,
      );
    await exec.stop();
    const erlang = await measureErlangRounds(cluster, dir, ERLANG_OPTS);
    return {
      memory: { exec: mem.results[0]!, file: mem.results[1]!, execConnectCalls, rounds },
      latency,
      erlang,
    };
  } finally {
    for (const s of stops.reverse()) await s();
    await remove();
    await cluster.stop();
  }
}

// ---------------------------------------------------------------------------------------------
// Figures

function memoryFigure(connector: string, m: AgentMemory, extra: string): Figure {
  const peak = Math.max(...m.readings.map((r) => r.peakRssBytes));
  return {
    name: `agent, ${PEERS} peers, ${connector} connector: resident memory (VmRSS)`,
    unit: 'MB',
    samples: m.readings.map((r) => r.rssBytes / MB),
    note: `${m.readings.length} readings a second apart after all peers were connected; peak (VmHWM) ${fmt(peak / MB)} MB; the agent's own ctopo_agent_process_resident_memory_bytes ${fmt(m.promRss / MB)} MB, V8 heap in use ${fmt(m.heapUsed / MB)} MB; ${extra}`,
  };
}

function erlangRoundFigures(r: ErlangRoundsResult): Figure[] {
  const kinds = (w: WindowCost) =>
    Object.entries(w.byKind)
      .map(([k, n]) => `${n} ${k}`)
      .join(', ') || 'none';
  const cpu = (w: WindowCost) =>
    `CPU a minute: erl_call runs ${fmt(perMinute(w.erlCallCpu, w.ms) * 1000)} ms (with the recording wrapper's sh), the local node answering ${fmt(perMinute(w.localNodeCpu, w.ms) * 1000)} ms, the agent itself ${fmt(perMinute(w.agentCpu, w.ms) * 1000)} ms`;
  const base = `${r.peers} real BEAM peers listed (OTP ${r.otp}), the real agent, pollingInterval ${r.pollingInterval}`;
  return [
    {
      name: `agent, erlang connector, ${r.peers} peers: erl_call runs a round with nothing changing`,
      unit: 'runs/round',
      samples: [r.idle.runs / Math.max(1, r.idle.rounds)],
      goal: { op: '<=', value: 1 },
      note: `measured: ${r.idle.runs} runs (${kinds(r.idle)}) in ${r.idle.rounds} rounds over ${fmt(r.idle.ms / 1000)} s = ${fmt(perMinute(r.idle.runs, r.idle.ms))} runs a minute; ${cpu(r.idle)}; ${base}`,
    },
    ...(r.leave && r.join ? changeFigures(r, r.leave, r.join, kinds, cpu) : []),
  ];
}

function changeFigures(
  r: ErlangRoundsResult,
  leave: WindowCost,
  join: WindowCost,
  kinds: (w: WindowCost) => string,
  cpu: (w: WindowCost) => string,
): Figure[] {
  return [
    {
      name: `agent, erlang connector, ${r.peers} peers: erl_call runs in the minute after one peer leaves`,
      unit: 'runs/min',
      samples: [perMinute(leave.runs, leave.ms)],
      note: `${leave.runs} runs (${kinds(leave)}) in ${leave.rounds} rounds: the round that disconnects connects every listed peer again (after a disconnect, global may drop other connections), the others ask nodes() once; ${cpu(leave)}`,
    },
    {
      name: `agent, erlang connector, ${r.peers} peers: erl_call runs in the minute after one peer joins`,
      unit: 'runs/min',
      samples: [perMinute(join.runs, join.ms)],
      note: `${join.runs} runs (${kinds(join)}) in ${join.rounds} rounds: nodes() once a round and one connect for the new peer; ${cpu(join)}`,
    },
  ];
}

function figures(
  erl: ErlCallResult,
  direct: { exec: number[]; file: number[] },
  cl: ClusterResult,
): Figure[] {
  if (!cl.memory || !cl.latency) return erlangRoundFigures(cl.erlang);
  const { exec, file, execConnectCalls, rounds } = cl.memory;
  const changes = cl.latency.changes;
  const total = changes.map((x) => x.total);
  const agentShare = changes.map((x) => x.agent);
  const operatorShare = changes.map((x) => x.operator);
  const firstCalls = changes.map((x) => x.firstCall);
  const timeouts = cl.latency.timeouts.length ? `; ${cl.latency.timeouts.length} changes timed out` : '';
  const roundsPerMin = perMinute(exec.rounds, exec.ms);
  const callsPerMin = perMinute(execConnectCalls, exec.ms);
  const erlFailures = erl.failures.length
    ? `; ${erl.failures.length} calls gave an unexpected answer (first: ${erl.failures[0]})`
    : '';
  return [
    memoryFigure(
      'exec',
      exec,
      `pollingInterval ${POLLING_INTERVAL}; the programs it runs are separate processes, not counted`,
    ),
    memoryFigure('file', file, `running beside the exec agent, same topology`),
    ...erlangRoundFigures(cl.erlang),
    {
      name: `agent, ${PEERS} peers, exec connector: connect calls per minute with nothing changing`,
      unit: 'calls/min',
      samples: [callsPerMin],
      note: `the exec hook is called per change only (0 expected), ${fmt(roundsPerMin)} rounds/min with ${PEERS} peers (pollingInterval ${POLLING_INTERVAL}); CPU over the same ${fmt(exec.ms / 1000)} s: the agent ${fmt(perMinute(exec.cpuSeconds, exec.ms))} CPU s/min, the programs it ran ${fmt(perMinute(exec.childCpuSeconds, exec.ms))} CPU s/min; the file agent ${fmt(perMinute(file.cpuSeconds, file.ms))} CPU s/min (a write only when the list changes)`,
    },
    // Rounds that call nothing leave no timestamps: the figure exists only when some did.
    ...(rounds.length
      ? [
          {
            name: `agent, ${PEERS} peers, exec connector: one round with nothing changing (first call → last call)`,
            unit: 'ms',
            samples: rounds.map((b) => b.endMs - b.startMs),
            note: `${rounds.map((b) => b.calls).join(', ')} connect calls per round, 4 at a time; from the exec script's timestamps`,
          },
        ]
      : []),
    {
      name: 'agent: pod IP set → connect call for the new peer (through the operator)',
      unit: 'ms',
      samples: total,
      note: `${p50p99(total)}; from the bench's PATCH of the pod status to the exec script's timestamp; of which the operator (PATCH → status seen on a WATCH from the bench) ${p50p99(operatorShare)}; one pod at a time, ${PEERS}–${PEERS + changes.length} peers listed, pollingInterval ${POLLING_INTERVAL}${timeouts}`,
    },
    {
      name: "agent: status shows the peer → connect call (the agent's share)",
      unit: 'ms',
      samples: agentShare,
      note: `${p50p99(agentShare)}; from the status event on the bench's own WATCH (the agent's arrives at about the same time) to the script's timestamp; the round that carries it connects every listed peer again, 4 at a time, in node-name order, so the new peer waits its turn: the round's first call came ${p50p99(firstCalls)} after the status`,
    },
    {
      name: 'erlang connector (erl_call): connect to a running node, not yet connected',
      unit: 'ms',
      samples: erl.firstConnect,
      note: `${p50p99(erl.firstConnect)}; net_kernel:connect_node/1 through erl_call against a local node on loopback (OTP ${erl.otp}), the distribution handshake included${erlFailures}`,
    },
    {
      name: 'erlang connector (erl_call): connect to a node already connected',
      unit: 'ms',
      samples: erl.againConnect,
      note: `${p50p99(erl.againConnect)}; a round does not do this per peer: it asks the node's nodes() once and calls erl_call only for the peers missing (measured below). CPU per erl_call run (all cases): erl_call ${fmt(erl.cpuPerCallMs.erlCall)} ms + the local node ${fmt(erl.cpuPerCallMs.localNode)} ms`,
    },
    {
      name: 'erlang connector (erl_call): disconnect',
      unit: 'ms',
      samples: erl.disconnect,
      note: p50p99(erl.disconnect),
    },
    {
      name: 'erlang connector (erl_call): connect to a node that is not running',
      unit: 'ms',
      samples: erl.notRunning,
      note: `${p50p99(erl.notRunning)}; the name is not registered with epmd, so the answer (false → Refused) is immediate; an unreachable host would take net_kernel's 7 s instead`,
    },
    {
      name: 'exec connector: one call (a /bin/sh script recording the call)',
      unit: 'ms',
      samples: direct.exec,
      note: `${p50p99(direct.exec)}; spawn of the program until its exit is seen`,
    },
    {
      name: `file connector: one round of ${PEERS} peers (atomic write, fsync, rename)`,
      unit: 'ms',
      samples: direct.file,
      note: `${p50p99(direct.file)}; the agent writes the file only when the list changes; on ${tmpdir()}`,
    },
  ];
}

export default async function run(): Promise<Figure[]> {
  if (ERLANG_ONLY) return figures(undefined as never, undefined as never, await measureOnCluster());
  const erl = await measureErlCall();
  const direct = await measureExecAndFile();
  const cluster = await measureOnCluster();
  return figures(erl, direct, cluster);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  try {
    for (const figure of await run()) console.log(formatFigure(figure));
  } finally {
    await runCleanups();
  }
}
