/**
 * One operator serving many topologies on a real control plane: 100 topologies of 100 pods each
 * (10,000 pods), all in one namespace and then one per namespace in 100 namespaces, each layout
 * served first by the former design (bench/former-operator.ts) and then by today's, in one run.
 *
 * For each: the initial sync (operator start → every topology lists its pods), then, with nothing
 * changing and pollingInterval 10s, measured windows — the operator's CPU and resident memory,
 * the API server's and etcd's CPU, the pod LIST requests and bytes and the pod watches open as
 * the API server counts them, the status writes — when each topology was last polled (how the
 * polls spread over the interval), and then single pod changes, one at a time, each waited for in
 * its topology's status (a WATCH of every ClusterTopology from this process).
 *
 * Knobs (environment): BENCH_MANY_TOPOLOGIES (100), BENCH_MANY_PODS (pods per topology, 100),
 * BENCH_MANY_LAYOUTS ("one,many"), BENCH_MANY_DESIGNS ("former,now"), BENCH_MANY_WINDOWS (2),
 * BENCH_MANY_WINDOW_S (60), BENCH_MANY_CHANGES (50).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { performance } from 'node:perf_hooks';
import type { Figure } from './figure.js';
import { CT_GROUP_PATH, startBenchCluster, type BenchCluster } from './bench-cluster.js';
import { onCleanup, runIfScript } from './cleanup.js';
import { mapLimit } from './concurrency.js';
import { ipFor, podManifest, podName, podStatus } from './pods.js';
import { listBytesPerMinute, listsPerMinute } from './api-cost.js';
import { parsePrometheusText, sumWhere, type Sample } from './prometheus.js';
import { percentile, perMinute } from './stats.js';
import { MemorySampler, processCpuSeconds, type Memory } from './proc.js';
import { measureWindows, serverCpu, serverCpuPerMinute, type Window } from './windows.js';
import { DESIGN_NAME, DESIGN_SHORT, startDesign, type Design } from './designs.js';
import type { Section } from './report.js';
import type { Kube, KubeObject, WatchHandle } from '../operator/kube/client.js';
import { ApiError } from '../operator/kube/client.js';

const env = (k: string, d: number) => (process.env[k] !== undefined ? Number(process.env[k]) : d);
const TOPOLOGIES = env('BENCH_MANY_TOPOLOGIES', 100);
const PODS = env('BENCH_MANY_PODS', 100);
const WINDOWS = env('BENCH_MANY_WINDOWS', 2);
const WINDOW_S = env('BENCH_MANY_WINDOW_S', 60);
const CHANGES = env('BENCH_MANY_CHANGES', 50);
const LAYOUTS = (process.env.BENCH_MANY_LAYOUTS ?? 'one,many').split(',').filter(Boolean) as Layout[];
const DESIGNS = (process.env.BENCH_MANY_DESIGNS ?? 'former,now').split(',').filter(Boolean) as Design[];
const INTERVAL_S = 10;
const SYNC_TIMEOUT_MS = 600_000;
const CHANGE_TIMEOUT_MS = 20_000;
const MB = 1e6;
const TOPOLOGY_LABEL = 'bench/topology';

type Layout = 'one' | 'many';
/** IPs for changes: past every pod's first IP, never one a pod had before (across runs too). */
let nextIp = 1 << 21;
const LAYOUT_NAME: Record<Layout, string> = { one: 'one namespace', many: `${TOPOLOGIES} namespaces` };

const log = (l: string) =>
  process.stderr.write(`[many-topologies ${new Date().toISOString().slice(11, 19)}] ${l}\n`);

/** Topology k of a layout: where it is, and its pods' global indexes (for names and IPs). */
interface Placement {
  namespace: string;
  name: string;
  key: string;
}
function placement(layout: Layout, k: number): Placement {
  const namespace = layout === 'one' ? 'many-one' : `many-${k}`;
  const name = `t-${k}`;
  return { namespace, name, key: `${namespace}/${name}` };
}
const namespacesOf = (layout: Layout) => [
  ...new Set(Array.from({ length: TOPOLOGIES }, (_, k) => placement(layout, k).namespace)),
];
/** Pod j of topology k: its index in its namespace (names) and its IP's index (unique in the run). */
const podIndex = (layout: Layout, k: number, j: number) => (layout === 'one' ? k * PODS + j : j);
const ipIndex = (layout: Layout, k: number, j: number) =>
  (layout === 'one' ? 0 : TOPOLOGIES * PODS) + k * PODS + j + 1;

