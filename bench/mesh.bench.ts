/**
 * What member reports cost the operator and the readers (issue #30 item 7, docs/status-protocol.md
 * §8), on a real etcd and kube-apiserver with the real operator:
 *
 * 1. 1,000 reporting members: one ClusterTopology selecting 1,000 pods, and each member's report
 *    written as its reader would write it (operator/protocol/member-report.ts, one server-side
 *    apply each). The operator's CPU over a window with no report at all, then over the same
 *    window with 1,000 reports renewed at the protocol's pace (each every 5 min: one every 300 ms),
 *    and its resident memory in both; the CPU it spends taking in the first 1,000 reports.
 * 2. A rolling update of 100 members (a new pod created and ready, the oldest deleted with its
 *    report, one step every 2 s, and every 10 s for at most 5 min): 100 simulated members follow the writer's budget
 *    (operator/protocol/report-plan.ts) on the list they read from the status, and connect to a
 *    newly listed peer CONNECT_MS after it appears. Every ClusterTopology write is seen on a
 *    watch; a write whose status differs from the one before only in `mesh` and the `Meshed`
 *    condition is one that `mesh` caused (a write the peers caused carries the mesh for free).
 *    Bytes to 1,000 readers: every watcher of the object receives each write whole, so the bytes
 *    are the measured size of each such write's watch event times 1,000 (arithmetic, not 1,000
 *    open watches), for the 100-member object and for the 1,000-member one of part 1.
 * 3. A link that flaps while no pod changes (members 0 and 1 of 100 cut off from each other and
 *    connected again by turns, every 10 s): every write is the mesh's, held back by the 15 s limit
 *    alone.
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Figure } from './figure.js';
import { CT_GROUP_PATH, startBenchCluster, startBenchOperator, type BenchCluster } from './bench-cluster.js';
import { onCleanup, runIfScript } from './cleanup.js';
import { mapLimit } from './concurrency.js';
import { BENCH_SELECTOR, ipFor, podManifest, podName, podStatus } from './pods.js';
import { MemorySampler, processCpuSeconds, processMemory } from './proc.js';
import { TopologyWatch, type TopologyView } from './topology-watch.js';
import { installCrd } from '../dev/cluster/crd.js';
import type { ClusterTopologyStatus, Peer } from '../operator/api/types.generated.js';
import { MESHED } from '../operator/mesh/aggregate.js';
import { ApiError } from '../operator/kube/client.js';
import { memberReportsPath } from '../operator/kube/paths.js';
import { memberReport, memberReportName, memberView } from '../operator/protocol/member-report.js';
import { writeMemberReport } from '../operator/protocol/member-report-writer.js';
import {
  planReport,
  recordAttempt,
  REPORT_RENEW_MS,
  type ReportHistory,
} from '../operator/protocol/report-plan.js';
import type { CtopoProcess } from '../test/support/operator-process.js';

const env = (k: string, d: number) => (process.env[k] !== undefined ? Number(process.env[k]) : d);
const MEMBERS = env('BENCH_MESH_MEMBERS', 1000);
const WINDOW_S = env('BENCH_MESH_WINDOW_S', 60);
const ROLLOUT = env('BENCH_MESH_ROLLOUT', 100);
/** Paces of the rollout (ms between replacements), each on a topology of its own. */
const ROLLOUT_STEPS_MS = (process.env.BENCH_MESH_ROLLOUT_STEPS_MS ?? '2000,10000')
  .split(',')
  .filter((x) => x.trim() !== '')
  .map(Number);
/** A slow pace replaces only as many pods as fit in this time: the figures are a minute's. */
const ROLLOUT_MAX_S = env('BENCH_MESH_ROLLOUT_MAX_S', 300);
/** A link that flaps with no pod changing: how long (0 skips), and how often it flips. */
const FLAP_S = env('BENCH_MESH_FLAP_S', 180);
const FLAP_EVERY_MS = env('BENCH_MESH_FLAP_EVERY_MS', 10_000);
const CONNECT_MS = env('BENCH_MESH_CONNECT_MS', 500);
const READERS = 1000;
/** The goal of #30 item 7 for writes caused by `mesh`. */
const MESH_WRITES_GOAL_PER_MIN = 4;
/** The operator's memory goal (the operator module's, at 5,000 pods). */
const OPERATOR_RSS_GOAL_MB = 150;
const BIG = 'bench';
const FIELD_MANAGER = 'ctopo-bench';
const MB = 1e6;

