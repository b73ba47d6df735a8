/**
 * The operator on a real control plane (etcd + kube-apiserver, loopback, no kubelets: pods are
 * objects whose status the bench sets), run as users run it (`ctopo operator`), at 100 and
 * 1,000 matching pods, then 5,000:
 *
 * 1. Convergence: a pod's IP changes (PATCH of its status) → the ClusterTopology's status lists
 *    the new IP, seen on a WATCH of that one object from this process. Spaced changes (the next
 *    starts after the previous one is seen plus 100–200 ms) and bursts of 50 at once. The
 *    topology's pollingInterval is 10m while this runs, so only the watch path is measured.
 * 2. API cost per minute, from the API server's own counters (requests and response bytes on
 *    pods, per verb), for the operator (pollingInterval 10s, the default) and for libcluster's
 *    per-pod polling (N pollers, each listing all matching pods, 10 s after its last list ended),
 *    measured one after the other on the same server in the same run.
 * 3. The operator's resident memory (VmRSS; VmHWM for the peak) at each size, and the size of
 *    the ClusterTopology object at 5,000 peers against etcd's 1.5 MiB request limit.
 *
 * Knobs (environment): BENCH_LEVELS (default "100,1000"), BENCH_MEMORY_PODS (5000; 0 skips),
 * BENCH_CHANGES (100), BENCH_BURSTS (3), BENCH_WINDOWS (2), BENCH_OPERATOR_WINDOW_S (60),
 * BENCH_POLLER_WINDOW_S (30), BENCH_MAX_IN_FLIGHT (32), BENCH_RUNTIME_FLAGS (the operator's Node.js
 * flags instead of bin/ctopo.js's default, as CTOPO_RUNTIME_FLAGS; "" for Node's own defaults),
 * BENCH_BASELINE_CTOPO (another checkout's bin/ctopo.js: its spaced changes at BENCH_MEMORY_PODS
 * too, after the former design's). The memory figures name the flags the measured process ran with.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { performance } from 'node:perf_hooks';
import type { Figure } from './figure.js';
import { managedOperator, startBenchCluster, CT_GROUP_PATH, type BenchCluster } from './bench-cluster.js';
import { onCleanup, runIfScript } from './cleanup.js';
import { mapLimit } from './concurrency.js';
import { ipFor, podName, BENCH_SELECTOR } from './pods.js';
import { PodPollers } from './pod-pollers.js';
import { TopologyWatch } from './topology-watch.js';
import { listBytesPerMinute, listsPerMinute, meanBetween, ratios } from './api-cost.js';
import { parsePrometheusText, sumWhere, type Sample } from './prometheus.js';
import { formatBytes, percentile, perMinute, summarize } from './stats.js';
import { MemorySampler, nodeFlagsOf, processCpuSeconds, processMemory, type Memory } from './proc.js';
import type { CtopoProcess } from '../test/support/operator-process.js';
import { DESIGN_NAME, startDesign, type Design } from './designs.js';
import { waitFor as waitUntil } from '../test/support/wait.js';
import type { Section } from './report.js';
import { measureWindows, serverCpuPerMinute, type Window } from './windows.js';
import { measureWriteCost, type WriteCost } from './status-write-cost.js';
import { WRITE_WINDOW_MS } from '../operator/controller/controller.js';
import { measureFootprint, type Footprint } from './footprint.js';

const env = (k: string, d: number) => (process.env[k] !== undefined ? Number(process.env[k]) : d);
const LEVELS = (process.env.BENCH_LEVELS ?? '100,1000').split(',').map(Number).filter(Boolean);
const MEMORY_PODS = env('BENCH_MEMORY_PODS', 5000);
const CHANGES = env('BENCH_CHANGES', 100);
const BURSTS = env('BENCH_BURSTS', 3);
/** Spaced changes with the former design (for its p99 beside this one's). */
const FORMER_CHANGES = env('BENCH_FORMER_CHANGES', 50);
/** Spaced changes at BENCH_MEMORY_PODS: this design's (p99 goal), the former design's. */
const LARGE_CHANGES = env('BENCH_LARGE_CHANGES', 100);
const LARGE_FORMER_CHANGES = env('BENCH_LARGE_FORMER_CHANGES', 30);
/** Writes per variant in the status write cost at BENCH_MEMORY_PODS. */
const WRITE_COST_WRITES = env('BENCH_WRITE_COST_WRITES', 8);
const BURST_SIZE = 50;
const WINDOWS = env('BENCH_WINDOWS', 2);
const OPERATOR_WINDOW_S = env('BENCH_OPERATOR_WINDOW_S', 60);
const POLLER_WINDOW_S = env('BENCH_POLLER_WINDOW_S', 30);
const MAX_IN_FLIGHT = env('BENCH_MAX_IN_FLIGHT', 32);
/** Node.js options for the operator process (e.g. a heap limit, to see how much memory it needs). */
const RUNTIME_FLAGS = process.env.BENCH_RUNTIME_FLAGS;
const PERIOD_MS = 10_000;
const CHANGE_TIMEOUT_MS = 15_000;
const TOPOLOGY = 'bench';
const ETCD_REQUEST_LIMIT = 1.5 * 1024 * 1024; // etcd's default --max-request-bytes
const MB = 1e6;

const log = (l: string) =>
  process.stderr.write(`[operator bench ${new Date().toISOString().slice(11, 19)}] ${l}\n`);

/** Where a spaced change's time goes, from the API server's and the operator's own metrics. */
interface Diagnostics {
  /** Operator: reconciles and their mean duration (compute + status PATCH round trip). */
  reconciles: number;
  reconcileMs: number;
  /** API server: status PATCHes of the ClusterTopology and their mean duration. */
  statusPatches: number;
  statusPatchMs: number;
  /** API server: the bench's pod status PATCHes, mean duration. */
  podPatchMs: number;
}

interface Convergence {
  diag?: Diagnostics;
  spaced: number[];
  burst: number[];
  /** Per burst: from the first PATCH sent to the last change seen. */
  burstAll: number[];
  /** Per burst: status writes (PATCHes of clustertopologies/status the API server counted). */
  burstWrites: number[];
  timeouts: number;
}