/** Every ClusterTopology's peers (pod → host part of its node name), kept current by one WATCH. */
class TopologiesWatch {
  private readonly peers = new Map<string, Map<string, string>>();
  private readonly waiters = new Set<{ test: () => boolean; resolve: (at: number) => void }>();
  private handle: WatchHandle | undefined;
  private stopped = false;

  constructor(private readonly kube: Kube) {}

  async start(): Promise<void> {
    const list = await this.kube.request<{ items: KubeObject[]; metadata: { resourceVersion: string } }>(
      'GET',
      `${CT_GROUP_PATH}/clustertopologies`,
    );
    for (const o of list.items) this.take(o);
    await this.open(list.metadata.resourceVersion);
  }

  private async open(rv: string): Promise<void> {
    this.handle = await this.kube.watch(
      `${CT_GROUP_PATH}/clustertopologies`,
      { resourceVersion: rv, allowWatchBookmarks: true },
      (type, o) => {
        if (type === 'BOOKMARK') rv = o.metadata.resourceVersion ?? rv;
        else if (type === 'DELETED') this.peers.delete(`${o.metadata.namespace}/${o.metadata.name}`);
        else if (type === 'ADDED' || type === 'MODIFIED') {
          rv = o.metadata.resourceVersion ?? rv;
          this.take(o);
        }
      },
      () => {
        if (!this.stopped) setTimeout(() => void this.start().catch(() => {}), 200).unref();
      },
      15 * 60_000,
    );
  }

  private take(o: KubeObject): void {
    const at = performance.now();
    const status = o.status as
      { peers?: { pod: string; nodeName: string }[]; lastResponse?: unknown } | undefined;
    const key = `${o.metadata.namespace}/${o.metadata.name}`;
    if (status?.peers && status.lastResponse)
      this.peers.set(
        key,
        new Map(status.peers.map((p) => [p.pod, p.nodeName.slice(p.nodeName.indexOf('@') + 1)])),
      );
    else this.peers.delete(key);
    for (const w of [...this.waiters])
      if (w.test()) {
        this.waiters.delete(w);
        w.resolve(at);
      }
  }

  peerCount(key: string): number {
    return this.peers.get(key)?.size ?? 0;
  }

  ipOf(key: string, pod: string): string | undefined {
    return this.peers.get(key)?.get(pod);
  }

  /** Resolves with performance.now() of the event after which `test` holds (at once if it does). */
  until(test: () => boolean, timeoutMs: number, what: string): Promise<number> {
    if (test()) return Promise.resolve(performance.now());
    return new Promise((resolve, reject) => {
      const w = {
        test,
        resolve: (at: number) => {
          clearTimeout(timer);
          resolve(at);
        },
      };
      const timer = setTimeout(() => {
        this.waiters.delete(w);
        reject(new Error(`no ${what} within ${timeoutMs / 1000} s`));
      }, timeoutMs);
      this.waiters.add(w);
    });
  }

  stop(): void {
    this.stopped = true;
    this.handle?.abort();
  }
}

