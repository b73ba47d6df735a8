/**
 * What readers receive, on a real API server with real watches open (docs/status-protocol.md):
 * one ClusterTopology selecting BENCH_READER_PODS pods (1,000), READERS (1,000) watches of it as
 * a reader opens them (fieldSelector metadata.name, bookmarks), and as many of its liveness Lease.
 * Every byte each watch delivers is counted; bookmark events (a resourceVersion, no object, about
 * once a minute) apart from the object's events.
 *
 * Two designs in the same run, one after the other, against the same object:
 * - before: the unchanged status is rewritten once a minute with a new lastPollTime, as the
 *   operator's former heartbeat did (the benchmark does it beside today's operator: statusHeartbeat);
 * - now: the status is written only when it changes; liveness is the Lease, renewed once a minute.
 * For each: bytes per minute with nothing changing (a window of WINDOW_S, scaled to a minute), and
 * bytes for one pod change (its IP changes: one status write). The figures for 100 readers are
 * the first 100 of the same watches.
 */
import { request as httpsRequest, type Agent } from 'node:https';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { formatFigure, type Figure } from './figure.js';
import { CT_GROUP_PATH, startBenchCluster, type BenchCluster } from './bench-cluster.js';
import { onCleanup, runCleanups } from './cleanup.js';
import { BENCH_SELECTOR, ipFor, podName, podStatus } from './pods.js';
import { TopologyWatch } from './topology-watch.js';
import { startOperator, type CtopoProcess } from '../test/support/operator-process.js';
import { leaseNameFor } from '../operator/protocol/read.js';
import { setTimeout as sleep } from 'node:timers/promises';

const env = (k: string, d: number) => (process.env[k] !== undefined ? Number(process.env[k]) : d);
const PODS = env('BENCH_READER_PODS', 1000);
const READERS = env('BENCH_READERS', 1000);
const FEW = Math.min(100, READERS);
/**
 * Lease watches opened (only in the new design: today's readers read no Lease). On this machine
 * the API server stopped answering new watches beyond about 1,700 open ones, so the Lease's
 * 1,000-reader figure is this many watches' bytes scaled, and says so.
 */
const LEASE_READERS = Math.min(READERS, env('BENCH_LEASE_READERS', 500));
const WINDOW_S = env('BENCH_READER_WINDOW_S', 75);
const TOPOLOGY = 'web';
const POLLING_INTERVAL = '5s';
const log = (l: string) => process.stderr.write(`[reader-traffic] ${l}\n`);

/** One reader's watch: bytes and events received, by the API server's doing. */
class CountingWatch {
  /** Bytes of ADDED/MODIFIED/DELETED events: the object. */
  bytes = 0;
  bookmarkBytes = 0;
  events = 0;
  private req: ReturnType<typeof httpsRequest> | undefined;
  constructor(
    private readonly server: string,
    private readonly path: string,
    private readonly agent: Agent,
  ) {}

  open(): Promise<void> {
    return new Promise((ok, fail) => {
      const timer = setTimeout(() => fail(new Error(`watch ${this.path}: no answer within 60 s`)), 60_000);
      const req = httpsRequest(`${this.server}${this.path}`, { agent: this.agent }, (res) => {
        clearTimeout(timer);
        if (res.statusCode !== 200) return fail(new Error(`watch ${this.path}: ${res.statusCode}`));
        res.setEncoding('utf8');
        let pending = '';
        res.on('data', (c: string) => {
          pending += c;
          let nl: number;
          while ((nl = pending.indexOf('\n')) >= 0) {
            const line = pending.slice(0, nl + 1);
            pending = pending.slice(nl + 1);
            const n = Buffer.byteLength(line);
            // A bookmark carries a resourceVersion, not the object: counted apart.
            if (line.startsWith('{"type":"BOOKMARK"')) this.bookmarkBytes += n;
            else this.bytes += n;
            this.events++;
          }
        });
        ok();
      });
      req.on('error', (e) => (this.req ? undefined : fail(e)));
      req.end();
      this.req = req;
    });
  }