interface LevelResult {
  n: number;
  initialSyncMs: number;
  convergence: Convergence;
  /** The former design's, on the same pods and topology, after this one's. */
  former?: Convergence;
  /** The ClusterTopology object's size after each design's changes (bytes). */
  objectBytes: { now: number; former?: number };
  operatorWindows: Window[];
  pollerWindows: Window[];
  pollerClient: {
    started: number;
    completed: number;
    failed: number;
    ms: number;
    p50: number;
    p99: number;
  }[];
  pollerPeakInFlight: number;
  memory: Memory[];
  heapUsedBytes: number;
  /** The operator process's own CPU per minute, per window. */
  operatorCpuPerMinute: number[];
  ctBytes: number;
}

let ipCounter = 1 << 21; // change IPs: disjoint from the initial ones (ipFor(i + 1))

async function setPollingInterval(c: BenchCluster, interval: string): Promise<number> {
  const obj = await c.kube.request<{ metadata: { generation: number } }>(
    'PATCH',
    `${CT_GROUP_PATH}/namespaces/${c.namespace}/clustertopologies/${TOPOLOGY}`,
    { body: { spec: { pollingInterval: interval } }, contentType: 'application/merge-patch+json' },
  );
  return obj.metadata.generation;
}

async function createTopology(c: BenchCluster, interval: string): Promise<void> {
  await c.kube.request('POST', `${CT_GROUP_PATH}/namespaces/${c.namespace}/clustertopologies`, {
    body: {
      apiVersion: 'cluster.netzlive.io/v1alpha1',
      kind: 'ClusterTopology',
      metadata: { name: TOPOLOGY, namespace: c.namespace },
      spec: { selector: BENCH_SELECTOR, pollingInterval: interval },
    },
  });
}

async function topologyObject(c: BenchCluster): Promise<Record<string, unknown>> {
  return c.kube.request('GET', `${CT_GROUP_PATH}/namespaces/${c.namespace}/clustertopologies/${TOPOLOGY}`);
}

function changePodIp(c: BenchCluster, i: number, ip: string): Promise<unknown> {
  return c.kube.request('PATCH', `/api/v1/namespaces/${c.namespace}/pods/${podName(i)}/status`, {
    body: { status: { podIP: ip, podIPs: [{ ip }] } },
    contentType: 'application/merge-patch+json',
  });
}

/**
 * One change: register the expectation, PATCH, wait for the watch to show it. Returns the
 * latency and when the change was seen (performance.now()), or undefined on timeout.
 */
async function oneChange(
  c: BenchCluster,
  watch: TopologyWatch,
  i: number,
): Promise<{ ms: number; seenAt: number } | undefined> {
  const ip = ipFor(ipCounter++);
  const pod = podName(i);
  const seen = watch.until((s) => s.ipOf(pod) === ip, CHANGE_TIMEOUT_MS, `${pod} → ${ip}`);
  const t0 = performance.now();
  await changePodIp(c, i, ip);
  try {
    const seenAt = await seen;
    return { ms: seenAt - t0, seenAt };
  } catch {
    return undefined;
  }
}

/** Status writes the API server has counted (PATCH of clustertopologies/status). */
const statusPatches = (samples: Sample[]) =>
  sumWhere(samples, 'apiserver_request_total', {
    resource: 'clustertopologies',
    subresource: 'status',
    verb: 'PATCH',
  });

async function operatorMetrics(op: CtopoProcess): Promise<Sample[]> {
  return parsePrometheusText((await op.get('/metrics')).body);
}

async function measureConvergence(
  c: BenchCluster,
  op: CtopoProcess,
  watch: TopologyWatch,
  n: number,
  changes: number,
  bursts: number,
): Promise<Convergence> {
  const out: Convergence = { spaced: [], burst: [], burstAll: [], burstWrites: [], timeouts: 0 };
  const deadline = Date.now() + 6 * 60_000;
  const [apiBefore, opBefore] = [await c.metrics(), await operatorMetrics(op)];
  // Stride 7919 (a prime not dividing n) visits distinct pods before repeating one.
  for (let k = 0; k < changes && Date.now() < deadline; k++) {
    const r = await oneChange(c, watch, (k * 7919 + 17) % n);
    if (r === undefined) out.timeouts++;
    else out.spaced.push(r.ms);
    // Spaced past the write window: a change within it is part of a burst (it waits for the window).
    await sleep(WRITE_WINDOW_MS + 100 + Math.random() * 100);
  }
  const [apiAfter, opAfter] = [await c.metrics(), await operatorMetrics(op)];
  const ctStatus = { resource: 'clustertopologies', subresource: 'status', verb: 'PATCH' };
  const statusPatch = meanBetween(apiBefore, apiAfter, 'apiserver_request_duration_seconds', ctStatus);
  const reconcile = meanBetween(opBefore, opAfter, 'ctopo_reconcile_duration_seconds');
  out.diag = {
    reconciles: reconcile.count,
    reconcileMs: reconcile.mean * 1000,
    statusPatches: statusPatch.count,
    statusPatchMs: statusPatch.mean * 1000,
    podPatchMs:
      meanBetween(apiBefore, apiAfter, 'apiserver_request_duration_seconds', {
        resource: 'pods',
        subresource: 'status',
        verb: 'PATCH',
      }).mean * 1000,
  };
  const size = Math.min(BURST_SIZE, Math.floor(n / 2));
  for (let b = 0; b < bursts && Date.now() < deadline; b++) {
    const pods = Array.from({ length: size }, (_, k) => (b * size + k) % n);
    const writesBefore = statusPatches(await c.metrics());
    const first = performance.now();
    const results = await mapLimit(pods, size, (i) => oneChange(c, watch, i));
    for (const r of results)
      if (r === undefined) out.timeouts++;
      else out.burst.push(r.ms);
    if (results.every((r) => r !== undefined))
      out.burstAll.push(Math.max(...results.map((r) => r!.seenAt)) - first);
    await sleep(1500); // a write that comes after the last change was seen is counted too
    out.burstWrites.push(statusPatches(await c.metrics()) - writesBefore);
  }
  return out;
}