async function createLayout(c: BenchCluster, layout: Layout): Promise<void> {
  for (const ns of namespacesOf(layout))
    await c.kube
      .request('POST', '/api/v1/namespaces', {
        body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } },
      })
      .catch((e: unknown) => {
        if (!(e instanceof ApiError && e.code === 409)) throw e;
      });
  const startedAt = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const all = Array.from({ length: TOPOLOGIES * PODS }, (_, x) => [Math.floor(x / PODS), x % PODS] as const);
  const t0 = Date.now();
  let done = 0;
  await mapLimit(all, 32, async ([k, j]) => {
    const { namespace } = placement(layout, k);
    const i = podIndex(layout, k, j);
    const pod = podManifest(i, namespace) as { metadata: { labels: Record<string, string> } };
    pod.metadata.labels[TOPOLOGY_LABEL] = `t-${k}`;
    await c.kube
      .request('POST', `/api/v1/namespaces/${namespace}/pods`, { body: pod })
      .catch((e: unknown) => {
        if (!(e instanceof ApiError && e.code === 409)) throw e;
      });
    await c.kube.request('PATCH', `/api/v1/namespaces/${namespace}/pods/${podName(i)}/status`, {
      body: podStatus(i, ipFor(ipIndex(layout, k, j)), startedAt),
      contentType: 'application/merge-patch+json',
    });
    if (++done % 2000 === 0) log(`${LAYOUT_NAME[layout]}: pods ${done}/${all.length}`);
  });
  log(`${LAYOUT_NAME[layout]}: ${all.length} pods in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  await mapLimit(
    Array.from({ length: TOPOLOGIES }, (_, k) => placement(layout, k)),
    16,
    (p) =>
      c.kube.request('POST', `${CT_GROUP_PATH}/namespaces/${p.namespace}/clustertopologies`, {
        body: {
          apiVersion: 'cluster.netzlive.io/v1alpha1',
          kind: 'ClusterTopology',
          metadata: { name: p.name, namespace: p.namespace },
          spec: { selector: `${TOPOLOGY_LABEL}=${p.name}`, pollingInterval: `${INTERVAL_S}s` },
        },
      }),
  );
}

/** The layout's topologies go (their Leases stay, harmless); its pods stay, selected by nothing. */
async function removeTopologies(c: BenchCluster, layout: Layout): Promise<void> {
  await mapLimit(
    Array.from({ length: TOPOLOGIES }, (_, k) => placement(layout, k)),
    16,
    (p) => c.kube.request('DELETE', `${CT_GROUP_PATH}/namespaces/${p.namespace}/clustertopologies/${p.name}`),
  );
}

/** Every topology of the layout without a status: each design starts from nothing. */
async function clearStatuses(c: BenchCluster, layout: Layout): Promise<void> {
  await mapLimit(
    Array.from({ length: TOPOLOGIES }, (_, k) => placement(layout, k)),
    16,
    (p) =>
      c.kube.request(
        'PATCH',
        `${CT_GROUP_PATH}/namespaces/${p.namespace}/clustertopologies/${p.name}/status`,
        {
          body: { status: null },
          contentType: 'application/merge-patch+json',
          ignoreBody: true,
        },
      ),
  );
}

interface Run {
  layout: Layout;
  design: Design;
  initialSyncMs?: number;
  /** Operator start → the first topology complete. */
  firstSyncedMs?: number;
  /** CPU seconds spent from the operator's start to the initial sync: API server + etcd, operator. */
  syncCpu?: { server: number; operator: number };
  windows: Window[];
  operatorCpu: number[];
  memory: Memory[];
  /** The topologies' last successful polls, as their phase within the interval (s), at the end. */
  pollPhases: number[];
  changes: number[];
  timeouts: number;
  synced: boolean;
  /** Pod watches open before the operator started (the API server's own). */
  ownWatches: number;
}

async function operatorSamples(port: number): Promise<Sample[]> {
  const res = await fetch(`http://127.0.0.1:${port}/metrics`);
  return parsePrometheusText(await res.text());
}