const log = (l: string) =>
  process.stderr.write(`[mesh bench ${new Date().toISOString().slice(11, 19)}] ${l}\n`);

const topologiesPath = (c: BenchCluster) => `${CT_GROUP_PATH}/namespaces/${c.namespace}/clustertopologies`;

async function createTopology(c: BenchCluster, name: string, selector: string): Promise<void> {
  await c.kube.request('POST', topologiesPath(c), {
    body: {
      apiVersion: 'cluster.netzlive.io/v1alpha1',
      kind: 'ClusterTopology',
      metadata: { name, namespace: c.namespace },
      spec: { selector, pollingInterval: '10m' },
    },
  });
}

const statusOf = (o: TopologyView) => (o.status ?? {}) as ClusterTopologyStatus;
const peersOf = (o: TopologyView): Peer[] => statusOf(o).peers ?? [];
const summaryOf = (o: TopologyView | undefined) => (o ? statusOf(o).mesh?.summary : undefined);

/** The status without what `mesh` decides: the `mesh` block and the `Meshed` condition. */
function withoutMesh(s: ClusterTopologyStatus): unknown {
  const { mesh: _mesh, conditions, ...rest } = s;
  return { ...rest, conditions: (conditions ?? []).filter((c) => c.type !== MESHED) };
}

/** One write as every watcher of the object receives it: a line of JSON. */
const eventBytes = (o: TopologyView) =>
  Buffer.byteLength(JSON.stringify({ type: 'MODIFIED', object: o })) + 1;

/** What `mesh` adds to a write: the block and the Meshed condition, as JSON members of the object. */
function meshBytes(o: TopologyView): number {
  const s = statusOf(o);
  const meshed = (s.conditions ?? []).find((c) => c.type === MESHED);
  return (
    (s.mesh ? Buffer.byteLength(`"mesh":${JSON.stringify(s.mesh)},`) : 0) +
    (meshed ? Buffer.byteLength(`${JSON.stringify(meshed)},`) : 0)
  );
}

/** Every write of one ClusterTopology, told apart: those `mesh` alone caused, and their sizes. */
class WriteLog {
  writes: { at: number; meshOnly: boolean; bytes: number; meshBytes: number }[] = [];
  private last: TopologyView | undefined;

  constructor(watch: TopologyWatch) {
    watch.listen((o, at) => {
      const rv = o.metadata.resourceVersion;
      if (this.last && rv === this.last.metadata.resourceVersion) return; // a restarted watch's ADDED
      if (this.last) {
        const meshOnly =
          JSON.stringify(withoutMesh(statusOf(o))) === JSON.stringify(withoutMesh(statusOf(this.last)));
        this.writes.push({ at, meshOnly, bytes: eventBytes(o), meshBytes: meshBytes(o) });
      }
      this.last = o;
    });
  }

  between(from: number, to: number) {
    return this.writes.filter((w) => w.at >= from && w.at <= to);
  }
}

/** A member's report as its reader writes it: connected to `connected` of the listed peers. */
function reportOf(
  c: BenchCluster,
  topology: string,
  self: Peer,
  peers: Peer[],
  connected: string[],
  rv?: string,
) {
  const view = memberView({
    node: self.nodeName,
    pod: self.pod,
    peers,
    connected,
    ...(rv !== undefined ? { topologyResourceVersion: rv } : {}),
  });
  return {
    view,
    at: Date.now(),
    report: memberReport(
      { namespace: c.namespace, topology, pod: { name: self.pod, uid: self.uid } },
      view,
      new Date(),
    ),
  };
}

async function write(
  c: BenchCluster,
  report: ReturnType<typeof memberReport>,
): Promise<'ok' | 'forbidden' | 'failed'> {
  const w = await writeMemberReport(c.kube, report, FIELD_MANAGER);
  if (w.outcome !== 'ok') log(`a report write failed: ${String((w.error as Error)?.message ?? w.error)}`);
  return w.outcome;
}

