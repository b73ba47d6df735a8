import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { spawn, type ChildProcess } from 'node:child_process';
import { cp, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ControlPlaneState } from '../../../dev/cluster/control-plane.js';
import { freshNamespace, installCrd, sharedCluster } from '../../support/cluster.js';
import { beamCommand, ErlangTestEnv, run } from '../../support/erlang.js';
import { ProbeNode, repoRoot } from '../../support/beam-client.js';
import {
  askStateUntil,
  CELL,
  gitEnv,
  memberWorld,
  ok,
  projectClone,
  readmeMixDeps,
  swapUrl,
  type MemberWorld,
} from '../../support/beam-cell.js';
import { waitFor } from '../../support/wait.js';

/**
 * An Elixir application (Debian's elixir and mix, no Hex) depends on the library through the
 * mix `deps` function of clients/cluster_topology/README.md, as printed (only the URL swapped for a
 * `file://` clone of this repository), puts `{:cluster_topology, opts}` in its supervision tree,
 * and joins an Erlang node listed beside it in the ClusterTopology's status — run by `mix run`,
 * then as a `mix release` booted the way a pod boots it.
 */

let s: ControlPlaneState;
let erl: ErlangTestEnv;
let ns: string;
let member: ChildProcess | undefined;
let memberOut = '';

beforeAll(async () => {
  s = await sharedCluster();
  await installCrd(s);
  erl = await ErlangTestEnv.start();
  ns = await freshNamespace(s, 'beam-ex');
}, 120_000);
let release: ChildProcess | undefined;
let releaseOut = '';

/** Closes a node's stdin (it halts on EOF) and waits for it to exit. */
async function stopNode(c: ChildProcess | undefined): Promise<void> {
  if (!c) return;
  c.stdin?.end();
  if (c.exitCode === null && c.signalCode === null) {
    const t = setTimeout(() => c.kill('SIGKILL'), 5000);
    await new Promise((r) => c.once('exit', r));
    clearTimeout(t);
  }
}

afterAll(async () => {
  await stopNode(member);
  await stopNode(release);
  await ProbeNode.stopAll();
  await erl?.stop();
});

let env: NodeJS.ProcessEnv;
let app: string;
let world: MemberWorld;