async function measureRun(c: BenchCluster, layout: Layout, design: Design): Promise<Run> {
  log(`— ${LAYOUT_NAME[layout]}, ${design} —`);
  await clearStatuses(c, layout);
  const watch = new TopologiesWatch(c.kube);
  const stopWatch = onCleanup('topologies watch', () => watch.stop());
  await watch.start();
  // The API server holds a pod watch of its own (its admission's informer): counted apart.
  const ownWatches = sumWhere(await c.metrics(), 'apiserver_longrunning_requests', {
    resource: 'pods',
    verb: 'WATCH',
  });
  const cpu0 = await serverCpu(c);
  const requests0 = await c.metrics();
  const t0 = performance.now();
  const op = startDesign(design, c.state.kubeconfig, ['--no-leader-elect']);
  const stopOp = onCleanup(`${design} operator`, async () => void (await op.stop()));
  const run: Run = {
    layout,
    design,
    windows: [],
    operatorCpu: [],
    memory: [],
    pollPhases: [],
    changes: [],
    timeouts: 0,
    synced: false,
    ownWatches: 0,
  };
  try {
    const port = await op.port();
    const keys = Array.from({ length: TOPOLOGIES }, (_, k) => placement(layout, k).key);
    // When the first topology is complete: before it, the pods are being listed; after it, written.
    const first = watch.until(
      () => keys.some((k) => watch.peerCount(k) === PODS),
      SYNC_TIMEOUT_MS,
      'a topology of all its peers',
    );
    first.catch(() => {});
    try {
      const at = await watch.until(
        () => keys.every((k) => watch.peerCount(k) === PODS),
        SYNC_TIMEOUT_MS,
        `${TOPOLOGIES} topologies of ${PODS} peers`,
      );
      run.initialSyncMs = at - t0;
      run.synced = true;
      const cpu1 = await serverCpu(c);
      run.syncCpu = {
        server: cpu1.apiserver - cpu0.apiserver + cpu1.etcd - cpu0.etcd,
        operator: await processCpuSeconds(op.child.pid!),
      };
      run.firstSyncedMs = (await first) - t0;
      log(
        `synced after ${(run.initialSyncMs / 1000).toFixed(1)} s (the first topology after ${(run.firstSyncedMs / 1000).toFixed(1)} s); CPU-s: API server + etcd ${run.syncCpu.server.toFixed(2)}, operator ${run.syncCpu.operator.toFixed(2)}; API server time by request: ${requestTime(requests0, await c.metrics())}`,
      );
    } catch (e) {
      log(`${(e as Error).message}; operator said: ${op.output.slice(-2000)}`);
      return run;
    }
    await sleep(15_000); // first Lease writes, the former design's first re-lists
    const sampler = new MemorySampler(op.child.pid!, 5000);
    sampler.start();
    let cpu = await processCpuSeconds(op.child.pid!);
    log(`idle: ${WINDOWS} windows of ${WINDOW_S} s`);
    run.ownWatches = ownWatches;
    run.windows = await measureWindows(c, WINDOW_S, WINDOWS, async (ms) => {
      const now = await processCpuSeconds(op.child.pid!);
      run.operatorCpu.push(perMinute(now - cpu, ms));
      cpu = now;
    });
    run.memory = await sampler.stop();
    const polls = (await operatorSamples(port)).filter(
      (s) =>
        s.name === 'ctopo_last_successful_poll_timestamp_seconds' &&
        keys.includes(`${s.labels.namespace}/${s.labels.name}`),
    );
    run.pollPhases = polls.map((s) => s.value % INTERVAL_S);
    log(`changes: ${CHANGES}, one at a time`);
    for (let x = 0; x < CHANGES; x++) {
      const k = (x * 37 + 3) % TOPOLOGIES;
      const j = (x * 53 + 7) % PODS;
      const p = placement(layout, k);
      const pod = podName(podIndex(layout, k, j));
      const next = ipFor(nextIp++);
      const seen = watch.until(() => watch.ipOf(p.key, pod) === next, CHANGE_TIMEOUT_MS, `${pod} → ${next}`);
      const sent = performance.now();
      await c.kube.request('PATCH', `/api/v1/namespaces/${p.namespace}/pods/${pod}/status`, {
        body: { status: { podIP: next, podIPs: [{ ip: next }] } },
        contentType: 'application/merge-patch+json',
        ignoreBody: true,
      });
      try {
        run.changes.push((await seen) - sent);
      } catch {
        run.timeouts++;
      }
      await sleep(100 + Math.random() * 200);
    }
    return run;
  } finally {
    await stopOp();
    await stopWatch();
  }
}

/** The API server's handling time between two scrapes, per verb and resource, largest first (for the log). */
function requestTime(before: readonly Sample[], after: readonly Sample[]): string {
  const sums = (xs: readonly Sample[]) => {
    const m = new Map<string, { s: number; n: number }>();
    for (const x of xs) {
      const sum = x.name === 'apiserver_request_duration_seconds_sum';
      if (!sum && x.name !== 'apiserver_request_duration_seconds_count') continue;
      const k = `${x.labels.verb} ${x.labels.resource}${x.labels.subresource ? '/' + x.labels.subresource : ''}`;
      const e = m.get(k) ?? { s: 0, n: 0 };
      if (sum) e.s += x.value;
      else e.n += x.value;
      m.set(k, e);
    }
    return m;
  };
  const b = sums(before);
  return [...sums(after)]
    .map(([k, a]) => ({ k, s: a.s - (b.get(k)?.s ?? 0), n: a.n - (b.get(k)?.n ?? 0) }))
    .filter((x) => x.n > 0)
    .sort((x, y) => y.s - x.s)
    .slice(0, 8)
    .map((x) => `${x.k} ${x.n}× ${x.s.toFixed(2)} s`)
    .join(', ');
}