async function watchTopology(c: BenchCluster, name: string): Promise<TopologyWatch> {
  const watch = new TopologyWatch(c.kube, c.namespace, name);
  onCleanup(`topology watch ${name}`, () => watch.stop());
  await watch.start();
  return watch;
}

interface Window {
  cpuPerMin: number;
  rss: number[];
}

/** The operator's CPU (CPU-s per minute) and resident memory over WINDOW_S while `during` runs. */
async function window(op: CtopoProcess, during?: (until: number) => Promise<void>): Promise<Window> {
  const pid = op.child.pid!;
  const sampler = new MemorySampler(pid, 5000);
  sampler.start();
  const cpu0 = await processCpuSeconds(pid);
  const t0 = performance.now();
  const until = t0 + WINDOW_S * 1000;
  await Promise.all([during?.(until), sleep(WINDOW_S * 1000)]);
  const cpu = (await processCpuSeconds(pid)) - cpu0;
  const ms = performance.now() - t0;
  return { cpuPerMin: (cpu * 60_000) / ms, rss: (await sampler.stop()).map((m) => m.rssBytes / MB) };
}

interface Part1 {
  idle: Window;
  renewing: Window;
  intakeCpu: number;
  intakeMs: number;
  objectBytes: number;
  renewals: number;
  writesWhileRenewing: number;
}

async function reportingMembers(c: BenchCluster, op: CtopoProcess, watch: TopologyWatch): Promise<Part1> {
  const writes = new WriteLog(watch);
  log(`no reports: operator CPU and memory over ${WINDOW_S} s`);
  const idle = await window(op);

  const peers = peersOf(watch.current!.object);
  const names = peers.map((p) => p.nodeName);
  const rv = watch.current!.object.metadata.resourceVersion;
  log(`${MEMBERS} members write their reports (each connected to every other)`);
  const pid = op.child.pid!;
  const cpu0 = await processCpuSeconds(pid);
  const t0 = performance.now();
  const whole = `${MEMBERS}/${MEMBERS}`;
  const meshed = watch.until((s) => summaryOf(s.object) === whole, 300_000, `MESH ${whole}`);
  await mapLimit(peers, 16, async (self) => {
    const { report } = reportOf(c, BIG, self, peers, names, rv);
    await write(c, report);
  });
  const intakeMs = (await meshed) - t0;
  const intakeCpu = (await processCpuSeconds(pid)) - cpu0;
  log(
    `MESH ${whole} ${(intakeMs / 1000).toFixed(1)} s after the first report; operator CPU ${intakeCpu.toFixed(2)} s`,
  );
  await sleep(20_000); // the last held mesh write, if any, comes within 15 s

  log(
    `renewals: one report every ${(REPORT_RENEW_MS / MEMBERS).toFixed(0)} ms (each member every ${REPORT_RENEW_MS / 60_000} min), ${WINDOW_S} s`,
  );
  let renewals = 0;
  const before = writes.writes.length;
  const renewing = await window(op, async (until) => {
    const every = REPORT_RENEW_MS / MEMBERS;
    for (let k = 0; performance.now() < until; k++) {
      const next = performance.now() + every;
      const self = peers[k % peers.length]!;
      await write(c, reportOf(c, BIG, self, peers, names, rv).report);
      renewals++;
      const wait = next - performance.now();
      if (wait > 0) await sleep(wait);
    }
  });
  const objectBytes = eventBytes(watch.current!.object);
  return {
    idle,
    renewing,
    intakeCpu,
    intakeMs,
    objectBytes,
    renewals,
    writesWhileRenewing: writes.writes.length - before,
  };
}

/** One simulated member of the rollout: its reader's writer, on the writer's budget. */
interface Member {
  self: Peer;
  startedAt: number;
  history: ReportHistory;
  timer?: NodeJS.Timeout;
  writing: boolean;
  again: boolean;
  writes: number;
  gone: boolean;
}

/**
 * Members that read the list from the status (the watch), connect to a newly listed peer (or, when
 * new themselves, to every peer) CONNECT_MS later, and write their reports as planReport says.
 */
class RolloutMembers {
  readonly members = new Map<string, Member>();
  private peers: Peer[] = [];
  private rv: string | undefined;
  private readonly listedAt = new Map<string, number>();
  private stopped = false;
  reportWrites = 0;

