/**
 * The BEAM client library (clients/cluster_topology) in a real VM, at 100 and 1,000 listed peers, with the
 * sidecar agent's figures from bench/agent.bench.ts beside it in the same run.
 *
 * On a real control plane (etcd + kube-apiserver), one ClusterTopology whose status this bench
 * writes as the operator does (no operator runs: the client's own costs are measured), and
 * BENCH_BEAM_REAL (100) real BEAM peer nodes on loopback. The client runs in `m@127.0.0.1`
 * under the test probe (test/fixtures/beam-client/ct_probe.erl), which reports memory,
 * reductions and — by call tracing of the client's processes — every `net_kernel:connect_node/1`
 * and `erlang:disconnect_node/1` they make, with its time.
 *
 * - Memory the client adds: its processes' memory plus the refc binaries they hold, once the
 *   list is applied; and the VM's `erlang:memory(total)` growth from before the client started.
 * - A minute with nothing changing (after the status changes below and 20 s of quiet): CPU
 *   seconds of the whole VM (/proc), minus the next minute of the same VM holding the same
 *   connections with the client stopped (stopping the client disconnects nothing) — so the connections' own cost (distribution ticks, `global`,
 *   schedulers waking for them), which any way of clustering pays, is not counted as the
 *   client's; connect/disconnect calls in that minute.
 * - Status change → connect_node called: the bench adds one peer to the status (a PATCH of the
 *   status subresource) and waits for the traced call; from the PATCH, and from the moment the
 *   client decoded the event.
 * - OS processes: children of the VM's OS process, before and after the client started.
 *
 * At 1,000 peers only BENCH_BEAM_REAL of them run; the others are names no node answers to.
 * Their failed connects are retried after `retry_ms`, set here past the idle minute, so the
 * minute measures the client, not the retry of peers that do not exist (the figure says so).
 *
 * The sidecar beside it, at the same listed peer counts (bench/agent-erlang-rounds.ts, the
 * measurement agent.bench.ts makes): the real `ctopo agent --connector erlang` beside a real
 * local BEAM node, with the real operator, on a control plane of its own per size: its resident
 * memory (VmRSS), its erl_call runs and the CPU of the agent, of those runs and of the local node
 * answering them, over the same idle minute. At 1,000 listed peers, 100 run and 900 are names no
 * node answers to, as for the client; the agent retries those at every round, so that run's
 * pollingInterval (10m) is set past the minute as the client's retry_ms is; the figure says so.
 *
 * Per cell of the OTP library's matrix (tools/beam/cells.sh): BENCH_BEAM_CELLS=otp25,otp27,otp29
 * measures the client in each cell in turn (its nodes and its peers run inside the cell's Debian
 * root), each at 2, 100 and 1,000 listed peers; the figures name the cell's OTP.
 *
 * Knobs: BENCH_BEAM_REAL (100), BENCH_BEAM_CHANGES (30), BENCH_BEAM_IDLE_MS (60000),
 * BENCH_BEAM_SIDECAR (1: measure the sidecar too; 2: only the sidecar), BENCH_BEAM_CELLS (the
 * cell of CTOPO_BEAM_CELL, else this machine's otp25), BENCH_BEAM_MEMORY_ONLY (1: only the two
 * memory figures per size, no status changes and no idle minutes).
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { formatFigure, type Figure } from './figure.js';
import { startBenchCluster, type BenchCluster } from './bench-cluster.js';
import { onCleanup, runCleanups } from './cleanup.js';
import { mapLimit } from './concurrency.js';
import { percentile, perMinute } from './stats.js';
import { measureErlangRounds } from './agent-erlang-rounds.js';
import { startOperator } from '../test/support/operator-process.js';
import { ErlangTestEnv, run as runProgram } from '../dev/cluster/beam.js';
import { buildClient, listedPeer, ProbeNode, type ProbeLine } from '../test/support/beam-client.js';

const env = (k: string, d: number) => (process.env[k] !== undefined ? Number(process.env[k]) : d);
const REAL = env('BENCH_BEAM_REAL', 100);
const CHANGES = env('BENCH_BEAM_CHANGES', 30);
const IDLE_MS = env('BENCH_BEAM_IDLE_MS', 60_000);
const SIDECAR = env('BENCH_BEAM_SIDECAR', 1);
const SIZES = [2, 100, 1000];
const CELLS = (process.env.BENCH_BEAM_CELLS ?? process.env.CTOPO_BEAM_CELL ?? 'otp25')
  .split(',')
  .filter(Boolean);
const MEMORY_ONLY = env('BENCH_BEAM_MEMORY_ONLY', 0) === 1;
const TOPOLOGY = 'beam';
const CLOCK_TICKS = 100;

const log = (l: string) =>
  process.stderr.write(`[beam-client bench ${new Date().toISOString().slice(11, 19)}] ${l}\n`);
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

async function cpuSeconds(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

async function childProcesses(pid: number): Promise<number> {
  let n = 0;
  for (const e of await readdir('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const stat = await readFile(`/proc/${e}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) n++;
    } catch {
      // gone
    }
  }
  return n;
}

const peer = (name: string) => listedPeer(name.slice(0, name.indexOf('@')));

async function writeStatus(c: BenchCluster, names: readonly string[]): Promise<void> {
  const path = `/apis/cluster.netzlive.io/v1alpha1/namespaces/${c.namespace}/clustertopologies/${TOPOLOGY}/status`;
  await c.kube.request('PATCH', path, {
    body: {
      status: {
        peers: [...names].sort().map(peer),
        peerCount: names.length,
        lastResponse: { code: '200', reason: 'OK', since: new Date().toISOString() },
      },
    },
    contentType: 'application/merge-patch+json',
  });
}

interface SizeResult {
  peers: number;
  processMemory: number;
  memoryAfterChanges: number;
  binaryRefs: number;
  vmGrowth: number;
  codeGrowth: number;
  vmTotal: number;
  idleCpu: number;
  baselineCpu: number;
  idleCalls: number;
  idleReductions: number;
  fromPatch: number[];
  fromEvent: number[];
  extraProcesses: number;
}

async function measureSize(
  c: BenchCluster,
  erl: ErlangTestEnv,
  ebin: string,
  real: readonly string[],
  size: number,
): Promise<SizeResult> {
  const listed = [
    ...real,
    ...Array.from({ length: Math.max(0, size - real.length) }, (_, i) => `ghost${i}@127.0.0.1`),
  ].slice(0, size);
  await writeStatus(c, []);
  const m = await ProbeNode.start(erl, ebin, `m${size}`, {
    client: {
      name: TOPOLOGY,
      namespace: c.namespace,
      api_url: c.state.server,
      ca_file: c.state.pki.caCert,
      cert_file: join(c.state.pki.dir, 'admin.crt'),
      key_file: join(c.state.pki.dir, 'admin.key'),
      retry_ms: 3_600_000,
      max_peers: 5000,
    },
    hostname: `m${size}`,
    sampleMs: 3_600_000,
    env: { CT_PROBE_NO_CLIENT: '1' },
  });
  const stop = onCleanup(`node m${size}`, () => m.stop());
  try {
    const before = await m.ask('measure', 'measure');
    const pid = before.os_pid as number;
    const childrenBefore = await childProcesses(pid);
    await m.ask('start_client', 'started');
    await m.ask('trace', 'tracing');
    const t0 = Date.now();
    await writeStatus(c, listed);
    // The round that applied the list.
    await m.ask('state', 'state');
    const applied = await waitLine(m, (l) => l.t === 'event' && l.event === 'round' && l.at >= t0, 120_000);
    log(
      `${size} peers: round connected ${(applied.connected as string[]).length}, failed ${(applied.failed_connects as unknown[]).length}`,
    );
    await sleep(5_000);
    const after = await m.ask('measure', 'measure');
    const childrenAfter = await childProcesses(pid);
    const memory = {
      peers: size,
      processMemory: after.process_memory as number,
      binaryRefs: after.binary_refs as number,
      vmGrowth: (after.vm_total as number) - (before.vm_total as number),
      codeGrowth: (after.vm_code as number) - (before.vm_code as number),
      vmTotal: after.vm_total as number,
    };
    if (MEMORY_ONLY)
      return {
        ...memory,
        memoryAfterChanges: NaN,
        idleCpu: NaN,
        baselineCpu: NaN,
        idleCalls: NaN,
        idleReductions: NaN,
        fromPatch: [],
        fromEvent: [],
        extraProcesses: childrenAfter - childrenBefore,
      };

    log(`${size} peers: ${CHANGES} status changes`);
    const fromPatch: number[] = [];
    const fromEvent: number[] = [];
    let current = [...listed];
    for (let k = 0; k < CHANGES; k++) {
      const name = `late${k}@127.0.0.1`;
      current = [...current, name];
      const from = m.lines.length;
      const tPatch = Date.now();
      await writeStatus(c, current);
      const call = await waitLine(m, (l) => l.t === 'dist_call' && l.node === name, 30_000, from);
      const round = await waitLine(
        m,
        (l) => l.t === 'event' && l.event === 'round' && (l.called as string[]).includes(name),
        60_000,
        from,
      );
      fromPatch.push((call.called_at as number) - tPatch);
      fromEvent.push((call.called_at as number) - (round.status_seen_at as number));
    }

    // The two idle minutes side by side, well after the connections formed (global's own work
    // on a new mesh would otherwise land in the first one).
    await sleep(20_000);
    const afterChanges = await m.ask('measure', 'measure');
    log(`${size} peers: idle minute`);
    const callsFrom = m.lines.length;
    const cpu0 = await cpuSeconds(pid);
    const red0 = afterChanges.reductions as number;
    await sleep(IDLE_MS);
    const cpu1 = await cpuSeconds(pid);
    const red1 = (await m.ask('measure', 'measure')).reductions as number;
    const idleCalls = m.lines.slice(callsFrom).filter((l) => l.t === 'dist_call').length;

    log(`${size} peers: idle minute of the same VM and connections, the client stopped`);
    await m.ask('stop_client', 'stopped');
    await sleep(5_000);
    const b0 = await cpuSeconds(pid);
    await sleep(IDLE_MS);
    const baselineCpu = ((await cpuSeconds(pid)) - b0) * (60_000 / IDLE_MS);
    return {
      ...memory,
      memoryAfterChanges: (afterChanges.process_memory as number) + (afterChanges.binary_refs as number),
      idleCpu: (cpu1 - cpu0) * (60_000 / IDLE_MS) - baselineCpu,
      baselineCpu,
      idleCalls: idleCalls * (60_000 / IDLE_MS),
      idleReductions: (red1 - red0) * (60_000 / IDLE_MS),
      fromPatch,
      fromEvent,
      extraProcesses: childrenAfter - childrenBefore,
    };
  } finally {
    await stop();
  }
}

async function waitLine(
  m: ProbeNode,
  match: (l: ProbeLine) => boolean,
  timeoutMs: number,
  from = 0,
): Promise<ProbeLine> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const hit = m.lines.slice(from).find(match);
    if (hit) return hit;
    if (Date.now() > deadline) throw new Error(`${m.name}: timed out waiting for a report`);
    await sleep(20);
  }
}

export default async function run(): Promise<Figure[]> {
  const figures: Figure[] = SIDECAR === 2 ? [] : await client();
  if (SIDECAR >= 1) for (const size of SIZES) figures.push(...(await sidecar(size)));
  return figures;
}

/** The client library in each cell, at each size (see the file's comment). */
async function client(): Promise<Figure[]> {
  const figures: Figure[] = [];
  const before = process.env.CTOPO_BEAM_CELL;
  try {
    for (const cell of CELLS) {
      process.env.CTOPO_BEAM_CELL = cell; // beamCommand starts erl and erlc in the cell's root
      figures.push(...(await clientIn(cell)));
    }
  } finally {
    if (before === undefined) delete process.env.CTOPO_BEAM_CELL;
    else process.env.CTOPO_BEAM_CELL = before;
  }
  return figures;
}