const fmt = (x: number) => (Math.abs(x) >= 100 ? x.toFixed(0) : x.toFixed(2));
const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN);

/** The shortest arc of the interval holding every poll phase (s): the interval less the widest gap. */
export function pollArc(phases: readonly number[], interval: number): number {
  if (phases.length < 2) return 0;
  const s = [...phases].sort((a, b) => a - b);
  let gap = s[0]! + interval - s[s.length - 1]!;
  for (let i = 1; i < s.length; i++) gap = Math.max(gap, s[i]! - s[i - 1]!);
  return interval - gap;
}

const DESIGN_LABEL: Record<Design, string> = { now: 'now', former: 'before (#29)', baseline: 'baseline' };

function runFigures(r: Run): Figure[] {
  const now = r.design === 'now';
  const where = `${TOPOLOGIES} topologies × ${PODS} pods, ${LAYOUT_NAME[r.layout]}, ${DESIGN_LABEL[r.design]}`;
  const goal = (op: '<=' | '>=', value: number) => (now ? { goal: { op, value } } : {});
  const namespaces = namespacesOf(r.layout).length;
  const figs: Figure[] = [];
  if (r.initialSyncMs !== undefined)
    figs.push({
      name: `${where}: initial sync`,
      unit: 's',
      samples: [r.initialSyncMs / 1000],
      ...goal('<=', 30),
      note: `operator start → every topology lists its pods (each design starts from statuses cleared)${r.syncCpu ? `; CPU meanwhile: API server + etcd ${fmt(r.syncCpu.server)} s, operator ${fmt(r.syncCpu.operator)} s` : ''}${r.firstSyncedMs !== undefined ? `; the first topology complete after ${fmt(r.firstSyncedMs / 1000)} s` : ''}`,
    });
  if (!r.synced) return figs;
  const ws = r.windows;
  const watchesEnded = ws.map((w) => perMinute(w.podRequests.WATCH ?? 0, w.ms));
  figs.push(
    {
      name: `${where}: operator CPU, nothing changing`,
      unit: 'CPU-s/min',
      samples: r.operatorCpu,
      ...goal('<=', 1),
      note: `utime+stime of the operator process, ${WINDOW_S} s windows, pollingInterval ${INTERVAL_S}s`,
    },
    {
      name: `${where}: API server + etcd CPU, nothing changing`,
      unit: 'CPU-s/min',
      samples: ws.map(serverCpuPerMinute),
      ...goal('<=', 2),
      note: `kube-apiserver ${fmt(mean(ws.map((w) => perMinute(w.cpu.apiserver, w.ms))))}, etcd ${fmt(mean(ws.map((w) => perMinute(w.cpu.etcd, w.ms))))}; their idle housekeeping and the topologies' liveness Leases (one renewal a minute each) included`,
    },
    {
      name: `${where}: pod LIST response bytes, nothing changing`,
      unit: 'MB/min',
      samples: ws.map((w) => listBytesPerMinute(w) / MB),
      ...goal('<=', 30),
      note: `${ws.map((w) => fmt(listsPerMinute(w))).join(', ')} pod LISTs/min; ${watchesEnded.map(fmt).join(', ')} pod WATCHes ended per minute (counted by the API server when they end)`,
    },
    {
      name: `${where}: pod watches held`,
      unit: 'watches',
      samples: ws.map((w) => w.podWatches - r.ownWatches),
      ...goal('<=', namespaces),
      note: `open pod WATCH requests at each window's end (apiserver_longrunning_requests), less the ${r.ownWatches} the API server held before the operator started; ${namespaces} namespace${namespaces > 1 ? 's' : ''} served`,
    },
    {
      name: `${where}: status writes, nothing changing`,
      unit: 'writes/min',
      samples: ws.map((w) => perMinute(w.statusWrites, w.ms)),
      note: 'the status is written only when its content changes',
    },
    {
      name: `${where}: resident memory (VmRSS)`,
      unit: 'MB',
      samples: r.memory.map((m) => m.rssBytes / MB),
      ...goal('<=', 300),
      note: `every 5 s over the idle windows; peak (VmHWM) ${fmt(Math.max(...r.memory.map((m) => m.peakRssBytes)) / MB)} MB since start`,
    },
  );
  const arc = pollArc(r.pollPhases, INTERVAL_S);
  figs.push({
    name: `${where}: the polls' spread over the ${INTERVAL_S} s interval`,
    unit: 's',
    samples: [arc],
    note: `the shortest arc of the interval holding every topology's last successful poll (${r.pollPhases.length} topologies); ${r.design === 'former' ? 'a re-list per topology' : r.design === 'now' ? 'one cluster-wide probe (the bench operator may list pods cluster-wide) serves every topology: one request per interval, nothing to spread' : 'one probe per namespace, each at its own random phase'}`,
  });
  if (r.changes.length)
    figs.push({
      name: `${where}: convergence p99 of a single pod change`,
      unit: 'ms',
      samples: [percentile(r.changes, 99)],
      ...goal('<=', 1000),
      note: `nearest-rank p99 of ${r.changes.length} changes, one at a time across the topologies (p50 ${fmt(percentile(r.changes, 50))} ms)${r.timeouts ? `; ${r.timeouts} not seen within ${CHANGE_TIMEOUT_MS / 1000} s` : ''}`,
    });
  return figs;
}