async function measurePollers(
  c: BenchCluster,
  n: number,
): Promise<Pick<LevelResult, 'pollerWindows' | 'pollerClient' | 'pollerPeakInFlight'>> {
  const agent = await c.adminAgent(MAX_IN_FLIGHT);
  const pollers = new PodPollers({
    n,
    periodMs: PERIOD_MS,
    path: `/api/v1/namespaces/${c.namespace}/pods?labelSelector=${encodeURIComponent(BENCH_SELECTOR)}`,
    maxInFlight: MAX_IN_FLIGHT,
    get: c.rawGet,
    agent,
  });
  const stop = onCleanup('pod pollers', async () => {
    await pollers.stop();
    agent.destroy();
  });
  const pollerClient: LevelResult['pollerClient'] = [];
  try {
    pollers.start();
    await sleep(PERIOD_MS); // every poller has started once
    pollers.reset();
    const pollerWindows = await measureWindows(c, POLLER_WINDOW_S, WINDOWS, (ms) => {
      const s = pollers.reset();
      pollerClient.push({
        started: s.started,
        completed: s.completed,
        failed: s.failed,
        ms,
        p50: percentile(s.latencies, 50),
        p99: percentile(s.latencies, 99),
      });
      if (s.failed) log(`pollers: ${s.failed} failed requests; last: ${s.lastError}`);
    });
    return { pollerWindows, pollerClient, pollerPeakInFlight: pollers.peakInFlight };
  } finally {
    await stop();
  }
}

async function startOperatorProcess(
  c: BenchCluster,
  design: Design = 'now',
): Promise<{ op: CtopoProcess; stop: () => Promise<void> }> {
  return managedOperator(
    startDesign(
      design,
      c.state.kubeconfig,
      ['--namespaces', c.namespace, '--no-leader-elect'],
      RUNTIME_FLAGS !== undefined ? { CTOPO_RUNTIME_FLAGS: RUNTIME_FLAGS } : {},
    ),
  );
}

/**
 * A watch on the bench's ClusterTopology, then an operator process; `t0` is taken between the
 * two, so a time from t0 includes the operator's start. `stop` ends both.
 */
async function watchedOperator(
  c: BenchCluster,
  design: Design = 'now',
): Promise<{
  watch: TopologyWatch;
  op: CtopoProcess;
  t0: number;
  stop: () => Promise<void>;
}> {
  const watch = new TopologyWatch(c.kube, c.namespace, TOPOLOGY);
  const stopWatch = onCleanup('topology watch', () => watch.stop());
  await watch.start();
  const t0 = performance.now();
  try {
    const { op, stop: stopOperator } = await startOperatorProcess(c, design);
    return {
      watch,
      op,
      t0,
      stop: async () => {
        await stopOperator();
        await stopWatch();
      },
    };
  } catch (e) {
    await stopWatch();
    throw e;
  }
}

/**
 * Spaced changes and bursts with `design`'s operator on the pods and topology as they are (its
 * status already written by another operator): what the former design does beside this one.
 */
async function measureDesignConvergence(
  c: BenchCluster,
  n: number,
  design: Design,
  changes: number,
  bursts: number,
): Promise<{ convergence: Convergence; objectBytes: number }> {
  log(`${design} design at ${n} pods: ${changes} changes + ${bursts} bursts`);
  await setPollingInterval(c, '10m');
  const { watch, op, stop } = await watchedOperator(c, design);
  try {
    const key = { namespace: c.namespace, name: TOPOLOGY };
    await waitUntil(
      `the ${design} operator's first poll`,
      async () => (await op.metric('ctopo_last_successful_poll_timestamp_seconds', key)) !== undefined,
      240_000,
    );
    await sleep(3000); // its first status write, if it writes the status another way
    const convergence = await measureConvergence(c, op, watch, n, changes, bursts);
    return { convergence, objectBytes: Buffer.byteLength(JSON.stringify(await topologyObject(c))) };
  } finally {
    await stop();
  }
}

async function measureLevel(c: BenchCluster, n: number): Promise<LevelResult> {
  log(`— ${n} pods —`);
  await c.growPods(n, 24, log);

  log(`per-pod polling: ${n} pollers, ${WINDOWS} windows of ${POLLER_WINDOW_S} s`);
  const polling = await measurePollers(c, n);
  await sleep(2000);

  await setPollingInterval(c, '10m');
  const { watch, op, t0, stop } = await watchedOperator(c);
  try {
    const synced = await watch
      .reach((s) => s.peerCount === n, 180_000, `${n} peers`)
      .catch((e: Error) => {
        throw new Error(
          `${e.message} (status has ${watch.current?.peerCount} peers); operator said:\n${op.output.slice(-3000)}`,
        );
      });
    const initialSyncMs = synced - t0;
    log(
      `operator: ${n} peers after ${(initialSyncMs / 1000).toFixed(1)} s; convergence, ${CHANGES} changes + ${BURSTS} bursts`,
    );
    const convergence = await measureConvergence(c, op, watch, n, CHANGES, BURSTS);
    const s = summarize(convergence.spaced);
    log(
      `convergence: p50 ${s.p50.toFixed(0)} ms, p99 ${s.p99.toFixed(0)} ms, timeouts ${convergence.timeouts}`,
    );

    const generation = await setPollingInterval(c, '10s');
    await watch.reach((st) => st.observedGeneration >= generation, 30_000, 'the 10s interval to be observed');
    await sleep(PERIOD_MS / 2); // windows start and end between two polls
    log(`operator API cost: ${WINDOWS} windows of ${OPERATOR_WINDOW_S} s (pollingInterval 10s)`);
    const sampler = new MemorySampler(op.child.pid!, 5000);
    sampler.start();
    const operatorCpuPerMinute: number[] = [];
    let opCpu = await processCpuSeconds(op.child.pid!);
    const operatorWindows = await measureWindows(c, OPERATOR_WINDOW_S, WINDOWS, async (ms) => {
      const now = await processCpuSeconds(op.child.pid!);
      operatorCpuPerMinute.push(perMinute(now - opCpu, ms));
      opCpu = now;
    });
    const memory = await sampler.stop();
    const heapUsedBytes = sumWhere(await operatorMetrics(op), 'ctopo_operator_nodejs_heap_size_used_bytes');
    const ctBytes = Buffer.byteLength(JSON.stringify(await topologyObject(c)));
    await stop();
    const former = await measureDesignConvergence(c, n, 'former', FORMER_CHANGES, BURSTS);
    return {
      n,
      initialSyncMs,
      convergence,
      former: former.convergence,
      objectBytes: { now: ctBytes, former: former.objectBytes },
      operatorWindows,
      operatorCpuPerMinute,
      ...polling,
      memory,
      heapUsedBytes,
      ctBytes,
    };
  } finally {
    await stop();
  }
}

