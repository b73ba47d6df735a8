/**
 * Where the agent's memory goes (goal: ≤ 50 MB resident with 100 peers).
 *
 * 1. What loading costs a fresh Node.js process with the agent's runtime flags, each reading in
 *    its own child process: bare Node.js; + node:https (TLS); + the Kubernetes transport
 *    (operator/kube/client.js: now without @kubernetes/client-node, which it loads only for
 *    kubeconfigs it cannot serve itself, e.g. exec plugins); + everything `ctopo agent` imports.
 * 2. `ctopo agent` as users run it, holding 100 peers (file connector) of a ClusterTopology served
 *    by the real operator on a real API server: VmRSS, 15 readings a second apart. With
 *    BENCH_BASELINE_CTOPO=/path/to/an/older/checkout/bin/ctopo.js, today's agent (before this
 *    change) runs beside it against the same topology, in the same run.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { formatFigure, type Figure } from './figure.js';
import { CT_GROUP_PATH, startBenchCluster } from './bench-cluster.js';
import { onCleanup, runCleanups } from './cleanup.js';
import { BENCH_SELECTOR, ipFor, podName } from './pods.js';
import { processMemory } from './proc.js';
import { TopologyWatch } from './topology-watch.js';
import { startOperator } from '../test/support/operator-process.js';

const PEERS = 100;
const READINGS = 15;
const MB = 1e6;
/** The flags `ctopo agent` re-executes itself with (bin/ctopo.js). */
const AGENT_FLAGS = ['--max-semi-space-size=2'];
const distRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const repoRoot = resolve(distRoot, '..');
const log = (l: string) => process.stderr.write(`[agent-footprint] ${l}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** RSS after each import, in one fresh process (a forced GC and a pause before each reading). */
function importSteps(modules: string[]): Promise<number[]> {
  const script = [
    'const settle = async () => { globalThis.gc(); await new Promise((r) => setTimeout(r, 200)); return process.memoryUsage().rss; };',
    'const rss = [await settle()];',
    ...modules.map((m) => `await import(${JSON.stringify(m)}); rss.push(await settle());`),
    'console.log(JSON.stringify(rss));',
  ].join('\n');
  return new Promise((ok, fail) =>
    execFile(
      process.execPath,
      [...AGENT_FLAGS, '--expose-gc', '--input-type=module', '-e', script],
      { timeout: 120_000, cwd: repoRoot },
      (err, stdout) => (err ? fail(err) : ok(JSON.parse(stdout) as number[])),
    ),
  );
}

const url = (p: string) => pathToFileURL(join(distRoot, p)).href;

async function loadingCosts(): Promise<Figure[]> {
  const trees: [string, (p: string) => string][] = [['now', url]];
  const base = process.env.BENCH_BASELINE_CTOPO;
  if (base) {
    const baseDist = join(dirname(base), '..', 'dist');
    trees.push(['before (today)', (p) => pathToFileURL(join(baseDist, p)).href]);
  }
  const out: Figure[] = [];
  for (const [label, at] of trees) {
    const runs: number[][] = [];
    for (let i = 0; i < 5; i++)
      runs.push(
        await importSteps(['node:https', at('operator/kube/client.js'), at('operator/agent/run.js')]),
      );
    const names = [
      'bare Node.js',
      '+ node:https',
      '+ operator/kube/client.js (the Kubernetes transport)',
      '+ the rest of what `ctopo agent` imports',
    ];
    out.push(
      ...names.map((n, k) => ({
        name: `process footprint with the agent's flags, ${label}: ${n}`,
        unit: 'MB',
        samples: runs.map((r) => r[k]! / MB),
        note: 'VmRSS after a forced GC, each step adding to the one above',
      })),
    );
  }
  return out;
}

