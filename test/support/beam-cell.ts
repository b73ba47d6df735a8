import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdir, readFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import type { ControlPlaneState } from '../../dev/cluster/control-plane.js';
import { mintClient } from '../../dev/cluster/pki.js';
import { beamCommand, type ErlangTestEnv, run } from './erlang.js';
import { buildClient, clientDir, listedPeer, ProbeNode, repoRoot } from './beam-client.js';
import { kubectlOk } from './cluster.js';
import { applyObjects, applyTopology, readerRbac } from './objects.js';
import { waitFor } from './wait.js';

/**
 * The cell of the OTP library's matrix these tests run in (tools/beam/cells.sh sets
 * CTOPO_BEAM_CELL): otp25 is this machine, otp27 and otp29 Debian roots (tools/beam/root.sh).
 * And the README's build lines, taken as printed, for the tests that run them.
 */
export const CELL = process.env.CTOPO_BEAM_CELL || 'otp25';

/** What each cell holds besides OTP and mix (the package lists in tools/beam/root.sh). */
const HOLDS: Record<string, readonly string[]> = {
  otp25: [],
  otp27: ['rebar3', 'hex', 'ex_doc', 'dialyzer'],
  otp29: ['rebar3'],
};
export function cellHas(tool: 'rebar3' | 'hex' | 'ex_doc' | 'dialyzer'): boolean {
  return (HOLDS[CELL] ?? []).includes(tool);
}

/** The URL the README's dependency lines name; the tests swap it for a local clone. */
export const PROJECT_URL = 'https://github.com/netzlive/cluster-topology.git';
const README = join(clientDir, 'README.md');

