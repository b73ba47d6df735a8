import { rmSync } from 'node:fs';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { checkNodeName, checkNamePart } from '../../naming/node-name.js';
import { asAtom, asAtomList, asInt, quoteNodeAtom, tryParseTerm, type Term } from './erlang-term.js';
import {
  describeRun,
  isExecutableFile as isExecutable,
  runProcess,
  type RunResult,
  type SpawnInfo,
} from './process.js';
import {
  invalidNameResult,
  type ConnectResult,
  type Connector,
  type ConnectorAction,
  type ConnectorDefinition,
  type FailureClass,
  type ListResult,
  type NameResult,
} from './types.js';

/**
 * The erlang connector drives the local BEAM node with `erl_call`:
 * `net_kernel:connect_node/1` (timed in the node with `timer:tc/3`; `net_kernel:connecttime/0`,
 * the node's setup time, is asked once after the first failure), `erlang:disconnect_node/1`,
 * `erlang:nodes/0`, `erlang:node/0`.
 *
 * - No shell, ever: erl_call runs from an argument array; peer names are checked against the
 *   node-name grammar and written as quoted atoms that nothing can break out of.
 * - The cookie never appears on a command line (where `ps` and /proc/<pid>/cmdline show it to
 *   every user) nor in erl_call's environment: it is written to `.erlang.cookie` (mode 0400) in
 *   a private directory (mode 0700), and erl_call runs with HOME pointing there — erl_call reads
 *   `$HOME/.erlang.cookie` when no `-c` is given.
 * - Every call has a time limit: erl_call's own `-timeout` (whole seconds), and on the JS side a
 *   SIGKILL of its process group a little later.
 * - erl_call names itself `c17` unless told otherwise, so two concurrent calls collide and one
 *   fails. Each call here uses one of `concurrency` fixed hidden names instead: distinct while
 *   running, and a bounded set over time (every new name becomes an atom on the target node,
 *   and atoms are never freed).
 */

export interface ErlangConnectorConfig {
  readonly kind: 'erlang';
  /** The local node's full name (`name@host`). Default: the environment's RELEASE_NODE. */
  readonly nodeName?: string;
  /** Long (`name`) or short (`sname`) names. Default: RELEASE_DISTRIBUTION, else `name` when the host has a dot or colon. */
  readonly distribution?: 'name' | 'sname';
  /** A file holding the cookie (a mounted Secret, or ~/.erlang.cookie). Wins over `cookieEnv`. */
  readonly cookieFile?: string;
  /** The environment variable holding the cookie. Default: RELEASE_COOKIE. */
  readonly cookieEnv?: string;
  /** Path of erl_call. Default: `erl_call` on PATH, else the newest under /usr/lib/erlang or /usr/local/lib/erlang. */
  readonly erlCall?: string;
  /** Per call. Default 10000 (net_kernel gives up on an unreachable host after 7 s). */
  readonly timeoutMs?: number;
  /** The epmd port; default the environment's ERL_EPMD_PORT, else epmd's 4369. */
  readonly epmdPort?: number;
  /** erl_call processes at most running at once. Default 4. */
  readonly concurrency?: number;
  /** Where the private cookie directory is made. Default: the OS temp directory. */
  readonly workDir?: string;
}

export interface ErlangConnectorDeps {
  /** Where RELEASE_NODE, RELEASE_DISTRIBUTION, the cookie variable, PATH and ERL_EPMD_PORT are read. Default: process.env. */
  readonly env?: NodeJS.ProcessEnv;
  /** Observes every erl_call started (pid and argv), for logs and tests. */
  readonly onSpawn?: (info: SpawnInfo) => void;
}

export interface LocalNode {
  /** The name registered with epmd (the part before @). */
  readonly shortName: string;
  readonly port: number;
  /** The full name the node reports for itself, when erl_call could ask it. */
  readonly fullName?: string;
  readonly error?: string;
}