function summarySection(runs: Run[]): Section {
  const rows = [
    '| layout | design | initial sync s | operator CPU-s/min | API server + etcd CPU-s/min | pod LISTs/min | pod LIST MB/min | pod watches held | polls’ arc s | RSS MB | change p99 ms |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const r of runs) {
    const ws = r.windows;
    rows.push(
      `| ${LAYOUT_NAME[r.layout]} | ${DESIGN_SHORT[r.design]} | ${r.initialSyncMs !== undefined ? fmt(r.initialSyncMs / 1000) : '—'} | ${fmt(mean(r.operatorCpu))} | ${fmt(mean(ws.map(serverCpuPerMinute)))} | ${fmt(mean(ws.map(listsPerMinute)))} | ${fmt(mean(ws.map((w) => listBytesPerMinute(w) / MB)))} | ${fmt(mean(ws.map((w) => w.podWatches - r.ownWatches)))} | ${fmt(pollArc(r.pollPhases, INTERVAL_S))} | ${fmt(mean(r.memory.map((m) => m.rssBytes / MB)))} | ${r.changes.length ? fmt(percentile(r.changes, 99)) : '—'} |`,
    );
  }
  return {
    title: 'Many topologies, side by side',
    markdown: [
      `Means over the idle windows (${WINDOWS} × ${WINDOW_S} s, pollingInterval ${INTERVAL_S}s, nothing changing); the API server's own counters; the same control plane and pods for every row. Designs: before = ${DESIGN_NAME.former};${DESIGNS.includes('baseline') ? ` baseline = ${DESIGN_NAME.baseline};` : ''} now = one list and watch per namespace feeding every topology there, and one cluster-wide LIST of limit=1 at least every pollingInterval answering for every namespace (per namespace when the operator may not list pods cluster-wide; docs/operator.md).`,
      '',
      ...rows,
    ].join('\n'),
  };
}

export async function runDetailed(): Promise<{ figures: Figure[]; sections: Section[] }> {
  const cluster = await startBenchCluster(log);
  const runs: Run[] = [];
  try {
    for (const layout of LAYOUTS) {
      await createLayout(cluster, layout);
      for (const design of DESIGNS) runs.push(await measureRun(cluster, layout, design));
      await removeTopologies(cluster, layout);
    }
  } finally {
    await cluster.stop();
  }
  return { figures: runs.flatMap(runFigures), sections: runs.length ? [summarySection(runs)] : [] };
}

export default async function run(): Promise<Figure[]> {
  return (await runDetailed()).figures;
}

await runIfScript(import.meta.url, runDetailed);
