import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ControlPlaneState } from '../../dev/cluster/control-plane.js';
import { kubectlOk } from './cluster.js';
import type { ErlangTestEnv } from './erlang.js';
import { beamCommand, compileBeamClient, localNodeArgs, run } from './erlang.js';
import { waitFor } from './wait.js';

/**
 * The BEAM client library (clients/cluster_topology) on real nodes: compiles it with erlc, and starts
 * `name@127.0.0.1` nodes that run it under a supervisor through a small probe
 * (test/fixtures/beam-client/ct_probe.erl). The probe reports on stdout, one JSON object a line:
 * `nodes()` samples every second, every nodedown, every event of the client's hook, and the
 * client's state on request — so no erl_call is needed, and TLS-distribution nodes (which
 * erl_call cannot reach) are observed the same way.
 */

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
export { beamClientDir as clientDir } from './erlang.js';
const probeSource = join(repoRoot, 'test', 'fixtures', 'beam-client', 'ct_probe.erl');
const telemetrySource = join(repoRoot, 'test', 'fixtures', 'beam-client', 'telemetry', 'telemetry.erl');

/**
 * Compiles the stand-in `telemetry` module (test/fixtures/beam-client/telemetry) into a folder of
 * its own and returns it: a node started with `-pa <it>` has telemetry, the others do not.
 */
export async function buildTelemetryStandIn(ebin: string, dir: string): Promise<string> {
  await mkdir(dir, { recursive: true });
  const r = await run('erlc', ['-pa', ebin, '-o', dir, telemetrySource], {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: dir,
    LANG: 'C',
  });
  if (r.code !== 0) throw new Error(`erlc failed: ${r.stdout}${r.stderr}`);
  return dir;
}

/** The client's timings shortened for a test (its defaults are seconds to minutes). */
export const FAST_CLIENT = {
  backoff_min_ms: 100,
  backoff_max_ms: 1000,
  retry_ms: 500,
  reconnect_delay_ms: 100,
  watch_timeout_s: 3,
  request_timeout_ms: 5000,
  connect_timeout_ms: 3000,
};

/** A `status.peers` entry as the operator writes it for a pod `short` at 127.0.0.1. */
export function listedPeer(short: string) {
  return {
    nodeName: `${short}@127.0.0.1`,
    pod: short,
    uid: `uid-${short}`,
    podIP: '127.0.0.1',
    node: '',
    hostSource: 'PodIP',
    nameSource: 'PodName',
    terminating: false,
  };
}

/**
 * Writes a topology's status as the operator does, listing these pods (a protocol-level test
 * where no operator runs); `message` goes into `lastResponse`, `polled` (whole seconds) into
 * `lastPollTime`, which a reader shows as the status it last read.
 */
export async function writeListedStatus(
  s: ControlPlaneState,
  ns: string,
  topology: string,
  shorts: readonly string[],
  message = 'OK',
  polled?: Date,
): Promise<void> {
  const lastResponse = { code: '200', reason: 'OK', message, since: new Date().toISOString() };
  const lastPollTime = polled ? { lastPollTime: polled.toISOString().replace(/\.\d+Z$/, 'Z') } : {};
  await kubectlOk(s, [
    '-n',
    ns,
    'patch',
    'ctopo',
    topology,
    '--subresource=status',
    '--type=merge',
    '-p',
    JSON.stringify({ status: { peers: shorts.map(listedPeer), lastResponse, ...lastPollTime } }),
  ]);
}

/** Compiles the library and the probe into `<dir>/ebin`; returns that directory. */
export async function buildClient(dir?: string): Promise<string> {
  const root = dir ?? (await mkdtemp(join(tmpdir(), 'ctopo-beamclient-')));
  const ebin = join(root, 'ebin');
  await compileBeamClient(ebin, [probeSource]);
  return ebin;
}

export interface ProbeLine {
  readonly t: string;
  readonly at: number;
  readonly [k: string]: unknown;
}

export interface ClientState {
  self: string;
  peers: {
    node: string;
    pod: string | null;
    uid: string | null;
    ready: unknown;
    serving: unknown;
    connected: boolean;
  }[];
  remembered: string[];
  trouble: { cause: string; detail: string; since: number } | null;
  liveness: { value: string; reason: string };
  self_check: { ok: boolean | string; problem?: string; computed?: string; node?: string };
  status: { seen: boolean; unknown_reason?: string | null };
  last_round: Record<string, unknown> | null;
  nodedowns: number;
  /** Each reader's retries by cause, and its last retry. */
  reads: Record<string, { retries: Record<string, number>; last_retry?: Record<string, unknown> }>;
  hook: 'none' | 'attached' | 'detached';
  telemetry: boolean;
}

export interface ProbeOptions {
  /** The client's options (JSON: strings, numbers, booleans). */
  readonly client: Record<string, unknown>;
  /** HOSTNAME for the node (the pod name the client's self check uses). */
  readonly hostname?: string;
  /** Extra erl arguments (e.g. TLS distribution's `-ssl_dist_optfile`). */
  readonly erlArgs?: readonly string[];
  /** `-proto_dist` (e.g. `inet_tls`, `inet6_tls`); default inet_tcp, or inet6_tcp for an IPv6 world. */
  readonly protoDist?: string;
  readonly env?: NodeJS.ProcessEnv;
  readonly sampleMs?: number;
}