export interface ErlangConnector extends Connector {
  readonly kind: 'erlang';
  readonly nodeName: string;
  readonly distribution: 'name' | 'sname';
  readonly erlCallPath: string;
  connected(): Promise<ListResult>;
  selfName(): Promise<NameResult>;
  /**
   * Every node registered with the local epmd and the full name each reports — independent of
   * the configured name, so a wrong RELEASE_NODE can be reported with the name the node really has.
   */
  discoverLocalNodes(): Promise<{ ok: true; nodes: LocalNode[] } | { ok: false; error: string }>;
}

export class ErlangConfigError extends Error {}

const DEFAULT_TIMEOUT_MS = 10_000;
/** kernel's net_setuptime when unset: net_kernel gives up on a setup step after it. */
const DEFAULT_SETUP_TIME_MS = 7_000;

/**
 * A failed connect_node (it answers only `false`) by how long it took, in microseconds, against
 * the node's setup time: net_kernel ends a setup step that got no answer for that long, so a
 * failure that came only after it is a Timeout; a sooner one was refused (a different cookie,
 * nobody listening, no such node). The OTP library has the same rule (cluster_topology_round).
 */
export function connectFailure(tookUs: number, setupTimeMs: number): 'Timeout' | 'Refused' {
  return tookUs >= setupTimeMs * 1000 ? 'Timeout' : 'Refused';
}
const JS_GRACE_MS = 2_000;
const COOKIE_FILE_NAME = '.erlang.cookie';
let instances = 0;

// Private HOMEs still on disk; removed at process exit if close() was never called, so the
// cookie copy does not outlive the agent (best effort: not on SIGKILL).
const privateHomes = new Set<string>();
let exitHooked = false;
function hookExit(): void {
  if (exitHooked) return;
  exitHooked = true;
  process.on('exit', () => {
    for (const home of privateHomes) {
      try {
        rmSync(home, { recursive: true, force: true });
      } catch {
        // nothing more to do
      }
    }
  });
}

export function checkCookie(cookie: string): { ok: true } | { ok: false; problem: string } {
  if (cookie.length === 0) return { ok: false, problem: 'the cookie is empty' };
  if (cookie.length > 255) return { ok: false, problem: 'the cookie is longer than 255 characters' };
  if (!/^[\x21-\x7e]+$/.test(cookie))
    return { ok: false, problem: 'the cookie may only hold printable ASCII characters without blanks' };
  return { ok: true };
}

export function inferDistribution(nodeName: string): 'name' | 'sname' {
  const host = nodeName.slice(nodeName.indexOf('@') + 1);
  return host.includes('.') || host.includes(':') ? 'name' : 'sname';
}

