import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { spawn, type ChildProcess } from 'node:child_process';
import { cp, readdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { ControlPlaneState } from '../../../dev/cluster/control-plane.js';
import { freshNamespace, installCrd, sharedCluster } from '../../support/cluster.js';
import { beamCommand, ErlangTestEnv, localNodeArgs } from '../../support/erlang.js';
import { ProbeNode, repoRoot } from '../../support/beam-client.js';
import {
  askStateUntil,
  CELL,
  cellHas,
  gitEnv,
  memberWorld,
  ok,
  projectClone,
  readmeRebarDeps,
  swapUrl,
} from '../../support/beam-cell.js';

/**
 * An Erlang application built by rebar3 takes the library through the `{deps, …}.` line of
 * clients/cluster_topology/README.md, as printed (only the URL swapped for a `file://` clone of
 * this repository): a `git_subdir` dependency on the library's folder. `rebar3 release` takes
 * the library, and the application's node runs the client in its supervision tree and joins a
 * node listed beside it. In the cells that hold rebar3 (OTP 27 and 29).
 */

let s: ControlPlaneState;
let erl: ErlangTestEnv;
let ns: string;
let member: ChildProcess | undefined;
let out = '';

beforeAll(async () => {
  if (!cellHas('rebar3')) return;
  s = await sharedCluster();
  await installCrd(s);
  erl = await ErlangTestEnv.start();
  ns = await freshNamespace(s, 'beam-rebar');
}, 120_000);
afterAll(async () => {
  member?.stdin?.end();
  if (member && member.exitCode === null && member.signalCode === null) {
    const t = setTimeout(() => member!.kill('SIGKILL'), 5000);
    await new Promise((r) => member!.once('exit', r));
    clearTimeout(t);
  }
  await ProbeNode.stopAll();
  await erl?.stop();
});

(cellHas('rebar3') ? it : it.skip)(
  `an Erlang app built by rebar3 from the README's git_subdir line runs the client; rebar3 release takes it (${CELL})`,
  async () => {
    const root = erl.root;
    const env = { ...gitEnv(erl.home), REBAR_CACHE_DIR: join(root, 'rebar-cache') };
    const repo = await projectClone(join(root, 'repo'), erl.home);
    const app = join(root, 'member_erl');
    await cp(join(repoRoot, 'test', 'fixtures', 'beam-client', 'erlang-member'), app, { recursive: true });
    const template = await readFile(join(app, 'rebar.config.template'), 'utf8');
    const deps = swapUrl(await readmeRebarDeps(), `file://${repo}`);
    await writeFile(join(app, 'rebar.config'), template.replace('@DEPS@', deps));
    await ok('rebar3', ['compile'], app, env);
    // rebar3 keeps a git_subdir dependency in a sparse checkout of the whole repository.
    const dep = join(app, '_build', 'default', 'lib', 'cluster_topology');
    const apps = (await readdir(dep, { recursive: true })).filter((f) =>
      f.endsWith(join('ebin', 'cluster_topology.app')),
    );
    expect(apps).toHaveLength(1);
    const built = [join(app, '_build', 'default', 'lib', 'member_erl', 'ebin'), dirname(join(dep, apps[0]!))];
    await ok('rebar3', ['release'], app, env);
    expect(await readdir(join(app, '_build', 'default', 'rel', 'member_erl', 'lib'))).toContain(
      'cluster_topology-0.1.0',
    );

    const world = await memberWorld(s, erl, ns, 'beam-rebar', 'p2', ['erlm', 'p2']);

    const paths = built.flatMap((d) => ['-pa', d]);
    member = spawn(
      ...beamCommand('erl', [...localNodeArgs('erlm@127.0.0.1'), ...paths, '-eval', 'member_erl:main()']),
      {
        cwd: app,
        env: {
          ...erl.childEnv(),
          HOSTNAME: 'erlm',
          ...world.memberEnv,
        },
        stdio: ['pipe', 'pipe', 'pipe'],
      },
    );
    member.stdout!.on('data', (b: Buffer) => (out += b.toString()));
    member.stderr!.on('data', (b: Buffer) => (out += b.toString()));
    await world.probe.waitForNodes(['erlm@127.0.0.1'], 60_000).catch((e: Error) => {
      throw new Error(`${e.message}\nthe app said: ${out.slice(-3000)}`);
    });
    await askStateUntil(
      member,
      () => out,
      'member self=erlm@127.0.0.1 self_check.ok=true\n',
      'the Erlang app to report a passing self check',
    );
  },
  600_000,
);