async function clientIn(cell: string): Promise<Figure[]> {
  const figures: Figure[] = [];
  log(`${cell}: control plane`);
  const c = await startBenchCluster(log);
  const erl = await ErlangTestEnv.start();
  onCleanup('BEAM nodes', async () => {
    await ProbeNode.stopAll();
    await erl.stop();
  });
  try {
    await c.kubectl(
      ['apply', '-f', '-'],
      JSON.stringify({
        apiVersion: 'cluster.netzlive.io/v1alpha1',
        kind: 'ClusterTopology',
        metadata: { name: TOPOLOGY, namespace: c.namespace },
        spec: { selector: 'app=none', pollingInterval: '10s' },
      }),
    );
    const ebin = await buildClient(join(erl.root, 'client'));
    const otp = (
      await runProgram(
        'erl',
        [
          '-noshell',
          '-eval',
          '{ok, V} = file:read_file(filename:join([code:root_dir(), "releases", erlang:system_info(otp_release), "OTP_VERSION"])), io:format("~s", [string:trim(V)]), halt().',
        ],
        erl.childEnv(),
        60_000,
      )
    ).stdout.trim();
    log(`${cell}: OTP ${otp}`);
    log(`${REAL} real peer nodes`);
    // Plain peer nodes (the probe without a client): readiness is their own report on stdout,
    // no erl_call, so a loaded machine starts them reliably.
    const peers = await mapLimit(
      Array.from({ length: REAL }, (_, i) => i),
      2,
      (i) =>
        ProbeNode.start(erl, ebin, `p${i}`, {
          client: { name: 'none' },
          env: { CT_PROBE_NO_CLIENT: '1' },
          sampleMs: 3_600_000,
        }),
    );
    const real = peers.map((p) => p.name);
    for (const size of SIZES) {
      const r = await measureSize(c, erl, ebin, real, size);
      const ghosts = size > REAL ? ` (${REAL} running, ${size - REAL} names no node answers to)` : '';
      const memory: Figure[] = [
        {
          name: `OTP ${otp}: client memory at ${size} listed peers: its processes + refc binaries${ghosts}`,
          unit: 'MB',
          samples: [(r.processMemory + r.binaryRefs) / 1e6],
          goal: size === 1000 ? { op: '<=', value: 2 } : undefined,
          note: MEMORY_ONLY
            ? 'once the list is applied'
            : `once the list is applied; ${(r.memoryAfterChanges / 1e6).toFixed(3)} MB after ${CHANGES} more status changes`,
        } as Figure,
        {
          name: `OTP ${otp}: VM total (erlang:memory(total)) grown at ${size} listed peers, from a node with neither the library nor ssl loaded${ghosts}`,
          unit: 'MB',
          samples: [r.vmGrowth / 1e6],
          note: `loaded code ${(r.codeGrowth / 1e6).toFixed(2)} MB of it (ssl, public_key, crypto, the library), the rest the processes, tables and buffers of ssl, the library, global and the distribution connections to the peers; the VM's total then ${(r.vmTotal / 1e6).toFixed(2)} MB`,
        },
      ];
      figures.push(...memory);
      if (MEMORY_ONLY) {
        for (const f of memory) log(formatFigure(f));
        continue;
      }
      figures.push(
        {
          name: `OTP ${otp}: client CPU, a minute with nothing changing, ${size} peers (VM minus the same VM and connections with the client stopped)`,
          unit: 'CPU-s/min',
          samples: [r.idleCpu],
          goal: { op: '<=', value: 0.05 },
          note: `VM without the client ${r.baselineCpu.toFixed(3)} CPU-s/min; client reductions ${Math.round(r.idleReductions)}/min`,
        },
        {
          name: `OTP ${otp}: client connect/disconnect calls, a minute with nothing changing, ${size} peers`,
          unit: 'calls/min',
          samples: [r.idleCalls],
          goal: { op: '<=', value: 0 },
          note:
            size > REAL
              ? 'failed connects of absent peers retry after retry_ms (set past the minute here)'
              : undefined,
        } as Figure,
        {
          name: `OTP ${otp}: status change → connect_node called, from the status PATCH, ${size} peers`,
          unit: 'ms',
          samples: r.fromPatch,
          note: `p50 ${percentile(r.fromPatch, 50).toFixed(1)} / p99 ${percentile(r.fromPatch, 99).toFixed(1)} ms`,
        },
        {
          name: `OTP ${otp}: status change → connect_node called, from the client decoding the event, ${size} peers`,
          unit: 'ms',
          samples: r.fromEvent,
          note: `p50 ${percentile(r.fromEvent, 50).toFixed(1)} / p99 ${percentile(r.fromEvent, 99).toFixed(1)} ms`,
        },
        {
          name: `OTP ${otp}: status change → connect_node called, from the client decoding the event, ${size} peers: p99`,
          unit: 'ms',
          samples: [percentile(r.fromEvent, 99)],
          goal: { op: '<=', value: 50 },
          note: `of the ${r.fromEvent.length} changes above; machine load average ${loadavg()[0]!.toFixed(1)} on ${cpus().length} cores when the size finished`,
        },
        {
          name: `OTP ${otp}: extra OS processes the client starts, ${size} peers`,
          unit: 'processes',
          samples: [r.extraProcesses],
          goal: { op: '<=', value: 0 },
        },
      );
      for (const f of figures.slice(-8)) log(formatFigure(f));
    }
  } finally {
    await ProbeNode.stopAll();
    await erl.stop();
    await c.stop();
  }
  return figures;
}