function compareVersionedDirs(a: string, b: string): number {
  const num = (s: string): number[] => (s.split('-')[1] ?? '').split('.').map((x) => Number(x) || 0);
  const x = num(a);
  const y = num(b);
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    const d = (x[i] ?? 0) - (y[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/** Finds erl_call: the configured path, else on PATH, else the newest in the usual Erlang roots. */
export async function locateErlCall(configured: string | undefined, env: NodeJS.ProcessEnv): Promise<string> {
  if (configured !== undefined) {
    if (await isExecutable(configured)) return configured;
    throw new ErlangConfigError(`erlCall ${JSON.stringify(configured)} is not an executable file`);
  }
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (dir === '') continue;
    const candidate = join(dir, 'erl_call');
    if (await isExecutable(candidate)) return candidate;
  }
  for (const root of ['/usr/lib/erlang', '/usr/local/lib/erlang']) {
    let entries: string[];
    try {
      entries = await readdir(root);
    } catch {
      continue;
    }
    const dirs = [
      ...entries
        .filter((e) => e.startsWith('erts-'))
        .map((e) => ({ v: e, p: join(root, e, 'bin', 'erl_call') })),
    ];
    try {
      for (const e of await readdir(join(root, 'lib'))) {
        if (e.startsWith('erl_interface-')) dirs.push({ v: e, p: join(root, 'lib', e, 'bin', 'erl_call') });
      }
    } catch {
      // no lib directory
    }
    dirs.sort((a, b) => compareVersionedDirs(b.v, a.v));
    for (const d of dirs) if (await isExecutable(d.p)) return d.p;
  }
  throw new ErlangConfigError(
    'erl_call not found: set erlCall, put erl_call on PATH, or install Erlang under /usr/lib/erlang',
  );
}

async function readCookie(config: ErlangConnectorConfig, env: NodeJS.ProcessEnv): Promise<string> {
  let cookie: string;
  let source: string;
  if (config.cookieFile !== undefined) {
    source = `cookie file ${config.cookieFile}`;
    try {
      cookie = (await readFile(config.cookieFile, 'utf8')).replace(/[\r\n]+$/, '');
    } catch (e) {
      throw new ErlangConfigError(`cannot read the ${source}: ${(e as Error).message}`);
    }
  } else {
    const name = config.cookieEnv ?? 'RELEASE_COOKIE';
    source = `environment variable ${name}`;
    const value = env[name];
    if (value === undefined)
      throw new ErlangConfigError(`no cookie: ${name} is not set and no cookieFile is configured`);
    cookie = value;
  }
  const check = checkCookie(cookie);
  if (!check.ok) throw new ErlangConfigError(`the ${source} is not usable: ${check.problem}`);
  return cookie;
}

/** Asks epmd for the names registered on this host (EPMD NAMES_REQ). */
function epmdNames(port: number, timeoutMs: number): Promise<{ name: string; port: number }[]> {
  return new Promise((resolve, reject) => {
    const sock = createConnection({ host: '127.0.0.1', port });
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => sock.destroy(new Error(`epmd on port ${port} did not answer`)), timeoutMs);
    sock.on('connect', () => sock.write(Buffer.from([0, 1, 110])));
    sock.on('data', (b: Buffer) => chunks.push(b));
    sock.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    sock.on('close', (hadError) => {
      clearTimeout(timer);
      if (hadError) return;
      const all = Buffer.concat(chunks);
      if (all.length < 4) {
        reject(new Error('epmd closed the connection without an answer'));
        return;
      }
      const nodes: { name: string; port: number }[] = [];
      for (const line of all.subarray(4).toString('utf8').split('\n')) {
        const m = /^name (\S+) at port (\d+)$/.exec(line.trim());
        if (m) nodes.push({ name: m[1]!, port: Number(m[2]) });
      }
      resolve(nodes);
    });
  });
}

export async function createErlangConnector(
  config: ErlangConnectorConfig,
  deps: ErlangConnectorDeps = {},
): Promise<ErlangConnector> {
  const env = deps.env ?? process.env;
  const nodeName = config.nodeName ?? env.RELEASE_NODE;
  if (nodeName === undefined || nodeName === '')
    throw new ErlangConfigError('no local node name: set nodeName or RELEASE_NODE');
  const nameCheck = checkNodeName(nodeName);
  if (!nameCheck.ok)
    throw new ErlangConfigError(
      `the local node name ${JSON.stringify(nodeName)} is not valid: ${nameCheck.problem}`,
    );
  quoteNodeAtom(nodeName); // the same character set the peers are held to
  if (nodeName.slice(nodeName.indexOf('@') + 1).includes(':'))
    throw new ErlangConfigError(
      `the local node ${nodeName} is named by an IPv6 address, which erl_call cannot reach (it looks hosts up over IPv4 only and fails with "can't ei_gethostbyname"); run the OTP library (clients/cluster_topology) inside the node instead of this connector`,
    );

  let distribution = config.distribution;
  if (distribution === undefined) {
    const fromEnv = env.RELEASE_DISTRIBUTION;
    distribution = fromEnv === 'name' || fromEnv === 'sname' ? fromEnv : inferDistribution(nodeName);
  }
  // Limits of timeoutMs and concurrency: the schema below (checked by createConnector).
  const timeoutMs = config.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const concurrency = config.concurrency ?? 4;
  const epmdPortRaw = config.epmdPort ?? (env.ERL_EPMD_PORT ? Number(env.ERL_EPMD_PORT) : undefined);
  if (epmdPortRaw !== undefined && !(Number.isInteger(epmdPortRaw) && epmdPortRaw > 0 && epmdPortRaw < 65536))
    throw new ErlangConfigError('the epmd port must be an integer from 1 to 65535');

  const erlCallPath = await locateErlCall(config.erlCall, env);
  const cookie = await readCookie(config, env);

  // The private HOME holding the cookie.
  const home = await mkdtemp(join(config.workDir ?? tmpdir(), 'ctopo-erl-'));
  try {
    await writeFile(join(home, COOKIE_FILE_NAME), cookie, { mode: 0o400, flag: 'wx' });
  } catch (e) {
    await rm(home, { recursive: true, force: true });
    throw new ErlangConfigError(`cannot write the private cookie file: ${(e as Error).message}`);
  }
  privateHomes.add(home);
  hookExit();

  const childEnv: NodeJS.ProcessEnv = {
    HOME: home,
    PATH: env.PATH ?? '/usr/bin:/bin',
    LANG: 'C',
  };
  if (epmdPortRaw !== undefined) childEnv.ERL_EPMD_PORT = String(epmdPortRaw);

  // Hidden names for erl_call's own node: one per slot, stable for this connector.
  instances += 1;
  const prefix = `ctopo${process.pid}i${instances}s`;
  if (!checkNamePart(`${prefix}0`).ok) throw new ErlangConfigError('internal: bad hidden-name prefix');
  const freeSlots: number[] = Array.from({ length: concurrency }, (_, i) => i);
  const waiting: ((slot: number) => void)[] = [];
  const acquire = (): Promise<number> =>
    new Promise((resolve) => {
      const slot = freeSlots.shift();
      if (slot !== undefined) resolve(slot);
      else waiting.push(resolve);
    });
  const release = (slot: number): void => {
    const next = waiting.shift();
    if (next) next(slot);
    else freeSlots.push(slot);
  };

  let closed = false;
  const distFlag = distribution === 'name' ? '-name' : '-sname';
  const timeoutSecs = Math.max(1, Math.floor(timeoutMs / 1000));

  /** Runs one erl_call against `target` (['-name', n] or ['-address', 'h:p']) applying M:F(Args). */
  async function erlCall(target: readonly string[], mfa: string): Promise<RunResult> {
    if (closed) throw new Error('the erlang connector is closed');
    const slot = await acquire();
    try {
      const args = ['-h', `${prefix}${slot}`, '-timeout', String(timeoutSecs), ...target, '-a', mfa];
      return await runProcess(erlCallPath, args, {
        env: childEnv,
        timeoutMs: timeoutMs + JS_GRACE_MS,
        cwd: home,
        ...(deps.onSpawn ? { onSpawn: deps.onSpawn } : {}),
      });
    } finally {
      release(slot);
    }
  }

  const localTarget = [distFlag, nodeName];

  /** Classifies a run that did not print a usable term. */
  function classify(r: RunResult): { failure: FailureClass; error: string } {
    if (r.timedOut || r.signal === 'SIGALRM')
      return { failure: 'Timeout', error: `erl_call ${describeRun(r)}` };
    if (r.code !== 0 && /failed to connect to node|can't connect|no such node/i.test(r.stderr))
      return {
        failure: 'LocalNodeUnreachable',
        error: `erl_call could not reach the local node ${nodeName}: ${describeRun(r)}`,
      };
    return { failure: 'Error', error: `erl_call ${describeRun(r)}` };
  }

  async function run(
    action: ConnectorAction,
    node: string,
    mfa: (atom: string) => string,
    interpret: (answer: Term | undefined) => ConnectResult | undefined | Promise<ConnectResult | undefined>,
  ): Promise<ConnectResult> {
    const check = checkNodeName(node);
    if (!check.ok) return invalidNameResult(action, node, check.problem);
    let atom: string;
    try {
      atom = quoteNodeAtom(node);
    } catch (e) {
      return invalidNameResult(action, node, (e as Error).message);
    }
    const started = performance.now();
    let r: RunResult;
    try {
      r = await erlCall(localTarget, mfa(atom));
    } catch (e) {
      return { ok: false, action, node, ms: 0, failure: 'Error', error: (e as Error).message };
    }
    const ms = performance.now() - started;
    if (r.code === 0 && !r.timedOut) {
      const res = await interpret(tryParseTerm(r.stdout));
      if (res !== undefined) return { ...res, ms };
      return {
        ok: false,
        action,
        node,
        ms,
        failure: 'Error',
        error: `unexpected answer from the local node: ${JSON.stringify(r.stdout.trim().slice(0, 500))}`,
      };
    }
    return { ok: false, action, node, ms, ...classify(r) };
  }

  /**
   * The local node's setup time (net_kernel:connecttime/0: kernel's net_setuptime in ms, 7000
   * unless set), asked once; until an answer comes, kernel's default.
   */
  let setupTimeMs: number | undefined;
  async function setupTime(): Promise<number> {
    if (setupTimeMs !== undefined) return setupTimeMs;
    try {
      const r = await erlCall(localTarget, 'net_kernel connecttime []');
      const v = r.code === 0 && !r.timedOut ? asInt(tryParseTerm(r.stdout)) : undefined;
      if (v !== undefined && v > 0) setupTimeMs = v;
    } catch {
      // closed meanwhile: the default below
    }
    return setupTimeMs ?? DEFAULT_SETUP_TIME_MS;
  }

  const notAlive = (action: ConnectorAction, node: string): ConnectResult => ({
    ok: false,
    action,
    node,
    ms: 0,
    failure: 'LocalNodeUnreachable',
    error: `the local node ${nodeName} is not distributed (answered ignored)`,
  });

  return {
    kind: 'erlang',
    nodeName,
    distribution,
    erlCallPath,
    observesConnections: true,

    connect(node) {
      return run(
        'connect',
        node,
        // Timed in the node: connect_node says only false, and how long that took tells why.
        (atom) => `timer tc [net_kernel, connect_node, [${atom}]]`,
        async (term) => {
          const pair =
            term !== undefined && 'tuple' in term && term.tuple.length === 2 ? term.tuple : undefined;
          const us = asInt(pair?.[0]);
          const answer = asAtom(pair?.[1]);
          if (us === undefined) return undefined;
          if (answer === 'true') return { ok: true, action: 'connect', node, ms: 0 };
          if (answer === 'false') {
            const setupMs = await setupTime();
            const failure = connectFailure(us, setupMs);
            const took = `net_kernel:connect_node/1 returned false after ${Math.round(us / 1000)} ms`;
            return {
              ok: false,
              action: 'connect',
              node,
              ms: 0,
              failure,
              error:
                failure === 'Timeout'
                  ? `the local node got no answer from ${node} within its setup time of ${setupMs} ms (${took}: packets dropped, or a port that never speaks)`
                  : `the local node could not connect to ${node} (${took}: not running, a different cookie, or no such host)`,
            };
          }
          if (answer === 'ignored') return notAlive('connect', node);
          return undefined;
        },
      );
    },

    disconnect(node) {
      return run(
        'disconnect',
        node,
        (atom) => `erlang disconnect_node [${atom}]`,
        (term) => {
          const answer = asAtom(term);
          if (answer === 'true') return { ok: true, action: 'disconnect', node, ms: 0 };
          if (answer === 'false')
            return { ok: true, action: 'disconnect', node, ms: 0, note: 'was not connected' };
          if (answer === 'ignored') return notAlive('disconnect', node);
          return undefined;
        },
      );
    },

    async connected() {
      let r: RunResult;
      try {
        r = await erlCall(localTarget, 'erlang nodes []');
      } catch (e) {
        return { ok: false, failure: 'Error', error: (e as Error).message };
      }
      if (r.code === 0 && !r.timedOut) {
        const nodes = asAtomList(tryParseTerm(r.stdout));
        if (nodes !== undefined) return { ok: true, nodes };
        return {
          ok: false,
          failure: 'Error',
          error: `unexpected answer to nodes(): ${JSON.stringify(r.stdout.trim().slice(0, 500))}`,
        };
      }
      return { ok: false, ...classify(r) };
    },

    async selfName() {
      let r: RunResult;
      try {
        r = await erlCall(localTarget, 'erlang node []');
      } catch (e) {
        return { ok: false, failure: 'Error', error: (e as Error).message };
      }
      if (r.code === 0 && !r.timedOut) {
        const name = asAtom(tryParseTerm(r.stdout));
        if (name !== undefined && name !== 'nonode@nohost') return { ok: true, name };
        return {
          ok: false,
          failure: 'Error',
          error: `unexpected answer to node(): ${JSON.stringify(r.stdout.trim().slice(0, 500))}`,
        };
      }
      return { ok: false, ...classify(r) };
    },

    async discoverLocalNodes() {
      let registered: { name: string; port: number }[];
      try {
        registered = await epmdNames(epmdPortRaw ?? 4369, timeoutMs);
      } catch (e) {
        return { ok: false, error: `cannot ask epmd: ${(e as Error).message}` };
      }
      const nodes: LocalNode[] = [];
      for (const reg of registered) {
        let r: RunResult;
        try {
          r = await erlCall(['-address', `127.0.0.1:${reg.port}`], 'erlang node []');
        } catch (e) {
          nodes.push({ shortName: reg.name, port: reg.port, error: (e as Error).message });
          continue;
        }
        const fullName = r.code === 0 ? asAtom(tryParseTerm(r.stdout)) : undefined;
        nodes.push(
          fullName !== undefined
            ? { shortName: reg.name, port: reg.port, fullName }
            : { shortName: reg.name, port: reg.port, error: classify(r).error },
        );
      }
      return { ok: true, nodes };
    },

    async close() {
      if (closed) return;
      closed = true;
      privateHomes.delete(home);
      await rm(home, { recursive: true, force: true });
    },
  };
}

export const erlangConnector: ConnectorDefinition<ErlangConnectorConfig> = {
  kind: 'erlang',
  help: `drives the local BEAM node with erl_call (net_kernel:connect_node/1,
erlang:disconnect_node/1); a round asks the node's nodes() once and calls erl_call only for
the listed peers it is missing. The cookie comes from $RELEASE_COOKIE (or --cookie-env /
--cookie-file) and never appears on a command line; no shell is ever involved.`,
  options: {
    cookieFile: {
      type: 'string',
      description: 'erlang: file holding the cookie (default: the variable named by --cookie-env)',
    },
    cookieEnv: {
      type: 'string',
      description: 'erlang: environment variable holding the cookie',
      default: 'RELEASE_COOKIE',
    },
    erlCall: {
      type: 'string',
      description: 'erlang: path of erl_call (default: on PATH, else under /usr/lib/erlang)',
    },
    distribution: {
      type: 'string',
      description:
        'erlang: long (name) or short (sname) node names (default: $RELEASE_DISTRIBUTION, else by the host)',
      enum: ['name', 'sname'],
    },
  },
  schema: {
    type: 'object',
    required: ['kind'],
    properties: {
      kind: { const: 'erlang' },
      nodeName: { type: 'string', minLength: 3, maxLength: 255 },
      distribution: { enum: ['name', 'sname'] },
      cookieFile: { type: 'string', minLength: 1 },
      cookieEnv: { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_]*$' },
      erlCall: { type: 'string', minLength: 1 },
      timeoutMs: { type: 'integer', minimum: 1000, maximum: 600000 },
      epmdPort: { type: 'integer', minimum: 1, maximum: 65535 },
      concurrency: { type: 'integer', minimum: 1, maximum: 64 },
      workDir: { type: 'string', minLength: 1 },
    },
  },
  fromOptions: (o, common) => ({
    kind: 'erlang',
    nodeName: common.nodeName,
    distribution: o.distribution,
    cookieFile: o.cookieFile,
    cookieEnv: o.cookieEnv,
    erlCall: o.erlCall,
    // erl_call counts whole seconds, at least one.
    timeoutMs: Math.max(1000, common.callTimeoutMs),
  }),
  create: (config, deps) => createErlangConnector(config, deps),
};