  close(): void {
    this.req?.destroy();
  }
}

class Readers {
  readonly watches: CountingWatch[] = [];
  constructor(
    private readonly c: BenchCluster,
    private readonly path: (rv: string) => string,
  ) {}

  async open(n: number, rv: string): Promise<void> {
    const agent = await this.c.adminAgent(n + 8);
    for (let i = 0; i < n; i += 50) {
      if (i % 250 === 0) log(`  ${i}/${n} open`);
      await Promise.all(
        Array.from({ length: Math.min(50, n - i) }, () => {
          const w = new CountingWatch(this.c.state.server, this.path(rv), agent);
          this.watches.push(w);
          return w.open();
        }),
      );
    }
  }

  /** Bytes the first `n` watches have received in all. */
  bytes(n = this.watches.length): number {
    return this.watches.slice(0, n).reduce((a, w) => a + w.bytes, 0);
  }

  bookmarkBytes(n = this.watches.length): number {
    return this.watches.slice(0, n).reduce((a, w) => a + w.bookmarkBytes, 0);
  }

  events(): number {
    return this.watches.reduce((a, w) => a + w.events, 0);
  }

  close(): void {
    for (const w of this.watches) w.close();
  }
}

interface Measured {
  ctIdlePerMin: { few: number; all: number };
  ctBookmarksPerMin: { few: number; all: number };
  leaseIdlePerMin: { few: number; all: number };
  ctChange: { few: number; all: number };
  leaseChange: { few: number; all: number };
  statusWritesIdle: number;
  objectBytes: number;
}

async function getRv(c: BenchCluster, path: string): Promise<string> {
  const list = await c.kube.request<{ metadata: { resourceVersion: string } }>('GET', path);
  return list.metadata.resourceVersion;
}

/** Bytes delivered while the counters keep moving, until they have been still for 3 s. */
async function settle(groups: Readers[]): Promise<void> {
  let last = -1;
  let stillSince = performance.now();
  for (;;) {
    const now = groups.reduce((a, g) => a + g.bytes(), 0);
    if (now !== last) {
      last = now;
      stillSince = performance.now();
    } else if (performance.now() - stillSince > 3000) return;
    await sleep(250);
  }
}

