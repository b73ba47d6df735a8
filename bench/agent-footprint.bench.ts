/**
 * Where the agent's memory goes (goal: ≤ 50 MB resident with 100 peers), each figure as VmRSS
 * and its two parts: RssAnon (the process's own memory: V8 heap, code, buffers) and RssFile (the
 * node binary's pages it has touched, file-backed and shared with every other Node.js process
 * through the page cache).
 *
 * 1. What loading costs a fresh Node.js process with the agent's runtime flags, each reading in
 *    its own child process: bare Node.js; + node:https and a TLS context (the floor of any
 *    process that talks to the API server); + the Kubernetes transport (operator/kube/client.js);
 *    + everything `ctopo agent` imports (the CLI entry and the agent command).
 * 2. `ctopo agent` as users run it, holding 100 peers (file connector) of a ClusterTopology served
 *    by the real operator on a real API server: 15 readings a second apart, and its CPU over them.
 *    Its kubeconfig is JSON, as in a pod the service account: neither needs a YAML parser.
 *
 * With BENCH_BASELINE_CTOPO=/path/to/an/older/checkout/bin/ctopo.js (its dist/ built), today's
 * agent (before this change) is measured beside it the same way, in the same run.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { formatFigure, type Figure } from './figure.js';
import { CT_GROUP_PATH, startBenchCluster } from './bench-cluster.js';
import { onCleanup, runCleanups } from './cleanup.js';
import { BENCH_SELECTOR, ipFor, podName } from './pods.js';
import { nodeFlagsOf, processCpuSeconds } from './proc.js';
import { TopologyWatch } from './topology-watch.js';
import { localAgentArgs, startOperator } from '../test/support/operator-process.js';

const PEERS = 100;
const READINGS = 15;
const MB = 1e6;
const GOAL_MB = 50;
/**
 * The flags `ctopo agent` re-executes itself with (bin/ctopo.js); the running agent's own flags
 * are read from /proc and must be these. Today's launcher (before lite mode) used BEFORE_FLAGS.
 */