/** The sidecar agent with the erlang connector at `size` listed peers (see the file's comment). */
async function sidecar(size: number): Promise<Figure[]> {
  const real = Math.min(size, REAL);
  const ghosts = size - real;
  const pollingInterval = ghosts > 0 ? '10m' : '10s';
  log(`sidecar at ${size} listed peers (${real} running), pollingInterval ${pollingInterval}`);
  const c = await startBenchCluster(log);
  const dir = await mkdtemp(join(tmpdir(), 'ctopo-bench-sidecar-'));
  const op = startOperator(c.state.kubeconfig, ['--namespaces', c.namespace, '--no-leader-elect']);
  const stopOp = onCleanup('operator process', async () => void (await op.stop()));
  try {
    await op.port();
    const r = await measureErlangRounds(c, dir, {
      peers: real,
      ghosts,
      windowMs: IDLE_MS,
      pollingInterval,
      changes: false,
      log,
    });
    const w = r.idle;
    const listed = ghosts ? ` (${real} running, ${ghosts} names no node answers to)` : '';
    const cpuMin = perMinute(w.agentCpu + w.erlCallCpu, w.ms);
    const runsMin = perMinute(w.runs, w.ms);
    const retries = ghosts
      ? `; pollingInterval ${pollingInterval}, past the minute: the agent retries absent peers at every round (one erl_call each)`
      : `; pollingInterval ${pollingInterval} (the default): one round, so one erl_call asking nodes(), per interval`;
    const figures: Figure[] = [
      {
        name: `sidecar (Node.js agent, erlang connector) at ${size} listed peers${listed}: resident memory (VmRSS)`,
        unit: 'MB',
        samples: w.rssBytes.map((b) => b / 1e6),
        goal: size === 1000 ? { op: '<=', value: 2 } : undefined,
        note: `a process of its own beside the VM${size === 1000 ? " (the client's goal shown for comparison)" : ''}; ${w.rssBytes.length} readings a second apart over the idle minute`,
      } as Figure,
      {
        name: `sidecar at ${size} listed peers: CPU, a minute with nothing changing (the agent + its erl_call runs)`,
        unit: 'CPU-s/min',
        samples: [cpuMin],
        goal: { op: '<=', value: 0.05 },
        note: `agent ${perMinute(w.agentCpu, w.ms).toFixed(3)}, erl_call runs (with the recording wrapper's sh) ${perMinute(w.erlCallCpu, w.ms).toFixed(3)} CPU-s/min; the local node's whole VM, its connections and its answers to erl_call included (not counted here, as the client's figure leaves the connections out), ${perMinute(w.localNodeCpu, w.ms).toFixed(3)} CPU-s/min${retries}`,
      },
      {
        name: `sidecar at ${size} listed peers: erl_call runs (extra OS processes, each a distribution connection), a minute with nothing changing`,
        unit: 'runs/min',
        samples: [runsMin],
        goal: { op: '<=', value: 0 },
        note: `${w.runs} runs in ${(w.ms / 1000).toFixed(0)} s, ${w.rounds} rounds (${
          Object.entries(w.byKind)
            .map(([k, n]) => `${n} ${k}`)
            .join(', ') || 'none'
        }); OTP ${r.otp.replace(/"/g, '')}`,
      },
    ];
    for (const f of figures) log(formatFigure(f));
    return figures;
  } finally {
    await stopOp();
    await rm(dir, { recursive: true, force: true });
    await c.stop();
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  try {
    for (const figure of await run()) console.log(formatFigure(figure));
  } finally {
    await runCleanups();
  }
}