/** The README's fenced code blocks, as printed. */
async function readmeBlocks(): Promise<string[]> {
  const text = await readFile(README, 'utf8');
  return [...text.matchAll(/^```[a-z]*\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);
}

/** The README's mix `deps` function, from `defp deps do` to its `end`. */
export async function readmeMixDeps(): Promise<string> {
  for (const b of await readmeBlocks()) {
    const m = /^defp deps do\n[\s\S]*?^end$/m.exec(b);
    if (m && m[0].includes('{:cluster_topology,')) return m[0];
  }
  throw new Error(
    'clients/cluster_topology/README.md has no mix `defp deps do … end` naming :cluster_topology',
  );
}

/** The README's rebar3 `{deps, …}.` line. */
export async function readmeRebarDeps(): Promise<string> {
  for (const b of await readmeBlocks()) {
    const m = /^\{deps, .*cluster_topology.*\.$/m.exec(b);
    if (m) return m[0];
  }
  throw new Error(
    'clients/cluster_topology/README.md has no rebar3 `{deps, …}.` line naming cluster_topology',
  );
}

/** The README's plain-erlc build (the shell block that runs erlc). */
export async function readmeErlcBuild(): Promise<string> {
  const b = (await readmeBlocks()).find((x) => /^erlc /m.test(x));
  if (!b) throw new Error('clients/cluster_topology/README.md has no shell block that runs erlc');
  return b;
}

/** `text` with the project's URL replaced by `url` (it must name it). */
export function swapUrl(text: string, url: string): string {
  if (!text.includes(PROJECT_URL)) throw new Error(`the README's line names no ${PROJECT_URL}: ${text}`);
  return text.split(PROJECT_URL).join(url);
}

export const gitEnv = (home: string): NodeJS.ProcessEnv => ({
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  HOME: home,
  LANG: 'C.UTF-8',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_AUTHOR_NAME: 'test',
  GIT_AUTHOR_EMAIL: 'test@example.invalid',
  GIT_COMMITTER_NAME: 'test',
  GIT_COMMITTER_EMAIL: 'test@example.invalid',
});

/** Runs a program (inside the cell's root when it is a BEAM program); throws on failure. */
export async function ok(
  file: string,
  args: readonly string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
  timeoutMs = 300_000,
  opts: { anyProgram?: boolean } = {},
): Promise<string> {
  const r = await new Promise<{ code: number | null; out: string }>((resolve) => {
    const c = spawn(...beamCommand(file, args, opts), { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    c.stdout.on('data', (b: Buffer) => (out += b.toString()));
    c.stderr.on('data', (b: Buffer) => (out += b.toString()));
    const t = setTimeout(() => c.kill('SIGKILL'), timeoutMs);
    c.on('close', (code) => {
      clearTimeout(t);
      resolve({ code, out });
    });
  });
  if (r.code !== 0) throw new Error(`${file} ${args.join(' ')} failed (${r.code}): ${r.out}`);
  return r.out;
}

/**
 * A clone of this repository at `dir` whose branch `main` holds this checkout's library folder
 * (committed or not), for `git: "file://<dir>"` in place of the README's URL.
 */
export async function projectClone(dir: string, home: string): Promise<string> {
  const env = gitEnv(home);
  const lib = relative(repoRoot, clientDir); // clients/cluster_topology
  await ok('git', ['clone', '-q', repoRoot, dir], dirname(dir), env);
  const head = (await ok('git', ['rev-parse', 'HEAD'], repoRoot, env)).trim();
  await ok('git', ['checkout', '-q', '-B', 'main', head], dir, env);
  // The library as it is in this checkout: its tracked and new (not ignored) files.
  const files = (
    await run('git', ['ls-files', '-co', '--exclude-standard', lib], env, 30_000, repoRoot)
  ).stdout
    .split('\n')
    .filter((f) => f && existsSync(join(repoRoot, f)));
  await ok('git', ['rm', '-rq', lib], dir, env);
  for (const f of files) {
    await mkdir(dirname(join(dir, f)), { recursive: true });
    await cp(join(repoRoot, f), join(dir, f));
  }
  await ok('git', ['add', '-A', lib], dir, env);
  await ok('git', ['commit', '-q', '--allow-empty', '-m', `${lib} as in the checkout under test`], dir, env);
  return dir;
}

export interface MemberWorld {
  /** Writes the status as the operator does: these peers (short names), a current lastResponse. */
  list(shorts: readonly string[]): Promise<void>;
  /** The probe node listed beside the application under test. */
  readonly probe: ProbeNode;
  /** What the test applications read their client options from (CT_*). */
  readonly memberEnv: NodeJS.ProcessEnv;
}

/**
 * What the tests of an application built on the library share: the topology `web` in `ns`, whose
 * status the test writes as the operator writes it (a protocol-level test), listing `shorts`; a
 * user `user` that may only get and watch it; and a probe node `probe` of this cell reading it.
 */
export async function memberWorld(
  s: ControlPlaneState,
  erl: ErlangTestEnv,
  ns: string,
  user: string,
  probe: string,
  shorts: readonly string[],
): Promise<MemberWorld> {
  const list = (peers: readonly string[]) =>
    kubectlOk(s, [
      '-n',
      ns,
      'patch',
      'ctopo',
      'web',
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify({
        status: {
          peers: peers.map(listedPeer),
          lastResponse: { code: '200', reason: 'OK', since: new Date().toISOString() },
        },
      }),
    ]).then(() => undefined);
  await applyTopology(s, ns, 'web', { selector: 'netzlive/pod-type=cluster-service', pollingInterval: '1s' });
  await list(shorts);
  const creds = await mintClient(s.pki, `user-${user}-${ns}`, `${user}-${ns}`, []);
  await applyObjects(
    s,
    readerRbac({
      namespace: ns,
      name: 'beam',
      topologies: ['web'],
      verbs: ['get', 'watch'],
      subject: { kind: 'User', name: `${user}-${ns}` },
    }),
  );
  const client = {
    name: 'web',
    namespace: ns,
    api_url: s.server,
    ca_file: s.pki.caCert,
    cert_file: creds.cert,
    key_file: creds.key,
  };
  const ebin = await buildClient(join(erl.root, 'probe-build'));
  const node = await ProbeNode.start(erl, ebin, probe, {
    client: { ...client, lease: false },
    hostname: probe,
  });
  return {
    list,
    probe: node,
    memberEnv: {
      CT_NAME: client.name,
      CT_NAMESPACE: client.namespace,
      CT_API_URL: client.api_url,
      CT_CA_FILE: client.ca_file,
      CT_CERT_FILE: client.cert_file,
      CT_KEY_FILE: client.key_file,
    },
  };
}

/**
 * Asks a test application for its state ("state" on its stdin, once a second) until it prints
 * `line` (its self check may still be unknown when the first answer comes).
 */
export async function askStateUntil(
  app: ChildProcess,
  output: () => string,
  line: string,
  what: string,
  timeoutMs = 30_000,
): Promise<void> {
  await waitFor(
    what,
    () => {
      if (output().includes(line)) return true;
      app.stdin!.write('state\n');
      return false;
    },
    timeoutMs,
    1000,
  ).catch((e: Error) => {
    throw new Error(`${e.message}\nthe application said: ${output().slice(-3000)}`);
  });
}
