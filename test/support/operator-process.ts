import { spawn, type ChildProcess } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { waitFor } from './wait.js';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
export const ctopoBin = join(repoRoot, 'bin', 'ctopo.js');
/** The dev tools' entry (`npm run demo`, `npm run dev-cluster`): dev/main.ts, compiled. */
export const ctopoDevBin = join(repoRoot, 'dist', 'dev', 'main.js');

/**
 * A `ctopo` process (operator or agent) as users run it, with its output kept for assertions;
 * with `bin` ctopoDevBin, a dev tool (the demo).
 */
export class CtopoProcess {
  private static readonly running = new Set<CtopoProcess>();
  readonly child: ChildProcess;
  output = '';
  exitCode: number | null | undefined;
  private exited: Promise<number | null>;

  constructor(args: string[], env: NodeJS.ProcessEnv = {}, bin = ctopoBin, nodeFlags: string[] = []) {
    this.child = spawn(process.execPath, [...nodeFlags, bin, ...args], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child.stdout!.on('data', (d: Buffer) => (this.output += d.toString()));
    this.child.stderr!.on('data', (d: Buffer) => (this.output += d.toString()));
    this.exited = new Promise((r) =>
      this.child.once('exit', (code) => {
        CtopoProcess.running.delete(this);
        r((this.exitCode = code));
      }),
    );
    CtopoProcess.running.add(this);
  }

  /** Kills every ctopo process this test file started and has not stopped. */
  static async stopAll(): Promise<void> {
    await Promise.all([...CtopoProcess.running].map((p) => p.stop('SIGKILL')));
  }

  /** The health/metrics port the process printed. */
  async port(): Promise<number> {
    return waitFor('the process to print its port', () => {
      const m = /on [^\s:]+:(\d+)/.exec(this.output);
      if (this.exitCode !== undefined) throw new Error(`exited with ${this.exitCode}: ${this.output}`);
      return m ? Number(m[1]) : undefined;
    });
  }

  async get(path: string): Promise<{ status: number; body: string }> {
    const res = await fetch(`http://127.0.0.1:${await this.port()}${path}`);
    return { status: res.status, body: await res.text() };
  }

  async metric(name: string, labels: Record<string, string> = {}): Promise<number | undefined> {
    const { body } = await this.get('/metrics');
    for (const line of body.split('\n')) {
      if (!line.startsWith(name)) continue;
      const m = /^([a-zA-Z_:][\w:]*)(\{([^}]*)\})? (\S+)$/.exec(line);
      if (!m || m[1] !== name) continue;
      const have = Object.fromEntries(
        [...(m[3] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]),
      );
      if (Object.entries(labels).every(([k, v]) => have[k] === v)) return Number(m[4]);
    }
    return undefined;
  }

  /** Sum of a counter over all label sets matching `labels`; throws when the metric is not exported. */
  async metricSum(name: string, labels: Record<string, string> = {}): Promise<number> {
    return sumMetric((await this.get('/metrics')).body, name, labels);
  }

  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
    if (this.exitCode === undefined) this.child.kill(signal);
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 15_000);
    const code = await this.exited;
    clearTimeout(timer);
    return code;
  }

  wait(): Promise<number | null> {
    return this.exited;
  }
}

/** `ctopo operator` (or, with `bin` and `nodeFlags`, another entry running it: bench/former-operator.ts). */
export function startOperator(
  kubeconfig: string,
  extra: string[] = [],
  env: NodeJS.ProcessEnv = {},
  bin = ctopoBin,
  nodeFlags: string[] = [],
): CtopoProcess {
  return new CtopoProcess(
    ['operator', '--kubeconfig', kubeconfig, '--http-host', '127.0.0.1', '--http-port', '0', ...extra],
    env,
    bin,
    nodeFlags,
  );
}

/**
 * `ctopo agent` for a pod named `pod` whose BEAM node is `pod@<host>` (or `node@<host>`), reading
 * `topology` in `namespace` with `kubeconfig`; HTTP on a free loopback port. Connector flags are
 * the caller's.
 */
export function localAgentArgs(o: {
  kubeconfig: string;
  namespace: string;
  topology: string;
  pod: string;
  /** The name part of the node's name, when it is not the pod's (a node under the wrong name). */
  node?: string;
  /** The host part of this pod's node name (default 127.0.0.1). */
  host?: string;
  logLevel?: 'debug' | 'info' | 'warn';
}): string[] {
  return [
    'agent',
    '--kubeconfig',
    o.kubeconfig,
    '--namespace',
    o.namespace,
    '--topology',
    o.topology,
    '--node-name',
    `${o.node ?? o.pod}@${o.host ?? '127.0.0.1'}`,
    '--pod-name',
    o.pod,
    '--http-host',
    '127.0.0.1',
    '--http-port',
    '0',
    '--log-level',
    o.logLevel ?? 'debug',
  ];
}

/**
 * Sum of the samples of metric `name` whose labels include `labels`, from a Prometheus text
 * exposition. A metric the body does not declare (no `# TYPE` line) throws: a misspelt or
 * removed metric must not read as 0 in a "must be 0" check. A declared counter without a
 * matching series is 0.
 */
export function sumMetric(body: string, name: string, labels: Record<string, string> = {}): number {
  if (!body.split('\n').some((line) => line.startsWith(`# TYPE ${name} `)))
    throw new Error(`the metric ${name} is not exported`);
  let sum = 0;
  for (const line of body.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)(\{([^}]*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = Object.fromEntries([...(m[3] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) sum += Number(m[4]);
  }
  return sum;
}