  constructor(
    private readonly c: BenchCluster,
    private readonly topology: string,
    watch: TopologyWatch,
  ) {
    watch.listen((o) => this.onList(o));
    if (watch.current) this.onList(watch.current.object);
  }

  private onList(o: TopologyView): void {
    if (this.stopped) return;
    const now = Date.now();
    this.peers = peersOf(o);
    this.rv = o.metadata.resourceVersion;
    for (const p of this.peers) if (!this.listedAt.has(p.nodeName)) this.listedAt.set(p.nodeName, now);
    for (const p of this.peers)
      if (!this.members.has(p.pod))
        this.members.set(p.pod, {
          self: p,
          startedAt: now,
          history: {},
          writing: false,
          again: false,
          writes: 0,
          gone: false,
        });
    for (const m of this.members.values()) {
      this.consider(m);
      this.at(m, now + CONNECT_MS); // its connections to newly listed peers are up by then
    }
  }

  private connected(m: Member, now: number): string[] {
    return this.peers
      .filter(
        (p) =>
          p.pod !== m.self.pod &&
          this.members.get(p.pod)?.gone !== true &&
          now >= Math.max(this.listedAt.get(p.nodeName) ?? now, m.startedAt) + CONNECT_MS,
      )
      .map((p) => p.nodeName);
  }

  private at(m: Member, when: number): void {
    if (m.gone || this.stopped) return;
    clearTimeout(m.timer);
    m.timer = setTimeout(() => this.consider(m), Math.max(0, when - Date.now()));
    m.timer.unref();
  }

  private consider(m: Member): void {
    if (m.gone || this.stopped) return;
    if (m.writing) {
      m.again = true;
      return;
    }
    const now = Date.now();
    const view = memberView({
      node: m.self.nodeName,
      pod: m.self.pod,
      peers: this.peers,
      connected: this.connected(m, now),
      ...(this.rv !== undefined ? { topologyResourceVersion: this.rv } : {}),
    });
    const plan = planReport(m.history, view, now);
    if (plan.action !== 'write') return this.at(m, plan.at);
    m.writing = true;
    const report = memberReport(
      { namespace: this.c.namespace, topology: this.topology, pod: { name: m.self.pod, uid: m.self.uid } },
      view,
      new Date(now),
    );
    void write(this.c, report).then((outcome) => {
      m.writing = false;
      m.writes++;
      this.reportWrites++;
      m.history = recordAttempt(m.history, view, now, outcome);
      if (m.again) {
        m.again = false;
        this.consider(m);
      } else {
        const next = planReport(m.history, view, Date.now());
        if (next.action !== 'write') this.at(m, next.at);
      }
    });
  }

  /** The member of `pod` is gone with its pod: no more writes, its report deleted (as the garbage collector would). */
  async remove(pod: string): Promise<void> {
    const m = this.members.get(pod);
    if (m) {
      m.gone = true;
      clearTimeout(m.timer);
    }
    await this.c.kube
      .request('DELETE', memberReportsPath(this.c.namespace, memberReportName(pod, this.topology)))
      .catch((e: unknown) => {
        if (!(e instanceof ApiError && e.code === 404)) throw e;
      });
  }

  stop(): void {
    this.stopped = true;
    for (const m of this.members.values()) clearTimeout(m.timer);
  }
}

function rolloutPod(c: BenchCluster, i: number, app: string): object {
  const pod = podManifest(i, c.namespace) as { metadata: { labels: Record<string, string> } };
  pod.metadata.labels = { ...pod.metadata.labels, app };
  return pod;
}

async function startPod(c: BenchCluster, i: number, app: string): Promise<void> {
  const path = `/api/v1/namespaces/${c.namespace}/pods`;
  await c.kube.request('POST', path, { body: rolloutPod(c, i, app) });
  await c.kube.request('PATCH', `${path}/${podName(i)}/status`, {
    body: podStatus(i, ipFor(i + 1), new Date().toISOString().replace(/\.\d+Z$/, 'Z')),
    contentType: 'application/merge-patch+json',
  });
}