interface MemoryResult {
  n: number;
  synced: boolean;
  initialSyncMs?: number;
  settled: Memory[];
  polling: Memory[];
  ctBytes: number;
  statusBytes: number;
  peers: number;
  bytesPerPeer: number;
  convergence?: Convergence;
  heapUsedSettled: number;
  heapUsedPolling: number;
  operatorComplaints: string[];
  /** The Node.js flags the operator process ran with. */
  nodeFlags: string[];
  /** The former design's spaced changes at this size, after this one's. */
  former?: Convergence;
  /** Another checkout's operator (BENCH_BASELINE_CTOPO), as many spaced changes, after the former's. */
  baseline?: Convergence;
  /** A status write's cost on the API server, sent the former way, today's, and halfway. */
  writeCost?: WriteCost[];
}

/** The operator serving one topology that selects no pod: what the process costs by itself. */
async function measureBaseline(c: BenchCluster): Promise<{ rss: Memory[]; heapUsedBytes: number }> {
  log('— 0 pods: the operator by itself —');
  const { watch, op, stop } = await watchedOperator(c);
  try {
    await watch.reach((s) => s.object.status?.lastPollTime !== undefined, 60_000, 'a first status');
    await sleep(5000);
    const rss: Memory[] = [];
    for (let k = 0; k < 3; k++) {
      rss.push(await processMemory(op.child.pid!));
      await sleep(1000);
    }
    return {
      rss,
      heapUsedBytes: sumWhere(await operatorMetrics(op), 'ctopo_operator_nodejs_heap_size_used_bytes'),
    };
  } finally {
    await stop();
  }
}

async function measureMemory(c: BenchCluster, n: number): Promise<MemoryResult> {
  const result = await measureMemoryNow(c, n);
  if (!result.synced) return result;
  result.former = (await measureDesignConvergence(c, n, 'former', LARGE_FORMER_CHANGES, 0)).convergence;
  if (process.env.BENCH_BASELINE_CTOPO)
    result.baseline = (await measureDesignConvergence(c, n, 'baseline', LARGE_CHANGES, 0)).convergence;
  result.writeCost = await measureWriteCost(c, n, WRITE_COST_WRITES, log);
  return result;
}

async function measureMemoryNow(c: BenchCluster, n: number): Promise<MemoryResult> {
  log(`— ${n} pods: memory and status size —`);
  await c.growPods(n, 24, log);
  await setPollingInterval(c, '10m');
  const { watch, op, t0, stop } = await watchedOperator(c);
  try {
    let initialSyncMs: number | undefined;
    try {
      initialSyncMs = (await watch.reach((s) => s.peerCount === n, 240_000, `${n} peers`)) - t0;
      log(`operator: ${n} peers after ${(initialSyncMs / 1000).toFixed(1)} s`);
    } catch (e) {
      log(`operator did not publish ${n} peers: ${(e as Error).message}`);
    }
    await sleep(5000);
    const settled: Memory[] = [];
    for (let k = 0; k < 5; k++) {
      settled.push(await processMemory(op.child.pid!));
      await sleep(2000);
    }
    const heapUsedSettled = sumWhere(await operatorMetrics(op), 'ctopo_operator_nodejs_heap_size_used_bytes');
    const obj = await topologyObject(c);
    const status = (obj.status ?? {}) as { peers?: unknown[] };
    const peers = status.peers?.length ?? 0;
    const result: MemoryResult = {
      n,
      synced: initialSyncMs !== undefined,
      initialSyncMs,
      settled,
      polling: [],
      ctBytes: Buffer.byteLength(JSON.stringify(obj)),
      statusBytes: Buffer.byteLength(JSON.stringify(status)),
      peers,
      bytesPerPeer: peers ? Buffer.byteLength(JSON.stringify(status.peers)) / peers : NaN,
      heapUsedSettled,
      heapUsedPolling: NaN,
      operatorComplaints: [],
      nodeFlags: await nodeFlagsOf(op.child.pid!),
    };
    if (result.synced) {
      log(`convergence at ${n} pods: ${LARGE_CHANGES} changes`);
      result.convergence = await measureConvergence(c, op, watch, n, LARGE_CHANGES, 0);
    }
    const generation = await setPollingInterval(c, '10s');
    await watch
      .reach((st) => st.observedGeneration >= generation, 60_000, 'the 10s interval')
      .catch(() => {});
    log('memory with 10 s polls, 30 s');
    const sampler = new MemorySampler(op.child.pid!, 3000);
    sampler.start();
    await sleep(30_000);
    result.polling = await sampler.stop();
    result.heapUsedPolling = sumWhere(
      await operatorMetrics(op),
      'ctopo_operator_nodejs_heap_size_used_bytes',
    );
    result.operatorComplaints = op.output
      .split('\n')
      .filter((l) => /"level":"(warn|error)"|warn|error/i.test(l))
      .slice(-5)
      .map((l) => l.slice(0, 400));
    return result;
  } finally {
    await stop();
  }
}

const fmt = (x: number) => (Math.abs(x) >= 100 ? x.toFixed(0) : x.toFixed(2));
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const mb = (bytes: number) => `${fmt(bytes / MB)} MB`;
const cpuPerMinute = serverCpuPerMinute;