async function measureDesign(
  c: BenchCluster,
  watch: TopologyWatch,
  design: 'before' | 'now',
  change: number,
): Promise<Measured> {
  const ns = c.namespace;
  const op: CtopoProcess = startOperator(c.state.kubeconfig, [
    '--namespaces',
    ns,
    '--no-leader-elect',
    '--log-level',
    'warn',
  ]);
  const stopOp = onCleanup(`operator (${design})`, async () => void (await op.stop()));
  const heartbeat = design === 'before' ? statusHeartbeat(c, ns) : undefined;
  try {
    await op.port();
    await watch
      .reach((s) => s.peerCount === PODS, 120_000, `${PODS} peers (${design})`)
      .catch((e: Error) => {
        throw new Error(`${e.message}; operator said:\n${op.output.slice(-2000)}`);
      });
    // A first successful poll after start writes what changed and renews the Lease: let it pass.
    await sleep(8000);
    const ctPath = `${CT_GROUP_PATH}/namespaces/${ns}/clustertopologies`;
    const leasePath = `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases`;
    const q = (name: string) => (rv: string) =>
      `?fieldSelector=metadata.name%3D${encodeURIComponent(name)}&watch=true&allowWatchBookmarks=true${rv ? `&resourceVersion=${rv}` : ''}&timeoutSeconds=900`;
    const ct = new Readers(c, (rv) => ctPath + q(TOPOLOGY)(rv));
    const lease = new Readers(c, (rv) => leasePath + q(leaseNameFor(TOPOLOGY))(rv));
    try {
      log(
        `${design}: opening ${READERS} watches of the ClusterTopology${design === 'now' ? ` and ${LEASE_READERS} of its Lease` : ''}`,
      );
      await ct.open(READERS, await getRv(c, `${ctPath}?fieldSelector=metadata.name%3D${TOPOLOGY}`));
      // The Lease watches start with its current state (a small ADDED each, before the window):
      // a list's resourceVersion can be ahead of the watch cache and make a watch wait on it.
      if (design === 'now') await lease.open(LEASE_READERS, '');
      await settle([ct, lease]);
      const ct0 = { few: ct.bytes(FEW), all: ct.bytes() };
      const bm0 = { few: ct.bookmarkBytes(FEW), all: ct.bookmarkBytes() };
      const l0 = { few: lease.bytes(FEW), all: lease.bytes() };
      const writes0 = (await op.metricSum('ctopo_status_writes_total')) + (heartbeat?.writes ?? 0);
      log(`${design}: ${WINDOW_S} s with nothing changing`);
      const t0 = performance.now();
      await sleep(WINDOW_S * 1000);
      const minutes = (performance.now() - t0) / 60_000;
      await settle([ct, lease]);
      const ct1 = { few: ct.bytes(FEW), all: ct.bytes() };
      const bm1 = { few: ct.bookmarkBytes(FEW), all: ct.bookmarkBytes() };
      const l1 = { few: lease.bytes(FEW), all: lease.bytes() };
      const writes1 = (await op.metricSum('ctopo_status_writes_total')) + (heartbeat?.writes ?? 0);

      log(`${design}: one pod's IP changes`);
      const pod = podName(change);
      const ip = ipFor((1 << 21) + change);
      const seen = watch.until((s) => s.ipOf(pod) === ip, 30_000, `${pod} → ${ip}`);
      await c.kube.request('PATCH', `/api/v1/namespaces/${ns}/pods/${pod}/status`, {
        body: podStatus(change, ip, new Date().toISOString().replace(/\.\d+Z$/, 'Z')),
        contentType: 'application/merge-patch+json',
      });
      await seen;
      await settle([ct, lease]);
      const ct2 = { few: ct.bytes(FEW), all: ct.bytes() };
      const l2 = { few: lease.bytes(FEW), all: lease.bytes() };
      return {
        ctIdlePerMin: { few: (ct1.few - ct0.few) / minutes, all: (ct1.all - ct0.all) / minutes },
        ctBookmarksPerMin: { few: (bm1.few - bm0.few) / minutes, all: (bm1.all - bm0.all) / minutes },
        leaseIdlePerMin: {
          few: (l1.few - l0.few) / minutes,
          all: ((l1.all - l0.all) / minutes) * (READERS / Math.max(1, LEASE_READERS)),
        },
        // The change's own bytes; a heartbeat or renewal landing meanwhile is part of what readers got.
        ctChange: { few: ct2.few - ct1.few, all: ct2.all - ct1.all },
        leaseChange: {
          few: l2.few - l1.few,
          all: (l2.all - l1.all) * (READERS / Math.max(1, LEASE_READERS)),
        },
        statusWritesIdle: (writes1 - writes0) / minutes,
        objectBytes: Buffer.byteLength(JSON.stringify(watch.current?.object ?? {})),
      };
    } finally {
      ct.close();
      lease.close();
    }
  } catch (e) {
    throw new Error(
      `${(e as Error).message}; operator (${design}) exit ${op.exitCode}, said:\n${op.output.slice(-1500)}`,
      { cause: e },
    );
  } finally {
    heartbeat?.stop();
    await stopOp();
  }
}

/** The former heartbeat's period: the status was rewritten when its lastPollTime was a minute old. */
const HEARTBEAT_MS = 60_000;

/**
 * The former design's status heartbeat, done by the benchmark beside today's operator: once a
 * minute the status is patched with a new lastPollTime, as the operator used to rewrite the
 * unchanged status — a whole-object write that every reader's watch receives. (The operator
 * writes nothing back: lastPollTime is not content it compares.)
 */