const deletePod = (c: BenchCluster, i: number) =>
  c.kube.request('DELETE', `/api/v1/namespaces/${c.namespace}/pods/${podName(i)}`, {
    query: { gracePeriodSeconds: 0 },
  });

interface Part2 {
  stepMs: number;
  replaced: number;
  minutes: number;
  meshOnly: { at: number; bytes: number }[];
  all: number;
  /** Bytes of `mesh` and Meshed in every write of the window. */
  meshBytesAll: number;
  reportWrites: number;
  members: number;
}

/**
 * A rolling update of ROLLOUT members at one replacement every `stepMs` (at most ROLLOUT_MAX_S
 * long), on a topology of its own; pod indices from `base` on.
 */
async function rollout(c: BenchCluster, stepMs: number, base: number): Promise<Part2> {
  const topology = `rollout-${stepMs}ms`;
  const replaced = Math.min(ROLLOUT, Math.max(1, Math.floor((ROLLOUT_MAX_S * 1000) / stepMs)));
  log(`${topology}: ${ROLLOUT} members`);
  await mapLimit(
    Array.from({ length: ROLLOUT }, (_, k) => base + k),
    16,
    (i) => startPod(c, i, topology),
  );
  await createTopology(c, topology, `app=${topology}`);
  const watch = await watchTopology(c, topology);
  await watch.reach((s) => s.peerCount === ROLLOUT, 120_000, `${ROLLOUT} peers`);
  const members = new RolloutMembers(c, topology, watch);
  const whole = `${ROLLOUT}/${ROLLOUT}`;
  await watch.reach((s) => summaryOf(s.object) === whole, 120_000, `MESH ${whole} before the rollout`);
  await sleep(20_000); // past any held mesh write: the rollout starts from a quiet object
  const writes = new WriteLog(watch);

  log(`${topology}: replacing ${replaced} of ${ROLLOUT} pods, one every ${stepMs} ms`);
  const t0 = performance.now();
  const writes0 = members.reportWrites;
  for (let k = 0; k < replaced; k++) {
    const step = performance.now() + stepMs;
    await startPod(c, base + ROLLOUT + k, topology); // the new pod, ready
    await sleep(Math.min(stepMs / 2, 1000));
    await deletePod(c, base + k); // then the oldest goes
    await members.remove(podName(base + k));
    const wait = step - performance.now();
    if (wait > 0) await sleep(wait);
    if ((k + 1) % 25 === 0) log(`${topology}: ${k + 1}/${replaced} replaced`);
  }
  // The rollout is over when the list holds only members still running, every member has
  // reported it and the mesh is whole again, and the writes have stopped: its last write ends the
  // window (a mesh write held by the 15 s limit counts).
  await watch.reach(
    (s) =>
      summaryOf(s.object) === whole &&
      peersOf(s.object).every((p) => members.members.get(p.pod)?.gone === false),
    180_000,
    `MESH ${whole} after the replacements`,
  );
  for (let seen = -1; seen !== writes.writes.length;) {
    seen = writes.writes.length;
    await sleep(20_000);
  }
  members.stop();
  const t1 = Math.max(t0 + replaced * stepMs, writes.writes.at(-1)?.at ?? t0);
  const inRollout = writes.between(t0, t1);
  return {
    stepMs,
    replaced,
    minutes: (t1 - t0) / 60_000,
    meshOnly: inRollout.filter((w) => w.meshOnly),
    all: inRollout.length,
    meshBytesAll: inRollout.reduce((a, w) => a + w.meshBytes, 0),
    reportWrites: members.reportWrites - writes0,
    members: members.members.size,
  };
}

interface Flapping {
  /** Times of the ClusterTopology writes (all of them caused by mesh: no pod changes). */
  writesAt: number[];
  flips: number;
  seconds: number;
}

/**
 * A link that flaps while no pod changes: ROLLOUT meshed members, then members 0 and 1 report their
 * link refused and connected by turns, each flip a report of both (at the writer's fastest pace:
 * one every 10 s). Every ClusterTopology write in the window is the mesh's; the 15 s limit is all
 * that holds them back.
 */