function diagnosticsNote(d: Diagnostics | undefined, changes: number): string {
  if (!d) return '';
  return `; where the time goes (means over the spaced changes): operator reconcile ${fmt(d.reconcileMs)} ms (${d.reconciles} reconciles for ${changes} changes; includes its status PATCH round trip), API server handling the status PATCH ${fmt(d.statusPatchMs)} ms (${d.statusPatches}), the bench's pod status PATCH ${fmt(d.podPatchMs)} ms`;
}

function levelFigures(r: LevelResult): Figure[] {
  const n = r.n;
  const conv = r.convergence;
  const figs: Figure[] = [];
  const p = (xs: number[], q: number) => percentile(xs, q);
  figs.push({
    name: `operator N=${n}: convergence, pod IP change → ClusterTopology status (spaced)`,
    unit: 'ms',
    samples: conv.spaced,
    note: `one change at a time; p50 ${fmt(p(conv.spaced, 50))} ms, p99 ${fmt(p(conv.spaced, 99))} ms; from sending the pod status PATCH to the WATCH event on the ClusterTopology; pollingInterval 10m (watch path only)${conv.timeouts ? `; ${conv.timeouts} changes not seen within ${CHANGE_TIMEOUT_MS / 1000} s` : ''}${diagnosticsNote(conv.diag, conv.spaced.length)}`,
  });
  figs.push({
    name: `operator N=${n}: convergence p99 (spaced)`,
    unit: 'ms',
    samples: conv.spaced.length ? [p(conv.spaced, 99)] : [],
    ...(n >= 1000 ? { goal: { op: '<=' as const, value: 1000 } } : {}),
    note: `nearest-rank p99 of ${conv.spaced.length} spaced changes (one number per run)`,
  });
  if (conv.burst.length)
    figs.push({
      name: `operator N=${n}: convergence in bursts of ${Math.min(BURST_SIZE, Math.floor(n / 2))} changes at once`,
      unit: 'ms',
      samples: conv.burst,
      note: `per change; p50 ${fmt(p(conv.burst, 50))} ms, p99 ${fmt(p(conv.burst, 99))} ms; whole burst visible after ${conv.burstAll.map((x) => fmt(x)).join(', ')} ms`,
    });
  figs.push(...burstFigures(r));
  figs.push({
    name: `operator N=${n}: initial sync (process start → all ${n} peers in status)`,
    unit: 's',
    samples: [r.initialSyncMs / 1000],
  });

  const opLists = r.operatorWindows.map(listsPerMinute);
  const opBytes = r.operatorWindows.map(listBytesPerMinute);
  const ppLists = r.pollerWindows.map(listsPerMinute);
  const ppBytes = r.pollerWindows.map(listBytesPerMinute);
  const opWatches = r.operatorWindows.map((w) => perMinute(w.podRequests.WATCH ?? 0, w.ms));
  const intended = n * (60_000 / PERIOD_MS);
  const bytesPerList = mean(ppBytes) / mean(ppLists);
  figs.push({
    name: `API cost N=${n}: operator, pod LIST requests/min`,
    unit: 'req/min',
    samples: opLists,
    note: `pollingInterval 10s: each poll is one LIST with limit=1 (a full re-list only when the watch cannot resume); besides ${opWatches.map(fmt).join(', ')} WATCH/min ended (a watch runs 290 s); ${OPERATOR_WINDOW_S} s windows`,
  });
  figs.push({
    name: `API cost N=${n}: operator, pod LIST response bytes/min`,
    unit: 'MB/min',
    samples: opBytes.map((b) => b / MB),
  });
  figs.push({
    name: `API cost N=${n}: per-pod polling (libcluster), pod LIST requests/min served`,
    unit: 'req/min',
    samples: ppLists,
    note: `intended ${intended}/min (${n} pods × 6); served ${ppLists.map((x) => `${((x / intended) * 100).toFixed(0)} %`).join(', ')} of it; ≤ ${MAX_IN_FLIGHT} in flight from the bench (peak ${r.pollerPeakInFlight}); ${POLLER_WINDOW_S} s windows scaled to per minute`,
  });
  figs.push({
    name: `API cost N=${n}: per-pod polling (libcluster), pod LIST response bytes/min served`,
    unit: 'MB/min',
    samples: ppBytes.map((b) => b / MB),
    note: `${mb(bytesPerList)} per list; at the intended rate ${fmt((intended * bytesPerList) / MB)} MB/min`,
  });
  figs.push({
    name: `API cost N=${n}: LIST requests, per-pod polling as served ÷ operator`,
    unit: '×',
    samples: ratios(ppLists, opLists),
    goal: { op: '>=', value: n / 2 },
    note: 'window i of one against window i of the other',
  });
  figs.push({
    name: `API cost N=${n}: LIST requests, per-pod polling as intended (${intended}/min) ÷ operator`,
    unit: '×',
    samples: opLists.map((o) => intended / o),
    goal: { op: '>=', value: n / 2 },
    note: 'what the pods would ask for if the API server kept up, against each operator window',
  });
  figs.push({
    name: `API cost N=${n}: LIST bytes, per-pod polling as served ÷ operator`,
    unit: '×',
    samples: ratios(ppBytes, opBytes),
    note: `as intended: ${fmt((intended * bytesPerList) / mean(opBytes))}×`,
  });
  figs.push({
    name: `API cost N=${n}: API server + etcd CPU, operator`,
    unit: 'CPU s/min',
    samples: r.operatorWindows.map(cpuPerMinute),
    note: `kube-apiserver ${fmt(mean(r.operatorWindows.map((w) => perMinute(w.cpu.apiserver, w.ms))))}, etcd ${fmt(mean(r.operatorWindows.map((w) => perMinute(w.cpu.etcd, w.ms))))} CPU s/min (utime+stime; includes their idle housekeeping)`,
  });
  figs.push({
    name: `API cost N=${n}: API server + etcd CPU, per-pod polling as served`,
    unit: 'CPU s/min',
    samples: r.pollerWindows.map(cpuPerMinute),
    note: `kube-apiserver ${fmt(mean(r.pollerWindows.map((w) => perMinute(w.cpu.apiserver, w.ms))))}, etcd ${fmt(mean(r.pollerWindows.map((w) => perMinute(w.cpu.etcd, w.ms))))} CPU s/min; the machine has 2 cores = 120 CPU s/min, shared with the bench and other work`,
  });
  // A heartbeat comes about once a minute, so one window holds 0, 1 or 2 of them: use all windows together.
  const writesPerMinute = perMinute(
    r.operatorWindows.reduce((a, w) => a + w.statusWrites, 0),
    r.operatorWindows.reduce((a, w) => a + w.ms, 0),
  );
  figs.push({
    name: `API cost N=${n}: agents' share, computed: ${n} agents × status writes/min × ClusterTopology size`,
    unit: 'MB/min',
    samples: [(n * writesPerMinute * r.ctBytes) / MB],
    note: `not measured: each agent WATCHes the object and receives it whole on every write; ${fmt(writesPerMinute)} status writes/min over all ${WINDOWS} windows with no pod changing (the lastPollTime heartbeat), object ${formatBytes(r.ctBytes)}`,
  });
  figs.push({
    name: `operator N=${n}: operator CPU with 10 s polls`,
    unit: 'CPU s/min',
    samples: r.operatorCpuPerMinute,
    note: 'utime+stime of the operator process over each window',
  });
  figs.push({
    name: `operator N=${n}: resident memory (VmRSS) with 10 s polls`,
    unit: 'MB',
    samples: r.memory.map((m) => m.rssBytes / MB),
    note: `readings every 5 s over ${WINDOWS} × ${OPERATOR_WINDOW_S} s; V8 heap in use at the end ${mb(r.heapUsedBytes)}`,
  });
  figs.push({
    name: `operator N=${n}: peak resident memory (VmHWM)`,
    unit: 'MB',
    samples: r.memory.length ? [Math.max(...r.memory.map((m) => m.peakRssBytes)) / MB] : [],
    note: 'since process start (initial list, convergence, polls)',
  });
  return figs;
}