function statusHeartbeat(c: BenchCluster, ns: string): { readonly writes: number; stop(): void } {
  const path = `${CT_GROUP_PATH}/namespaces/${ns}/clustertopologies/${TOPOLOGY}/status`;
  const beat = { writes: 0, stop: () => clearInterval(timer) };
  const timer = setInterval(() => {
    const lastPollTime = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    c.kube
      .request('PATCH', path, {
        body: { status: { lastPollTime } },
        contentType: 'application/merge-patch+json',
      })
      .then(
        () => void beat.writes++,
        (e: Error) => log(`heartbeat: ${e.message}`),
      );
  }, HEARTBEAT_MS);
  return beat;
}

export default async function run(): Promise<Figure[]> {
  const c = await startBenchCluster(log);
  const stops: (() => Promise<void>)[] = [];
  try {
    log(`pods: ${PODS} with IPs`);
    await c.growPods(PODS, 24, log);
    await c.kube.request('POST', `${CT_GROUP_PATH}/namespaces/${c.namespace}/clustertopologies`, {
      body: {
        apiVersion: 'cluster.netzlive.io/v1alpha1',
        kind: 'ClusterTopology',
        metadata: { name: TOPOLOGY, namespace: c.namespace },
        spec: { selector: BENCH_SELECTOR, pollingInterval: POLLING_INTERVAL },
      },
    });
    const w = new TopologyWatch(c.kube, c.namespace, TOPOLOGY);
    stops.push(onCleanup('topology watch', () => w.stop()));
    await w.start();
    const before = await measureDesign(c, w, 'before', 0);
    const now = await measureDesign(c, w, 'now', 1);
    return figures(before, now);
  } finally {
    for (const s of stops.reverse()) await s();
    await c.stop();
  }
}

const KB = 1e3;

function figures(before: Measured, now: Measured): Figure[] {
  const out: Figure[] = [];
  const ctx = `${PODS} peers, object ${(now.objectBytes / KB).toFixed(0)} kB, pollingInterval ${POLLING_INTERVAL}; measured over ${WINDOW_S} s and scaled to a minute`;
  for (const [n, key] of [
    [FEW, 'few'],
    [READERS, 'all'],
  ] as const) {
    out.push(
      {
        name: `${n} readers, nothing changing: ClusterTopology object bytes delivered per minute, before (status heartbeat)`,
        unit: 'kB/min',
        samples: [before.ctIdlePerMin[key] / KB],
        note: `${before.statusWritesIdle.toFixed(2)} status writes/min; ${ctx}`,
      },
      {
        name: `${n} readers, nothing changing: ClusterTopology object bytes delivered per minute, now (written only on change)`,
        unit: 'kB/min',
        samples: [now.ctIdlePerMin[key] / KB],
        goal: { op: '<=', value: 0 },
        note: `${now.statusWritesIdle.toFixed(2)} status writes/min; besides, watch bookmarks (a resourceVersion each, no object): ${(now.ctBookmarksPerMin[key] / KB).toFixed(1)} kB/min now, ${(before.ctBookmarksPerMin[key] / KB).toFixed(1)} kB/min before`,
      },
      {
        name: `${n} readers, nothing changing: liveness Lease bytes delivered per minute, now`,
        unit: 'kB/min',
        samples: [now.leaseIdlePerMin[key] / KB],
        note: `renewed at most once a minute (before, readers read no Lease)${n > LEASE_READERS ? `; scaled from ${LEASE_READERS} open watches (the API server here answered no more)` : ''}`,
      },
      {
        name: `${n} readers, one pod changes: ClusterTopology bytes delivered, before`,
        unit: 'kB',
        samples: [before.ctChange[key] / KB],
      },
      {
        name: `${n} readers, one pod changes: ClusterTopology bytes delivered, now`,
        unit: 'kB',
        samples: [now.ctChange[key] / KB],
        note: `plus ${(now.leaseChange[key] / KB).toFixed(1)} kB of Lease events in the same seconds`,
      },
    );
  }
  return out;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  try {
    for (const figure of await run()) console.log(formatFigure(figure));
  } finally {
    await runCleanups();
  }
}