const probes = new Set<ProbeNode>();
process.on('exit', () => {
  for (const p of probes) p.child.kill('SIGKILL');
});

export class ProbeNode {
  readonly lines: ProbeLine[] = [];
  stderr = '';
  /** Everything the node printed (reports and logger output). */
  output = '';
  private partial = '';

  private constructor(
    readonly name: string,
    readonly child: ChildProcess,
  ) {}

  static async start(
    erl: ErlangTestEnv,
    ebin: string,
    short: string,
    opts: ProbeOptions,
  ): Promise<ProbeNode> {
    const name = erl.nodeName(short);
    const cfg = join(erl.root, `probe-${short}-${Date.now()}.json`);
    await writeFile(cfg, JSON.stringify(opts.client));
    const child = spawn(
      ...beamCommand('erl', [
        ...localNodeArgs(name, opts.protoDist),
        '-pa',
        ebin,
        ...(opts.erlArgs ?? []),
        '-eval',
        'ct_probe:start()',
      ]),
      {
        env: {
          ...erl.childEnv(),
          CT_PROBE_CONFIG: cfg,
          CT_PROBE_SAMPLE_MS: String(opts.sampleMs ?? 1000),
          ...(opts.hostname !== undefined ? { HOSTNAME: opts.hostname } : {}),
          ...opts.env,
        },
        stdio: ['pipe', 'pipe', 'pipe'],
      },
    );
    const p = new ProbeNode(name, child);
    probes.add(p);
    child.stdout!.on('data', (b: Buffer) => p.take(b.toString()));
    child.stderr!.on('data', (b: Buffer) => (p.stderr += b.toString()));
    child.once('exit', () => probes.delete(p));
    try {
      await waitFor(
        `${name} to start its client`,
        () => {
          if (child.exitCode !== null) throw new Error(`${name} exited: ${p.stderr}`);
          const error = p.lines.find((l) => l.t === 'error');
          if (error) throw new Error(`${name}: ${JSON.stringify(error).slice(0, 2000)}`);
          return p.lines.some((l) => l.t === 'ready');
        },
        60_000,
      );
    } catch (e) {
      throw new Error(`${(e as Error).message}\n${p.output.slice(-2000)}\n${p.stderr.slice(-2000)}`, {
        cause: e,
      });
    }
    return p;
  }

  private take(text: string): void {
    this.output += text;
    this.partial += text;
    const parts = this.partial.split('\n');
    this.partial = parts.pop()!;
    for (const line of parts) {
      if (!line.startsWith('{')) continue;
      try {
        this.lines.push(JSON.parse(line) as ProbeLine);
      } catch {
        // logger output or a partial line: not a report
      }
    }
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** The last `nodes()` sample. */
  lastNodes(): string[] {
    for (let i = this.lines.length - 1; i >= 0; i--)
      if (this.lines[i]!.t === 'sample') return [...(this.lines[i]!.nodes as string[])].sort();
    return [];
  }

  samplesSince(t: number): string[][] {
    return this.lines
      .filter((l) => l.t === 'sample' && l.at >= t)
      .map((l) => [...(l.nodes as string[])].sort());
  }

  nodedownsSince(t: number): ProbeLine[] {
    return this.lines.filter((l) => l.t === 'nodedown' && l.at >= t);
  }

  eventsSince(t: number, event?: string): ProbeLine[] {
    return this.lines.filter(
      (l) => l.t === 'event' && l.at >= t && (event === undefined || l.event === event),
    );
  }

  send(command: string): void {
    this.child.stdin!.write(`${command}\n`);
  }

  /** Sends a command and waits for the first line of type `t` after it. */
  async ask(command: string, t: string, timeoutMs = 10_000): Promise<ProbeLine> {
    const from = this.lines.length;
    this.send(command);
    return waitFor(
      `${this.name}: ${command}`,
      () => this.lines.slice(from).find((l) => l.t === t),
      timeoutMs,
    );
  }

  /** The client's state, asked now. */
  async state(): Promise<ClientState> {
    const from = this.lines.length;
    this.send('state');
    const line = await waitFor(
      `${this.name}'s state`,
      () => this.lines.slice(from).find((l) => l.t === 'state'),
      10_000,
    );
    return line as unknown as ClientState;
  }

  async stopClient(): Promise<void> {
    const from = this.lines.length;
    this.send('stop_client');
    await waitFor(
      `${this.name}'s client to stop`,
      () => this.lines.slice(from).some((l) => l.t === 'stopped'),
      10_000,
    );
  }

  /** Waits until the node's sampled nodes() equals `expected` (order ignored). */
  async waitForNodes(expected: readonly string[], timeoutMs = 20_000): Promise<void> {
    const want = [...expected].sort().join(',');
    const since = Date.now();
    await waitFor(
      `nodes() on ${this.name} to be [${want}] (last: [${this.lastNodes().join(',')}])`,
      () => this.samplesSince(since).some((s) => s.join(',') === want),
      timeoutMs,
      100,
    );
  }

  async stop(): Promise<void> {
    if (!this.alive) return;
    const exited = new Promise<void>((r) => this.child.once('exit', () => r()));
    this.child.stdin!.end();
    const t = setTimeout(() => this.child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(t);
  }

  static async stopAll(): Promise<void> {
    await Promise.all([...probes].map((p) => p.stop()));
  }
}