/**
 * Bursts, this design beside the former one (same pods, same topology, same run): status writes
 * per burst as the API server counted them, what they cost the readers (each watching reader
 * receives the whole object on every write), and the latency of each change.
 */
function burstFigures(r: LevelResult): Figure[] {
  const figs: Figure[] = [];
  const size = Math.min(BURST_SIZE, Math.floor(r.n / 2));
  const designs: [Design, Convergence | undefined, number | undefined][] = [
    ['now', r.convergence, r.objectBytes.now],
    ['former', r.former, r.objectBytes.former],
  ];
  for (const [design, conv, bytes] of designs) {
    if (!conv?.burstWrites.length || bytes === undefined) continue;
    const label = design === 'now' ? 'now' : 'before (#29)';
    figs.push({
      name: `operator N=${r.n}: status writes per burst of ${size} changes, ${label}`,
      unit: 'writes',
      samples: conv.burstWrites,
      ...(design === 'now' ? { goal: { op: '<=' as const, value: 5 } } : {}),
      note: `counted by the API server (PATCH of clustertopologies/status) from the first change sent until 1.5 s after the last was seen; ${DESIGN_NAME[design]}`,
    });
    for (const readers of [100, 1000])
      figs.push({
        name: `operator N=${r.n}: ClusterTopology bytes to ${readers} readers per burst of ${size} changes, ${label}`,
        unit: 'MB',
        samples: conv.burstWrites.map((w) => (w * bytes * readers) / MB),
        note: `computed: writes × object size (${formatBytes(bytes)}) × readers — every watching reader receives the whole object on each write (reader-traffic measures it)`,
      });
    if (conv.burst.length)
      figs.push({
        name: `operator N=${r.n}: convergence p99 per change in bursts of ${size}, ${label}`,
        unit: 'ms',
        samples: [percentile(conv.burst, 99)],
        note: `nearest-rank p99 of ${conv.burst.length} changes in ${conv.burstWrites.length} bursts; p50 ${fmt(percentile(conv.burst, 50))} ms`,
      });
    if (design === 'former' && conv.spaced.length)
      figs.push({
        name: `operator N=${r.n}: convergence p99 (spaced), before (#29)`,
        unit: 'ms',
        samples: [percentile(conv.spaced, 99)],
        note: `nearest-rank p99 of ${conv.spaced.length} spaced changes; p50 ${fmt(percentile(conv.spaced, 50))} ms${diagnosticsNote(conv.diag, conv.spaced.length)}`,
      });
  }
  return figs;
}

function baselineFigure(b: { rss: Memory[]; heapUsedBytes: number }): Figure {
  return {
    name: 'operator, 0 pods: resident memory (VmRSS) of the process by itself',
    unit: 'MB',
    samples: b.rss.map((m) => m.rssBytes / MB),
    note: `one topology selecting no pod; V8 heap in use ${mb(b.heapUsedBytes)}`,
  };
}

function footprintFigures(fs: Footprint[]): Figure[] {
  return [
    {
      name: 'process footprint: a bare Node.js process',
      unit: 'MB',
      samples: fs.map((f) => f.bareBytes / MB),
      note: 'VmRSS of `node` before importing anything, each sample a fresh process',
    },
    {
      name: 'process footprint: + operator/kube/client.js (imports @kubernetes/client-node)',
      unit: 'MB',
      samples: fs.map((f) => f.kubeClientBytes / MB),
      note: `adds ${fmt(mean(fs.map((f) => (f.kubeClientBytes - f.bareBytes) / MB)))} MB before a single request`,
    },
    {
      name: 'process footprint: + the whole CLI (operator/cli/main.js)',
      unit: 'MB',
      samples: fs.map((f) => f.cliBytes / MB),
      note: 'everything `ctopo operator` loads, before it starts',
    },
  ];
}