function agentProcess(bin: string, kubeconfig: string, ns: string, file: string): ChildProcess {
  const child = spawn(
    process.execPath,
    [
      bin,
      'agent',
      '--kubeconfig',
      kubeconfig,
      '--namespace',
      ns,
      '--topology',
      'web',
      '--connector',
      'file',
      '--file-path',
      file,
      '--pod-name',
      podName(PEERS),
      '--node-name',
      `${podName(PEERS)}@${ipFor(PEERS + 1)}`,
      '--http-host',
      '127.0.0.1',
      '--http-port',
      '0',
      '--log-level',
      'warn',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  return child;
}

/** RssAnon of /proc/PID/status: the process's own memory, without file-backed pages (the node binary). */
async function rssAnon(pid: number): Promise<number> {
  const { readFile } = await import('node:fs/promises');
  const m = /^RssAnon:\s+(\d+) kB$/m.exec(await readFile(`/proc/${pid}/status`, 'utf8'));
  return m ? (Number(m[1]) * 1024) / MB : NaN;
}

async function peersIn(file: string): Promise<number> {
  const { readFile } = await import('node:fs/promises');
  try {
    return (await readFile(file, 'utf8')).split('\n').filter(Boolean).length;
  } catch {
    return 0;
  }
}

async function runningAgents(): Promise<Figure[]> {
  const c = await startBenchCluster(log);
  const dir = await mkdtemp(join(tmpdir(), 'ctopo-bench-footprint-'));
  const stops: (() => Promise<void>)[] = [];
  try {
    await c.growPods(PEERS + 1, 24, log);
    await c.kube.request('POST', `${CT_GROUP_PATH}/namespaces/${c.namespace}/clustertopologies`, {
      body: {
        apiVersion: 'cluster.netzlive.io/v1alpha1',
        kind: 'ClusterTopology',
        metadata: { name: 'web', namespace: c.namespace },
        spec: { selector: BENCH_SELECTOR, pollingInterval: '2s' },
      },
    });
    const w = new TopologyWatch(c.kube, c.namespace, 'web');
    stops.push(onCleanup('topology watch', () => w.stop()));
    await w.start();
    const op = startOperator(c.state.kubeconfig, ['--namespaces', c.namespace, '--no-leader-elect']);
    stops.push(onCleanup('operator', async () => void (await op.stop())));
    await op.port();
    await w.reach((s) => s.peerCount === PEERS + 1, 90_000, `${PEERS + 1} peers`);

    const agents: { label: string; child: ChildProcess; file: string }[] = [
      { label: 'now', bin: join(repoRoot, 'bin', 'ctopo.js') },
      ...(process.env.BENCH_BASELINE_CTOPO
        ? [{ label: 'before (today)', bin: process.env.BENCH_BASELINE_CTOPO }]
        : []),
    ].map((a, i) => {
      const file = join(dir, `peers-${i}.txt`);
      const child = agentProcess(a.bin, c.state.kubeconfig, c.namespace, file);
      stops.push(async () => void child.kill('SIGKILL'));
      return { label: a.label, file, child };
    });
    for (const a of agents) {
      const deadline = Date.now() + 90_000;
      while ((await peersIn(a.file)) !== PEERS) {
        if (Date.now() > deadline || a.child.exitCode !== null)
          throw new Error(`agent ${a.label}: ${await peersIn(a.file)} peers written, not ${PEERS}`);
        await sleep(250);
      }
    }
    await sleep(15_000); // several rounds (2 s interval) in steady state
    const readings = agents.map(() => [] as number[]);
    const anon = agents.map(() => [] as number[]);
    for (let k = 0; k < READINGS; k++) {
      for (const [i, a] of agents.entries()) {
        readings[i]!.push((await processMemory(a.child.pid!)).rssBytes / MB);
        anon[i]!.push(await rssAnon(a.child.pid!));
      }
      await sleep(1000);
    }
    return agents.flatMap((a, i) => [
      {
        name: `agent, ${PEERS} peers, file connector: resident memory (VmRSS), ${a.label}`,
        unit: 'MB',
        samples: readings[i]!,
        ...(a.label === 'now' ? { goal: { op: '<=' as const, value: 50 } } : {}),
        note: 'kubeconfig with a client certificate (the lean transport; in a pod: the service account)',
      },
      {
        name: `agent, ${PEERS} peers, file connector: private memory (RssAnon: VmRSS less the node binary's file pages), ${a.label}`,
        unit: 'MB',
        samples: anon[i]!,
      },
    ]);
  } finally {
    for (const s of stops.reverse()) await s();
    await rm(dir, { recursive: true, force: true });
    await c.stop();
  }
}

export default async function run(): Promise<Figure[]> {
  return [...(await loadingCosts()), ...(await runningAgents())];
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  try {
    for (const figure of await run()) console.log(formatFigure(figure));
  } finally {
    await runCleanups();
  }
}
