import { spawn, type ChildProcess } from 'node:child_process';
import { access, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { constants as fsConstants, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Real BEAM nodes on loopback only, for the tests and the demo.
 *
 * `ErlangTestEnv.start()` makes a private world: a temp HOME holding `.erlang.cookie` (so no
 * cookie is ever on a command line), and a private epmd on a free port bound to 127.0.0.1
 * (ERL_EPMD_PORT), run in the foreground as a child of the test process. Nodes are started as
 * `name@127.0.0.1` with `-start_epmd false` (so they never start a stray epmd daemon) and listen
 * on 127.0.0.1 only. An IPv6 world (`start({ ipFamily: 'ipv6' })`) names its nodes `name@::1`:
 * they run `-proto_dist inet6_tcp` and listen on ::1 only (epmd listens on both loopbacks).
 *
 * Nothing is left behind:
 * - `env.stop()` (call it in afterAll) kills every node and the epmd and removes the temp dirs;
 * - every node runs a watchdog that halts it when its stdin closes, i.e. when the test process
 *   dies, however it dies;
 * - epmd runs under a small keeper (`/bin/sh` with a constant script; the port is passed as a
 *   positional parameter, never interpolated) that kills it when its stdin closes — again, when
 *   the test process is gone;
 * - a process 'exit' hook SIGKILLs whatever this module started that is still alive.
 */

const LOOPBACK = '127.0.0.1';
const LOOPBACK6 = '::1';
const live = new Set<ChildProcess>();
/** Processes that are not our children (epmd under its keeper). */
const livePids = new Set<number>();
const liveDirs = new Set<string>();
let hooked = false;

function hookExit(): void {
  if (hooked) return;
  hooked = true;
  process.on('exit', () => {
    for (const pid of livePids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
    for (const c of live) {
      try {
        if (c.pid !== undefined) process.kill(c.pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
    for (const d of liveDirs) {
      try {
        rmSync(d, { recursive: true, force: true });
      } catch {
        // best effort
      }
    }
  });
}

export interface WaitOptions {
  readonly timeoutMs?: number;
  readonly intervalMs?: number;
  /** What is awaited, for the error message. */
  readonly what?: string;
}

/** Polls `check` until it returns a truthy value (returned) or the time is up (throws). */
export async function waitFor<T>(
  check: () => Promise<T> | T,
  opts: WaitOptions = {},
): Promise<NonNullable<T>> {
  const deadline = Date.now() + (opts.timeoutMs ?? 10_000);
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v) return v as NonNullable<T>;
      last = v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline)
      throw new Error(
        `timed out waiting for ${opts.what ?? 'a condition'}; last: ${last instanceof Error ? last.message : JSON.stringify(last)}`,
      );
    await sleep(opts.intervalMs ?? 50);
  }
}

/** A free TCP port on loopback (bound, read, released). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, LOOPBACK, () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

function exited(c: ChildProcess): Promise<void> {
  if (c.exitCode !== null || c.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => c.once('exit', () => resolve()));
}

async function kill(c: ChildProcess, graceMs = 2000): Promise<void> {
  if (c.exitCode === null && c.signalCode === null) {
    try {
      c.kill('SIGTERM');
    } catch {
      // gone
    }
    const t = setTimeout(() => {
      try {
        c.kill('SIGKILL');
      } catch {
        // gone
      }
    }, graceMs);
    await exited(c);
    clearTimeout(t);
  }
  live.delete(c);
}

export interface RunOutput {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** The programs of an OTP installation that `beamCommand` sends into a cell's root. */
const BEAM_PROGRAMS = new Set(['erl', 'erlc', 'erl_call', 'escript', 'elixir', 'mix', 'rebar3']);
const rootScript = join(
  resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..'),
  'tools',
  'beam',
  'root.sh',
);

/**
 * Which OTP runs a BEAM program: this machine's, or — with CTOPO_BEAM_CELL naming a cell of
 * tools/beam/root.sh (otp27, otp29) — the one in that cell's Debian root, in the same directory,
 * with the same environment and the same pid (the script execs down to the program), sharing
 * this machine's loopback and /tmp. Other programs run here as they are.
 */
export function beamCommand(
  file: string,
  args: readonly string[],
  opts: { anyProgram?: boolean } = {},
): [string, string[]] {
  const cell = process.env.CTOPO_BEAM_CELL;
  const program = file.slice(file.lastIndexOf('/') + 1);
  if (!cell || cell === 'otp25' || !(opts.anyProgram || BEAM_PROGRAMS.has(program))) return [file, [...args]];
  return ['/bin/bash', [rootScript, 'run', cell, '--', opts.anyProgram ? file : program, ...args]];
}

/** Runs a program with an argv array (no shell), in `cwd` if given; returns its output. */
export function run(
  file: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  timeoutMs = 15_000,
  cwd?: string,
): Promise<RunOutput> {
  return new Promise((resolve) => {
    const [f, a] = beamCommand(file, args);
    const c = spawn(f, a, { env, stdio: ['ignore', 'pipe', 'pipe'], ...(cwd ? { cwd } : {}) });
    live.add(c);
    let stdout = '';
    let stderr = '';
    c.stdout!.on('data', (b: Buffer) => (stdout += b.toString()));
    c.stderr!.on('data', (b: Buffer) => (stderr += b.toString()));
    const t = setTimeout(() => c.kill('SIGKILL'), timeoutMs);
    c.on('error', (e) => {
      clearTimeout(t);
      live.delete(c);
      resolve({ code: null, stdout, stderr: stderr + e.message });
    });
    c.on('close', (code) => {
      clearTimeout(t);
      live.delete(c);
      resolve({ code, stdout, stderr });
    });
  });
}

// Halts the node when its stdin reaches EOF: the test process is gone.
const WATCHDOG =
  'spawn(fun() -> P = open_port({fd, 0, 1}, [eof, binary]), ' +
  '(fun L() -> receive {P, eof} -> erlang:halt(0); {P, _} -> L() end end)() end)';

// Runs epmd on both loopbacks and kills it when stdin reaches EOF (stop(), or the test process
// died). Prints epmd's pid first. "$1" is the port.
const EPMD_KEEPER =
  'epmd -port "$1" -address 127.0.0.1,::1 </dev/null & e=$!; echo "$e"; ' +
  'read -r line; kill "$e" 2>/dev/null; wait "$e" 2>/dev/null; exit 0';

/** Starts epmd under its keeper; resolves with the keeper and epmd's pid. */
async function startEpmd(port: number): Promise<{ keeper: ChildProcess; pid: number }> {
  const keeper = spawn('/bin/sh', ['-c', EPMD_KEEPER, 'epmd-keeper', String(port)], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ERL_EPMD_ADDRESS: `${LOOPBACK},${LOOPBACK6}` },
    stdio: ['pipe', 'pipe', 'ignore'],
  });
  live.add(keeper);
  let out = '';
  const pid = await new Promise<number>((resolve, reject) => {
    keeper.stdout!.on('data', (b: Buffer) => {
      out += b.toString();
      const m = /^(\d+)\n/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    keeper.once('exit', () => reject(new Error('the epmd keeper exited early')));
  });
  livePids.add(pid);
  return { keeper, pid };
}

async function stopEpmd(keeper: ChildProcess, pid: number): Promise<void> {
  keeper.stdin?.end();
  const t = setTimeout(() => {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
    keeper.kill('SIGKILL');
  }, 3000);
  await exited(keeper);
  clearTimeout(t);
  live.delete(keeper);
  // The keeper waited for epmd; make sure anyway.
  await waitFor(() => !processAlive(pid), { timeoutMs: 3000, what: `epmd ${pid} to exit` }).catch(() => {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  });
  livePids.delete(pid);
}

export interface StartNodeOptions {
  /** A different cookie for this node only (it gets its own HOME). */
  readonly cookie?: string;
  /** More `erl` arguments, e.g. `-connect_all false` (no transitive meshing by global). */
  readonly args?: readonly string[];
  /** More environment for the node. */
  readonly env?: NodeJS.ProcessEnv;
}

export class BeamNode {
  constructor(
    readonly env: ErlangTestEnv,
    readonly name: string,
    readonly process: ChildProcess,
    readonly home: string,
  ) {}

  get pid(): number {
    return this.process.pid!;
  }

  get alive(): boolean {
    return this.process.exitCode === null && this.process.signalCode === null;
  }

  /** `erlang:nodes()` asked of this node. */
  nodes(): Promise<string[]> {
    return this.env.nodesOf(this.name);
  }

  /** Freezes the node (SIGSTOP): it stays registered but answers nothing. */
  suspend(): void {
    this.process.kill('SIGSTOP');
  }

  resume(): void {
    this.process.kill('SIGCONT');
  }

  async stop(): Promise<void> {
    if (this.alive) {
      this.resume();
    }
    await kill(this.process);
    this.env.forget(this);
  }
}

export interface ErlangTestEnvOptions {
  /** Default: random. */
  readonly cookie?: string;
  /** `ipv6`: nodes are `name@::1` (inet6_tcp distribution). Default `ipv4`: `name@127.0.0.1`. */
  readonly ipFamily?: 'ipv4' | 'ipv6';
  /** Where the temp dirs go. Default: the OS temp dir. */
  readonly tmp?: string;
}

export class ErlangTestEnv {
  private readonly nodes = new Set<BeamNode>();
  private hiddenCounter = 0;
  private stopped = false;

  private constructor(
    readonly root: string,
    readonly home: string,
    readonly cookie: string,
    readonly epmdPort: number,
    private readonly epmdKeeper: ChildProcess,
    readonly epmdPid: number,
    readonly erlCall: string,
    /** The host part of this world's node names. */
    readonly host: string = LOOPBACK,
  ) {}

  /** Starts a private epmd and prepares a HOME with the cookie. */
  static async start(opts: ErlangTestEnvOptions = {}): Promise<ErlangTestEnv> {
    hookExit();
    const root = await mkdtemp(join(opts.tmp ?? tmpdir(), 'ctopo-beam-'));
    liveDirs.add(root);
    const cookie = opts.cookie ?? `test${randomBytes(12).toString('hex')}`;
    const home = join(root, 'home');
    await mkdir(home, { mode: 0o700 });
    await writeFile(join(home, '.erlang.cookie'), cookie, { mode: 0o400 });
    const erlCall = (await findOnPath('erl_call')) ?? '/usr/bin/erl_call';

    for (let attempt = 0; ; attempt++) {
      const port = await freePort();
      const epmd = await startEpmd(port);
      const host = opts.ipFamily === 'ipv6' ? LOOPBACK6 : LOOPBACK;
      const env = new ErlangTestEnv(root, home, cookie, port, epmd.keeper, epmd.pid, erlCall, host);
      try {
        await waitFor(
          async () => {
            if (!processAlive(epmd.pid)) throw new Error(`epmd on port ${port} exited`);
            return (await run('epmd', ['-port', String(port), '-names'], env.childEnv(home))).code === 0;
          },
          { timeoutMs: 5000, what: `epmd on port ${port}` },
        );
        return env;
      } catch (e) {
        await stopEpmd(epmd.keeper, epmd.pid);
        if (attempt >= 3) throw e;
      }
    }
  }

  /** The cookie file of this world, e.g. for an erlang connector's `cookieFile`. */
  get cookieFile(): string {
    return join(this.home, '.erlang.cookie');
  }

  /** The environment every erl/erl_call child of this world gets (no cookie in it). */
  childEnv(home: string = this.home): NodeJS.ProcessEnv {
    return {
      HOME: home,
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      ERL_EPMD_PORT: String(this.epmdPort),
      LANG: 'C',
    };
  }

  /** The long name of a node of this world: `short@127.0.0.1` (`short@::1` in an IPv6 world). */
  nodeName(short: string): string {
    return `${short}@${this.host}`;
  }

  /** Starts `short@127.0.0.1` and waits until it answers. */
  async startNode(short: string, opts: StartNodeOptions = {}): Promise<BeamNode> {
    if (this.stopped) throw new Error('this Erlang test world is stopped');
    if (this.host !== LOOPBACK)
      throw new Error(
        'startNode waits through erl_call, which cannot reach a node named by an IPv6 address: start IPv6 nodes with ProbeNode',
      );
    let home = this.home;
    if (opts.cookie !== undefined) {
      home = await mkdtemp(join(this.root, 'home-'));
      await writeFile(join(home, '.erlang.cookie'), opts.cookie, { mode: 0o400 });
    }
    const name = this.nodeName(short);
    const child = spawn(
      ...beamCommand('erl', [...localNodeArgs(name), ...(opts.args ?? []), '-eval', WATCHDOG]),
      {
        env: { ...this.childEnv(home), ...opts.env },
        stdio: ['pipe', 'ignore', 'pipe'],
      },
    );
    live.add(child);
    let stderr = '';
    child.stderr!.on('data', (b: Buffer) => (stderr += b.toString()));
    const node = new BeamNode(this, name, child, home);
    this.nodes.add(node);
    try {
      await waitFor(
        async () => {
          if (!node.alive) throw new Error(`node ${name} exited: ${stderr.trim()}`);
          const r = await this.rpc(name, 'erlang node []', home);
          return r.code === 0 && r.stdout.trim() === `'${name}'`;
        },
        // Generous: on a loaded machine (2 cores, many tests) a node may take tens of seconds.
        { timeoutMs: 60_000, what: `node ${name} to answer` },
      );
    } catch (e) {
      await node.stop();
      throw e;
    }
    return node;
  }

  /** `erl_call -a "<mfa>"` against `node` of this world, with a fresh hidden name. */
  rpc(node: string, mfa: string, home: string = this.home): Promise<RunOutput> {
    this.hiddenCounter += 1;
    return run(
      this.erlCall,
      ['-h', `ctopo_test_${process.pid}_${this.hiddenCounter}`, '-timeout', '10', '-name', node, '-a', mfa],
      this.childEnv(home),
    );
  }

  /** `erlang:nodes()` asked of `node`, sorted. */
  async nodesOf(node: string): Promise<string[]> {
    const r = await this.rpc(node, 'erlang nodes []');
    if (r.code !== 0) throw new Error(`nodes() on ${node} failed: ${r.stderr.trim() || r.stdout.trim()}`);
    const text = r.stdout.trim();
    if (text === '[]') return [];
    if (!text.startsWith('[') || !text.endsWith(']')) throw new Error(`unexpected nodes() answer: ${text}`);
    return text
      .slice(1, -1)
      .split(',')
      .map((s) => s.trim().replace(/^'(.*)'$/, '$1'))
      .sort();
  }

  /** Waits until `node`'s nodes() equals `expected` (order ignored). */
  async waitForNodes(node: string, expected: readonly string[], timeoutMs = 10_000): Promise<void> {
    const want = [...expected].sort().join(',');
    await waitFor(async () => (await this.nodesOf(node)).join(',') === want, {
      timeoutMs,
      what: `nodes() on ${node} to be [${want}]`,
    });
  }

  forget(node: BeamNode): void {
    this.nodes.delete(node);
  }

  /** Every process this world started (nodes, then epmd), and its temp dirs. Idempotent. */
  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all([...this.nodes].map((n) => n.stop()));
    await stopEpmd(this.epmdKeeper, this.epmdPid);
    await rm(this.root, { recursive: true, force: true });
    liveDirs.delete(this.root);
  }

  /** The pids of this world's processes still running (for leak checks). */
  pids(): number[] {
    const ps = [...this.nodes].filter((n) => n.alive).map((n) => n.pid);
    if (processAlive(this.epmdPid)) ps.push(this.epmdPid);
    return ps;
  }
}

async function findOnPath(program: string): Promise<string | undefined> {
  for (const dir of (process.env.PATH ?? '').split(':')) {
    if (!dir) continue;
    const p = join(dir, program);
    try {
      await access(p, fsConstants.X_OK);
      return p;
    } catch {
      // next
    }
  }
  return undefined;
}

/** Whether a process with this pid exists (and is not a zombie). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    // A zombie still answers kill(0); /proc tells.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^\d+ \(.*\) Z/.test(stat);
  } catch {
    return true;
  }
}

/** The OTP client library's source (clients/cluster_topology in this repository). */
export const beamClientDir = join(
  resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..'),
  'clients',
  'cluster_topology',
);

/**
 * `erl` flags of a node of a test world: a long name, no shell, this world's epmd (started by the
 * world, not by the node) and distribution on loopback only. A name whose host is an IPv6
 * address gets IPv6 distribution: `protoDist` (default `inet6_tcp`; `inet6_tls` with its
 * `-ssl_dist_optfile` from the caller) on ::1.
 */
export function localNodeArgs(name: string, protoDist?: string): string[] {
  const ipv6 = name.slice(name.indexOf('@') + 1).includes(':');
  const dist = ipv6 ? ['-proto_dist', protoDist ?? 'inet6_tcp'] : protoDist ? ['-proto_dist', protoDist] : [];
  return [
    '-name',
    name,
    ...dist,
    '-noshell',
    '-noinput',
    '-start_epmd',
    'false',
    '-kernel',
    'inet_dist_use_interface',
    ipv6 ? '{0,0,0,0,0,0,0,1}' : '{127,0,0,1}',
  ];
}

/**
 * Compiles the OTP client library into `ebin` (with its .app file), then `extra` modules that
 * use it (a test probe, the demo's node module).
 */
export async function compileBeamClient(ebin: string, extra: readonly string[] = []): Promise<void> {
  await mkdir(ebin, { recursive: true });
  const src = join(beamClientDir, 'src');
  const files = (await readdir(src)).filter((f) => f.endsWith('.erl')).map((f) => join(src, f));
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: ebin, LANG: 'C' };
  const r = await run('erlc', ['+warnings_as_errors', '-o', ebin, ...files], env, 120_000);
  if (r.code !== 0) throw new Error(`erlc failed: ${r.stdout}${r.stderr}`);
  if (extra.length) {
    const x = await run('erlc', ['-pa', ebin, '-o', ebin, ...extra], env, 60_000);
    if (x.code !== 0) throw new Error(`erlc failed: ${x.stdout}${x.stderr}`);
  }
  await writeFile(
    join(ebin, 'cluster_topology.app'),
    await readFile(join(src, 'cluster_topology.app.src'), 'utf8'),
  );
}