const AGENT_FLAGS = ['--max-semi-space-size=2', '--lite-mode'];
const BEFORE_FLAGS = ['--max-semi-space-size=2'];
const distRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const repoRoot = resolve(distRoot, '..');
const log = (l: string) => process.stderr.write(`[agent-footprint] ${l}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Resident {
  rss: number;
  anon: number;
  file: number;
}

/** VmRSS, RssAnon and RssFile (MB) of /proc/PID/status text. */
function parseResident(text: string): Resident {
  const kb = (k: string) => {
    const m = new RegExp(`^${k}:\\s+(\\d+) kB$`, 'm').exec(text);
    if (!m) throw new Error(`/proc status has no ${k} line`);
    return (Number(m[1]) * 1024) / MB;
  };
  return { rss: kb('VmRSS'), anon: kb('RssAnon'), file: kb('RssFile') };
}

const residentOf = async (pid: number) => parseResident(await readFile(`/proc/${pid}/status`, 'utf8'));

/** Resident memory after each step, in one fresh process (a forced GC and a pause before each reading). */
function importSteps(flags: string[], steps: string[]): Promise<Resident[]> {
  const script = [
    "const { readFileSync } = await import('node:fs');",
    `const parse = ${parseResident.toString()};`,
    'const MB = 1e6;',
    "const settle = async () => { globalThis.gc(); await new Promise((r) => setTimeout(r, 200)); globalThis.gc(); return parse(readFileSync('/proc/self/status', 'utf8')); };",
    'const out = [await settle()];',
    ...steps.map((code) => `${code}; out.push(await settle());`),
    'console.log(JSON.stringify(out));',
  ].join('\n');
  return new Promise((ok, fail) =>
    execFile(
      process.execPath,
      [...flags, '--expose-gc', '--input-type=module', '-e', script],
      { timeout: 120_000, cwd: repoRoot },
      (err, stdout) => (err ? fail(err) : ok(JSON.parse(stdout) as Resident[])),
    ),
  );
}

const PARTS = [
  ['resident memory (VmRSS)', 'rss', ''],
  ['its own part (RssAnon)', 'anon', ''],
  ['node binary pages (RssFile)', 'file', ', shared through the page cache'],
] as const;

/** One figure per part of `readings`, labelled; the goal on VmRSS of `goal` figures. */
function residentFigures(name: string, readings: Resident[], goal: boolean, note: string): Figure[] {
  return PARTS.map(([part, key, extra]) => ({
    name: `${name}: ${part}`,
    unit: 'MB',
    samples: readings.map((r) => r[key]),
    ...(goal && key === 'rss' ? { goal: { op: '<=' as const, value: GOAL_MB } } : {}),
    note: note + extra,
  }));
}

interface Tree {
  label: string;
  bin: string;
  flags: string[];
}

function trees(): Tree[] {
  const base = process.env.BENCH_BASELINE_CTOPO;
  return [
    { label: 'now', bin: join(repoRoot, 'bin', 'ctopo.js'), flags: AGENT_FLAGS },
    ...(base ? [{ label: 'before (today)', bin: resolve(base), flags: BEFORE_FLAGS }] : []),
  ];
}

async function loadingCosts(): Promise<Figure[]> {
  const out: Figure[] = [];
  for (const t of trees()) {
    const at = (p: string) => JSON.stringify(pathToFileURL(join(dirname(t.bin), '..', 'dist', p)).href);
    const steps: [string, string][] = [
      [
        '+ node:https and a TLS context',
        "(await import('node:https')); (await import('node:tls')).createSecureContext({})",
      ],
      [
        '+ operator/kube/client.js (the Kubernetes transport)',
        `await import(${at('operator/kube/client.js')})`,
      ],
      [
        '+ the rest of what `ctopo agent` loads (CLI entry, agent command)',
        `await import(${at('operator/cli/main.js')}); await import(${at('operator/cli/commands/agent.js')})`,
      ],
    ];
    const runs: Resident[][] = [];
    for (let i = 0; i < 5; i++)
      runs.push(
        await importSteps(
          t.flags,
          steps.map(([, code]) => code),
        ),
      );
    const names = ['bare Node.js', ...steps.map(([n]) => n)];
    names.forEach((n, k) =>
      out.push(
        ...residentFigures(
          `loading, ${t.label} (${t.flags.join(' ')}): ${n}`,
          runs.map((r) => r[k]!),
          false,
          'after a forced GC, each step adding to the one above, 5 fresh processes',
        ),
      ),
    );
  }
  return out;
}

function agentProcess(bin: string, kubeconfig: string, ns: string, file: string): ChildProcess {
  const child = spawn(
    process.execPath,
    [
      bin,
      ...localAgentArgs({
        kubeconfig,
        namespace: ns,
        topology: 'web',
        pod: podName(PEERS),
        host: ipFor(PEERS + 1),
        logLevel: 'warn',
      }),
      '--connector',
      'file',
      '--file-path',
      file,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  return child;
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

    // The same kubeconfig as JSON: what a pod's service account costs (no YAML parser loaded).
    const kubeconfig = join(dir, 'kubeconfig.json');
    await writeFile(kubeconfig, JSON.stringify(parseYaml(await readFile(c.state.kubeconfig, 'utf8'))), {
      mode: 0o600,
    });
    const agents = trees().map((t, i) => {
      const file = join(dir, `peers-${i}.txt`);
      const child = agentProcess(t.bin, kubeconfig, c.namespace, file);
      stops.push(async () => void child.kill('SIGKILL'));
      return { ...t, file, child };
    });
    for (const a of agents) {
      const deadline = Date.now() + 90_000;
      while ((await peersIn(a.file)) !== PEERS) {
        if (Date.now() > deadline || a.child.exitCode !== null)
          throw new Error(`agent ${a.label}: ${await peersIn(a.file)} peers written, not ${PEERS}`);
        await sleep(250);
      }
      const flags = await nodeFlagsOf(a.child.pid!);
      if (flags.join(' ') !== a.flags.join(' '))
        throw new Error(
          `agent ${a.label} runs with ${flags.join(' ')}, not ${a.flags.join(' ')} (update the bench)`,
        );
    }
    await sleep(15_000); // several rounds (2 s interval) in steady state
    const readings = agents.map(() => [] as Resident[]);
    const cpuBefore = await Promise.all(agents.map((a) => processCpuSeconds(a.child.pid!)));
    const started = Date.now();
    for (let k = 0; k < READINGS; k++) {
      for (const [i, a] of agents.entries()) readings[i]!.push(await residentOf(a.child.pid!));
      await sleep(1000);
    }
    const minutes = (Date.now() - started) / 60_000;
    const cpuAfter = await Promise.all(agents.map((a) => processCpuSeconds(a.child.pid!)));
    return agents.flatMap((a, i) => [
      ...residentFigures(
        `agent, ${PEERS} peers, file connector, ${a.label} (${a.flags.join(' ')})`,
        readings[i]!,
        a.label === 'now',
        `${READINGS} readings a second apart after all peers were connected; pollingInterval 2s; kubeconfig with a client certificate, as JSON`,
      ),
      {
        name: `agent, ${PEERS} peers, file connector, ${a.label}: CPU while idle`,
        unit: 'CPU s/min',
        samples: [(cpuAfter[i]! - cpuBefore[i]!) / minutes],
        note: `utime + stime over the ${READINGS} readings (a round every 2 s, nothing changing)`,
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