it(`an Elixir app built with mix from the README's deps lines runs the client in its supervision tree (${CELL})`, async () => {
  const root = erl.root;
  env = {
    ...gitEnv(erl.home),
    MIX_HOME: join(root, 'mix-home'),
    HEX_OFFLINE: '1',
    MIX_ENV: 'dev',
  };

  // A clone of this repository, standing in for the URL the README names.
  const repo = await projectClone(join(root, 'repo'), erl.home);

  // The Elixir application, with the README's deps function as printed, URL swapped.
  app = join(root, 'member');
  await cp(join(repoRoot, 'test', 'fixtures', 'beam-client', 'elixir-member'), app, { recursive: true });
  const template = await readFile(join(app, 'mix.exs.template'), 'utf8');
  await writeFile(
    join(app, 'mix.exs'),
    template.replace('@DEPS@', swapUrl(await readmeMixDeps(), `file://${repo}`)),
  );
  await ok('mix', ['deps.get'], app, env);
  await ok('mix', ['compile'], app, env);
  // Only the library's folder was checked out (sparse).
  const depFiles = (await run('git', ['-C', join(app, 'deps', 'cluster_topology'), 'ls-files'], env)).stdout;
  expect(depFiles).toContain('clients/cluster_topology/src/cluster_topology.erl');
  const r = await run('ls', [join(app, 'deps', 'cluster_topology')], env);
  expect(r.stdout.trim().split('\n')).toEqual(['clients']);

  // The topology, a user that may read it, and a probe node listed beside the app.
  world = await memberWorld(s, erl, ns, 'beam-ex', 'p1', ['ex', 'p1']);

  member = spawn(
    ...beamCommand('elixir', [
      '--name',
      'ex@127.0.0.1',
      '--erl',
      '-start_epmd false -kernel inet_dist_use_interface {127,0,0,1}',
      '-S',
      'mix',
      'run',
      '--no-halt',
      '--no-compile',
    ]),
    {
      cwd: app,
      env: {
        ...env,
        ERL_EPMD_PORT: String(erl.epmdPort),
        HOSTNAME: 'ex',
        ...world.memberEnv,
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    },
  );
  member.stdout!.on('data', (b: Buffer) => (memberOut += b.toString()));
  member.stderr!.on('data', (b: Buffer) => (memberOut += b.toString()));
  await world.probe.waitForNodes(['ex@127.0.0.1'], 60_000);
  // The hook hears the status in any case; a round is reported only if this side made a call
  // (when p1 dialled first, the connection already holds and the round calls nothing).
  await waitFor(
    "the Elixir app's hook to hear the status",
    () => /member event: %\{[^\n]*event: :status/.test(memberOut),
    60_000,
  ).catch((e: Error) => {
    throw new Error(`${e.message}\nthe app said: ${memberOut.slice(-3000)}`);
  });
  await askStateUntil(
    member,
    () => memberOut,
    'member self=ex@127.0.0.1 self_check.ok=true\n',
    'the Elixir app to report a passing self check',
  );
}, 600_000);

it(`the same app as a mix release, booted as a pod boots it, joins the mesh (${CELL})`, async () => {
  expect(app).toBeDefined(); // built by the test above
  await stopNode(member);
  // rel/env.sh.eex is the project's example for several replicas named by pod IP.
  await mkdir(join(app, 'rel'), { recursive: true });
  await cp(join(repoRoot, 'examples', 'rel', 'multi-replica.env.sh.eex'), join(app, 'rel', 'env.sh.eex'));
  await ok('mix', ['release', '--overwrite'], app, { ...env, MIX_ENV: 'prod' });

  // The cookie as a pod gets it: a Secret's key (here a file only this test reads), handed to
  // the release as RELEASE_COOKIE. The release's HOME holds no .erlang.cookie.
  const secret = join(erl.root, 'secret');
  await mkdir(secret, { mode: 0o700 });
  await writeFile(join(secret, 'cookie'), erl.cookie, { mode: 0o400 });
  const home = join(erl.root, 'release-home');
  await mkdir(home);
  await world.list(['p1', 'rel']);
  const bin = join(app, '_build', 'prod', 'rel', 'member', 'bin', 'member');
  release = spawn(...beamCommand(bin, ['start'], { anyProgram: true }), {
    cwd: home,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: home,
      LANG: 'C.UTF-8',
      // What the pod's spec gives it: its name, its IP (downward API), the cookie (Secret).
      HOSTNAME: 'rel',
      POD_IP: '127.0.0.1',
      RELEASE_COOKIE: await readFile(join(secret, 'cookie'), 'utf8'),
      // This test machine only: the private epmd, distribution on loopback.
      ERL_EPMD_PORT: String(erl.epmdPort),
      ELIXIR_ERL_OPTIONS: '-start_epmd false -kernel inet_dist_use_interface {127,0,0,1}',
      ...world.memberEnv,
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  release.stdout!.on('data', (b: Buffer) => (releaseOut += b.toString()));
  release.stderr!.on('data', (b: Buffer) => (releaseOut += b.toString()));
  await world.probe.waitForNodes(['rel@127.0.0.1'], 90_000).catch((e: Error) => {
    throw new Error(`${e.message}\nthe release said: ${releaseOut.slice(-3000)}`);
  });
  await waitFor(
    "the release's hook to hear the status",
    () => /member event: %\{[^\n]*event: :status/.test(releaseOut),
    60_000,
  ).catch((e: Error) => {
    throw new Error(`${e.message}\nthe release said: ${releaseOut.slice(-3000)}`);
  });
  await askStateUntil(
    release,
    () => releaseOut,
    'member self=rel@127.0.0.1 self_check.ok=true\n',
    'the release to report a passing self check',
  );
}, 600_000);