async function flappingLink(c: BenchCluster, base: number): Promise<Flapping> {
  const topology = 'flapping';
  log(`${topology}: ${ROLLOUT} members, a link flipping every ${FLAP_EVERY_MS} ms for ${FLAP_S} s`);
  await mapLimit(
    Array.from({ length: ROLLOUT }, (_, k) => base + k),
    16,
    (i) => startPod(c, i, topology),
  );
  await createTopology(c, topology, `app=${topology}`);
  const watch = await watchTopology(c, topology);
  await watch.reach((s) => s.peerCount === ROLLOUT, 120_000, `${ROLLOUT} peers`);
  const peers = peersOf(watch.current!.object);
  const names = peers.map((p) => p.nodeName);
  const rv = watch.current!.object.metadata.resourceVersion;
  const report = (i: number, cut: boolean) =>
    write(
      c,
      reportOf(
        c,
        topology,
        peers[i]!,
        peers,
        names.filter((n) => !(cut && n === peers[1 - i]!.nodeName)),
        rv,
      ).report,
    );
  await mapLimit(
    peers.map((_, i) => i),
    16,
    (i) => report(i, false),
  );
  const whole = `${ROLLOUT}/${ROLLOUT}`;
  await watch.reach((s) => summaryOf(s.object) === whole, 120_000, `MESH ${whole} before the flapping`);
  await sleep(20_000); // past any held mesh write
  const writes = new WriteLog(watch);
  const t0 = performance.now();
  let flips = 0;
  while (performance.now() - t0 < FLAP_S * 1000) {
    const next = performance.now() + FLAP_EVERY_MS;
    const cut = flips % 2 === 0;
    await Promise.all([report(0, cut), report(1, cut)]);
    flips++;
    const wait = next - performance.now();
    if (wait > 0) await sleep(wait);
  }
  const seconds = (performance.now() - t0) / 1000;
  return { writesAt: writes.between(t0, performance.now()).map((w) => w.at), flips, seconds };
}

function flappingFigures(f: Flapping): Figure[] {
  const gaps = f.writesAt.slice(1).map((t, i) => t - f.writesAt[i]!);
  const meanGap = gaps.length ? gaps.reduce((a, b) => a + b, 0) / gaps.length : Infinity;
  return [
    {
      name: `mesh, a link of ${ROLLOUT} members flapping every ${FLAP_EVERY_MS / 1000} s, no pod changing: ClusterTopology writes a minute (60 s ÷ the mean time between writes)`,
      unit: 'writes/min',
      samples: [gaps.length ? 60_000 / meanGap : 0],
      goal: { op: '<=', value: MESH_WRITES_GOAL_PER_MIN },
      note: `${f.writesAt.length} writes, all caused by mesh, in ${f.seconds.toFixed(0)} s of ${f.flips} flips; shortest time between two ${gaps.length ? (Math.min(...gaps) / 1000).toFixed(1) : '—'} s`,
    },
  ];
}

function rolloutFigures(p1: Part1, p2: Part2): Figure[] {
  const meshOnlyPerMin = p2.meshOnly.length / p2.minutes;
  const meshOnlyBytes = p2.meshOnly.reduce((a, w) => a + w.bytes, 0);
  const meanMeshWrite = p2.meshOnly.length ? meshOnlyBytes / p2.meshOnly.length : 0;
  const what = `mesh, rollout of ${ROLLOUT} members, a replacement every ${p2.stepMs / 1000} s`;
  const arithmetic = `measured sizes × ${READERS} readers (each watcher receives each write whole)`;
  return [
    {
      name: `${what}: ClusterTopology writes caused by mesh alone, a minute`,
      unit: 'writes/min',
      samples: [meshOnlyPerMin],
      goal: { op: '<=', value: MESH_WRITES_GOAL_PER_MIN },
      note: `${p2.meshOnly.length} of ${p2.all} writes in ${p2.minutes.toFixed(2)} min (${p2.replaced} replaced); ${p2.reportWrites} report writes by ${p2.members} members`,
    },
    {
      name: `${what}: all ClusterTopology writes (peers and mesh), a minute`,
      unit: 'writes/min',
      samples: [p2.all / p2.minutes],
    },
    {
      name: `${what}: bytes the mesh-only writes send to ${READERS} readers, a minute`,
      unit: 'kB/min',
      samples: [(meshOnlyBytes * READERS) / p2.minutes / 1000],
      note: `${arithmetic}; the ${ROLLOUT}-member object, ${Math.round(meanMeshWrite)} B a write`,
    },
    {
      name: `${what}: the same writes of the ${MEMBERS}-member object to ${READERS} readers, a minute`,
      unit: 'kB/min',
      samples: [(meshOnlyPerMin * p1.objectBytes * READERS) / 1000],
      note: `mesh-only writes a minute × the ${MEMBERS}-member object's measured ${p1.objectBytes} B × ${READERS} readers`,
    },
    {
      name: `${what}: bytes mesh adds to every write (its block and Meshed) to ${READERS} readers, a minute`,
      unit: 'kB/min',
      samples: [(p2.meshBytesAll * READERS) / p2.minutes / 1000],
      note: `${arithmetic}; ${Math.round(p2.meshBytesAll / Math.max(1, p2.all))} B a write on average`,
    },
  ];
}