function memoryFigures(m: MemoryResult): Figure[] {
  const goal = { op: '<=' as const, value: 150 };
  const figs: Figure[] = [
    {
      name: `operator N=${m.n}: resident memory (VmRSS), settled`,
      unit: 'MB',
      samples: m.settled.map((x) => x.rssBytes / MB),
      goal,
      note: `pollingInterval 10m, after the status settled; V8 heap in use ${mb(m.heapUsedSettled)}; Node.js flags: ${m.nodeFlags.join(' ') || 'none'}${m.synced ? '' : ' — the status never showed all peers'}`,
    },
    {
      name: `operator N=${m.n}: resident memory (VmRSS) with 10 s polls`,
      unit: 'MB',
      samples: m.polling.map((x) => x.rssBytes / MB),
      goal,
      note: `every 3 s over 30 s; each poll lists ${m.n} pods in pages of 500; V8 heap in use at the end ${mb(m.heapUsedPolling)}`,
    },
    {
      name: `operator N=${m.n}: peak resident memory (VmHWM)`,
      unit: 'MB',
      samples: [Math.max(...[...m.settled, ...m.polling].map((x) => x.peakRssBytes)) / MB],
      goal,
      note: 'since process start: initial list of all pods, first status write, changes, polls',
    },
    {
      name: `ClusterTopology object size at ${m.n} pods`,
      unit: 'bytes',
      samples: [m.ctBytes],
      goal: { op: '<=', value: ETCD_REQUEST_LIMIT },
      note: `${formatBytes(m.ctBytes)} = ${((m.ctBytes / ETCD_REQUEST_LIMIT) * 100).toFixed(0)} % of etcd's default 1.5 MiB request limit; status ${formatBytes(m.statusBytes)}, ${m.peers} peers, ${fmt(m.bytesPerPeer)} bytes per peer (compact JSON)`,
    },
    {
      name: `peers that fit in etcd's 1.5 MiB (extrapolated from ${m.n})`,
      unit: 'peers',
      samples: [Math.floor((ETCD_REQUEST_LIMIT - (m.ctBytes - m.bytesPerPeer * m.peers)) / m.bytesPerPeer)],
      note: 'with these pod-name and IP lengths; longer names (annotation host names) fit fewer',
    },
  ];
  if (m.initialSyncMs !== undefined)
    figs.push({
      name: `operator N=${m.n}: initial sync (process start → all ${m.n} peers in status)`,
      unit: 's',
      samples: [m.initialSyncMs / 1000],
    });
  if (m.convergence?.spaced.length)
    figs.push(
      {
        name: `operator N=${m.n}: convergence, pod IP change → status (spaced)`,
        unit: 'ms',
        samples: m.convergence.spaced,
        note: `p50 ${fmt(percentile(m.convergence.spaced, 50))} ms, p99 ${fmt(percentile(m.convergence.spaced, 99))} ms; pollingInterval 10m${diagnosticsNote(m.convergence.diag, m.convergence.spaced.length)}`,
      },
      {
        name: `operator N=${m.n}: convergence p99 (spaced), now`,
        unit: 'ms',
        samples: [percentile(m.convergence.spaced, 99)],
        goal: { op: '<=', value: 500 },
        note: `nearest-rank p99 of ${m.convergence.spaced.length} spaced changes`,
      },
    );
  if (m.former?.spaced.length)
    figs.push({
      name: `operator N=${m.n}: convergence p99 (spaced), before (#29)`,
      unit: 'ms',
      samples: [percentile(m.former.spaced, 99)],
      note: `nearest-rank p99 of ${m.former.spaced.length} spaced changes, same pods, same run, after this design's; p50 ${fmt(percentile(m.former.spaced, 50))} ms${diagnosticsNote(m.former.diag, m.former.spaced.length)}`,
    });
  if (m.baseline?.spaced.length)
    figs.push({
      name: `operator N=${m.n}: convergence p99 (spaced), baseline`,
      unit: 'ms',
      samples: [percentile(m.baseline.spaced, 99)],
      note: `\`ctopo operator\` of BENCH_BASELINE_CTOPO (another checkout), nearest-rank p99 of ${m.baseline.spaced.length} spaced changes, same pods, same run, after this design's and the former's; p50 ${fmt(percentile(m.baseline.spaced, 50))} ms${diagnosticsNote(m.baseline.diag, m.baseline.spaced.length)}`,
    });
  for (const w of m.writeCost ?? [])
    figs.push({
      name: `status write at ${w.variant.peers ?? m.n} peers, one peer changed — ${w.variant.name}: API server handling`,
      unit: 'ms',
      samples: [w.serverMs],
      note: `apiserver_request_duration_seconds mean over ${w.wallMs.length} writes (variants interleaved, no operator running); from send to answer p50 ${fmt(percentile(w.wallMs, 50))} ms; request ${formatBytes(w.requestBytes)}, answer ${formatBytes(w.answerBytes)}, object ${formatBytes(w.objectBytes)}`,
    });
  return figs;
}