function figures(p1: Part1, rollouts: Part2[], flapping: Flapping | undefined): Figure[] {
  return [
    {
      name: `mesh, ${MEMBERS} members, no reports: operator CPU a minute`,
      unit: 'CPU-s/min',
      samples: [p1.idle.cpuPerMin],
    },
    {
      name: `mesh, ${MEMBERS} reporting members, each report renewed every 5 min: operator CPU a minute`,
      unit: 'CPU-s/min',
      samples: [p1.renewing.cpuPerMin],
      note: `${p1.renewals} renewals in the window; ${p1.writesWhileRenewing} ClusterTopology writes`,
    },
    {
      name: `mesh, ${MEMBERS} members' first reports: operator CPU until MESH ${MEMBERS}/${MEMBERS}`,
      unit: 'CPU-s',
      samples: [p1.intakeCpu],
      note: `MESH ${MEMBERS}/${MEMBERS} ${(p1.intakeMs / 1000).toFixed(1)} s after the first report`,
    },
    {
      name: `mesh, ${MEMBERS} members, no reports: operator resident memory (VmRSS)`,
      unit: 'MB',
      samples: p1.idle.rss,
      goal: { op: '<=', value: OPERATOR_RSS_GOAL_MB },
    },
    {
      name: `mesh, ${MEMBERS} reporting members: operator resident memory (VmRSS)`,
      unit: 'MB',
      samples: p1.renewing.rss,
      goal: { op: '<=', value: OPERATOR_RSS_GOAL_MB },
    },
    ...rollouts.flatMap((r) => rolloutFigures(p1, r)),
    ...(flapping ? flappingFigures(flapping) : []),
  ];
}

export async function runMesh(): Promise<Figure[]> {
  const c = await startBenchCluster(log);
  await installCrd(c.state);
  log(`${MEMBERS} pods`);
  await c.growPods(MEMBERS, 24, log);
  await createTopology(c, BIG, BENCH_SELECTOR);
  const watch = await watchTopology(c, BIG);
  const { op, stop } = await startBenchOperator(c, ['--log-level', 'warn']);
  try {
    await watch
      .reach((s) => s.peerCount === MEMBERS, 300_000, `${MEMBERS} peers`)
      .catch((e: Error) => {
        throw new Error(`${e.message}; operator said:\n${op.output.slice(-2000)}`);
      });
    await sleep(5000);
    const p1 = await reportingMembers(c, op, watch);
    log(`operator RSS now ${((await processMemory(op.child.pid!)).rssBytes / MB).toFixed(1)} MB`);
    const rollouts: Part2[] = [];
    // Pod indices of each rollout apart from part 1's and from each other's.
    for (const [j, stepMs] of ROLLOUT_STEPS_MS.entries())
      rollouts.push(await rollout(c, stepMs, 100_000 * (j + 1)));
    const flapping = FLAP_S > 0 ? await flappingLink(c, 100_000 * (ROLLOUT_STEPS_MS.length + 1)) : undefined;
    return figures(p1, rollouts, flapping);
  } finally {
    await stop();
  }
}

export const title =
  'Member reports: the operator with 1,000 reporting members, and the writes mesh adds to a rollout';

export default async function run(): Promise<Figure[]> {
  return runMesh();
}

await runIfScript(import.meta.url, async () => ({ figures: await run(), sections: [] }));