function comparisonSection(levels: LevelResult[]): Section {
  const rows: string[] = [
    '| pods | who | LIST req/min | LIST MB/min | other pod requests/min | API server + etcd CPU s/min |',
    '|---:|---|---:|---:|---|---:|',
  ];
  for (const r of levels) {
    const other = (ws: Window[]) => {
      const verbs = new Set(ws.flatMap((w) => Object.keys(w.podRequests)).filter((v) => v !== 'LIST'));
      return (
        [...verbs]
          .map((v) => `${v} ${fmt(mean(ws.map((w) => perMinute(w.podRequests[v] ?? 0, w.ms))))}`)
          .join(', ') || '—'
      );
    };
    const opL = mean(r.operatorWindows.map(listsPerMinute));
    const ppL = mean(r.pollerWindows.map(listsPerMinute));
    const opB = mean(r.operatorWindows.map(listBytesPerMinute));
    const ppB = mean(r.pollerWindows.map(listBytesPerMinute));
    const opCpu = mean(r.operatorWindows.map(cpuPerMinute));
    const ppCpu = mean(r.pollerWindows.map(cpuPerMinute));
    const intended = r.n * 6;
    const perList = ppB / ppL;
    rows.push(
      `| ${r.n} | operator (this design), pollingInterval 10s | ${fmt(opL)} | ${fmt(opB / MB)} | ${other(r.operatorWindows)} | ${fmt(opCpu)} |`,
      `| ${r.n} | per-pod polling, as served | ${fmt(ppL)} | ${fmt(ppB / MB)} | ${other(r.pollerWindows)} | ${fmt(ppCpu)} |`,
      `| ${r.n} | per-pod polling, as intended (${r.n} × 6/min; bytes = bytes per list × rate) | ${intended} | ${fmt((intended * perList) / MB)} | | |`,
      `| ${r.n} | ratio as served (as intended) | ${fmt(ppL / opL)} (${fmt(intended / opL)}) | ${fmt(ppB / opB)} (${fmt((intended * perList) / opB)}) | | ${fmt(ppCpu / opCpu)} |`,
    );
  }
  const client = levels
    .map(
      (r) =>
        `- ${r.n} pollers: ${r.pollerClient
          .map(
            (c) =>
              `${c.completed} lists in ${(c.ms / 1000).toFixed(0)} s (${c.failed} failed), latency from a poller's turn to its answer p50 ${fmt(c.p50)} ms / p99 ${fmt(c.p99)} ms`,
          )
          .join('; ')}`,
    )
    .join('\n');
  return {
    title: 'Operator versus per-pod polling (same API server, same run)',
    markdown: [
      'Counted by the API server (`apiserver_request_total`, `apiserver_response_sizes_sum`, resource=pods), means over the windows; ' +
        'CPU is utime+stime of the kube-apiserver and etcd processes over the same windows. ' +
        `Operator windows: ${OPERATOR_WINDOW_S} s. Per-pod polling windows: ${POLLER_WINDOW_S} s, scaled to per minute. ` +
        'WATCH requests are counted when they end, and the server records no response size for watches. ' +
        'The per-pod pollers follow libcluster: list everything, then wait 10 s; at most ' +
        `${MAX_IN_FLIGHT} lists in flight from the bench process (bodies counted, not parsed; one keep-alive connection per slot).`,
      '',
      ...rows,
      '',
      'What the bench process saw of its pollers:',
      client,
    ].join('\n'),
  };
}

function crdSection(drift: string[]): Section {
  return {
    title: 'The CRD file, as kubectl reads it, is not the CRD the generator meant',
    markdown: [
      '`kubectl apply -f crds/clustertopologies.cluster.netzlive.io.yaml` reads the file as YAML 1.1, where unquoted `Yes`/`No` are booleans; the `yaml` package (YAML 1.2) reads strings. Where the two readings differ:',
      '',
      '```',
      ...drift,
      '```',
      '',
      'With the CRD installed that way, the API server rejects every status whose failure-domain analysis has a partition verdict (`Unsupported value: "No": supported values: "true", "false", "Maybe"`) — any topology whose pods span two or more zones — so the operator never publishes peers for it. ' +
        (process.env.BENCH_CRD_AS_KUBECTL_READS_IT
          ? 'This run installed the file as kubectl reads it.'
          : 'This run installed the CRD as the YAML 1.2 parser reads it (sent to kubectl as JSON) so that the operator could be measured; BENCH_CRD_AS_KUBECTL_READS_IT=1 installs the file as is.'),
    ].join('\n'),
  };
}

function sizeSection(mem: MemoryResult): Section {
  const share = mem.ctBytes / ETCD_REQUEST_LIMIT;
  return {
    title: `The ClusterTopology object at ${mem.n} peers`,
    markdown: [
      `The whole object is ${formatBytes(mem.ctBytes)} (${mem.ctBytes} bytes; status ${formatBytes(mem.statusBytes)}), ` +
        `${(share * 100).toFixed(0)} % of etcd's default request limit of 1.5 MiB (\`--max-request-bytes\`, 1,572,864 bytes; the API server's own limit on a request body is 3 MiB). ` +
        `Each peer costs ${fmt(mem.bytesPerPeer)} bytes of compact JSON with deployment-style pod names (\`web-7d9f8c6b5-x2k4q\`) and IPv4 hosts.` +
        (share > 0.66
          ? ` **That is close to the limit: a topology cannot hold many more peers in one object (about ${Math.floor((ETCD_REQUEST_LIMIT - (mem.ctBytes - mem.bytesPerPeer * mem.peers)) / mem.bytesPerPeer)} with these names, fewer with DNS host names from annotations). Every status write also sends the whole peers array (a merge patch replaces arrays), and every agent receives the whole object on each write.**`
          : ''),
      mem.synced
        ? ''
        : `\n**The operator did not publish all ${mem.n} peers.** Its last warnings:\n\n\`\`\`\n${mem.operatorComplaints.join('\n')}\n\`\`\``,
    ].join('\n'),
  };
}

export async function runDetailed(): Promise<{ figures: Figure[]; sections: Section[] }> {
  const cluster = await startBenchCluster(log);
  try {
    await createTopology(cluster, '10m');
    const footprints: Footprint[] = [];
    for (let k = 0; k < 3; k++) footprints.push(await measureFootprint());
    const baseline = await measureBaseline(cluster);
    const levels: LevelResult[] = [];
    for (const n of LEVELS) levels.push(await measureLevel(cluster, n));
    const mem = MEMORY_PODS > 0 ? await measureMemory(cluster, MEMORY_PODS) : undefined;
    const figures = [
      ...footprintFigures(footprints),
      baselineFigure(baseline),
      ...levels.flatMap(levelFigures),
      ...(mem ? memoryFigures(mem) : []),
    ];
    const sections: Section[] = [];
    if (RUNTIME_FLAGS !== undefined)
      sections.push({
        title: 'Operator run with other runtime flags',
        markdown: `Every operator process in this run had \`CTOPO_RUNTIME_FLAGS=${RUNTIME_FLAGS}\` (BENCH_RUNTIME_FLAGS): its memory figures are not those of the default settings.`,
      });
    if (cluster.crdDrift.length) sections.push(crdSection(cluster.crdDrift));
    if (levels.length) sections.push(comparisonSection(levels));
    if (mem) sections.push(sizeSection(mem));
    return { figures, sections };
  } finally {
    await cluster.stop();
  }
}

export default async function run(): Promise<Figure[]> {
  return (await runDetailed()).figures;
}

await runIfScript(import.meta.url, runDetailed);
