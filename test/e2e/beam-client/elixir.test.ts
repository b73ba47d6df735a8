import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { spawn, type ChildProcess } from 'node:child_process';
import { cp, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ControlPlaneState } from '../../../dev/cluster/control-plane.js';
import { mintClient } from '../../../dev/cluster/pki.js';
import { freshNamespace, installCrd, kubectlOk, sharedCluster } from '../../support/cluster.js';
import { applyTopology, applyObjects, readerRbac } from '../../support/objects.js';
import { ErlangTestEnv, run } from '../../support/erlang.js';
import { buildClient, clientDir, ProbeNode, repoRoot } from '../../support/beam-client.js';
import { waitFor } from '../../support/wait.js';

/**
 * An Elixir application (Debian's elixir and mix, no Hex) depends on the library through a mix
 * git dependency with `sparse: "clients/beam"` — a local git repository stands in for the
 * project's — puts `{:cluster_topology, opts}` in its supervision tree, and joins an Erlang node
 * listed beside it in the ClusterTopology's status.
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
afterAll(async () => {
  member?.stdin?.end();
  if (member && member.exitCode === null) {
    const t = setTimeout(() => member!.kill('SIGKILL'), 5000);
    await new Promise((r) => member!.once('exit', r));
    clearTimeout(t);
  }
  await ProbeNode.stopAll();
  await erl?.stop();
});

it('an Elixir app built with mix (git dependency, sparse:) runs the client in its supervision tree', async () => {
  const root = erl.root;
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: erl.home,
    LANG: 'C.UTF-8',
    MIX_HOME: join(root, 'mix-home'),
    HEX_OFFLINE: '1',
    MIX_ENV: 'dev',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_AUTHOR_NAME: 'test',
    GIT_AUTHOR_EMAIL: 'test@example.invalid',
    GIT_COMMITTER_NAME: 'test',
    GIT_COMMITTER_EMAIL: 'test@example.invalid',
  };
  const ok = async (file: string, args: string[], cwd: string, timeoutMs = 300_000) => {
    const r = await new Promise<{ code: number | null; out: string }>((resolve) => {
      const c = spawn(file, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
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
  };

  // A git repository holding the library where the project keeps it.
  const repo = join(root, 'repo');
  await mkdir(join(repo, 'clients'), { recursive: true });
  await cp(clientDir, join(repo, 'clients', 'beam'), { recursive: true });
  await writeFile(join(repo, 'README.md'), 'stand-in for the project repository\n');
  await ok('git', ['init', '-q', '-b', 'main'], repo);
  await ok('git', ['add', '-A'], repo);
  await ok('git', ['commit', '-q', '-m', 'library'], repo);

  // The Elixir application.
  const app = join(root, 'member');
  await cp(join(repoRoot, 'test', 'fixtures', 'beam-client', 'elixir-member'), app, { recursive: true });
  const template = await readFile(join(app, 'mix.exs.template'), 'utf8');
  await writeFile(join(app, 'mix.exs'), template.replace('@REPO@', `file://${repo}`));
  await ok('mix', ['deps.get'], app);
  await ok('mix', ['compile'], app);
  // Only the library's folder was checked out (sparse).
  const depFiles = (await run('git', ['-C', join(app, 'deps', 'cluster_topology'), 'ls-files'], env)).stdout;
  expect(depFiles).toContain('clients/beam/src/cluster_topology.erl');
  const r = await run('ls', [join(app, 'deps', 'cluster_topology')], env);
  expect(r.stdout.trim().split('\n')).toEqual(['clients']);

  // The topology; its status written here as the operator writes it (a protocol-level test).
  await applyTopology(s, ns, 'web', { selector: 'netzlive/pod-type=cluster-service', pollingInterval: '1s' });
  const peer = (short: string) => ({
    nodeName: `${short}@127.0.0.1`,
    pod: short,
    uid: `uid-${short}`,
    podIP: '127.0.0.1',
    node: '',
    hostSource: 'PodIP',
    nameSource: 'PodName',
    terminating: false,
  });
  await kubectlOk(s, [
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
        peers: [peer('ex'), peer('p1')],
        lastResponse: { code: '200', reason: 'OK', since: new Date().toISOString() },
      },
    }),
  ]);
  const creds = await mintClient(s.pki, `user-beam-ex-${ns}`, `beam-ex-${ns}`, []);
  await applyObjects(
    s,
    readerRbac({
      namespace: ns,
      name: 'beam',
      topologies: ['web'],
      verbs: ['get', 'watch'],
      subject: { kind: 'User', name: `beam-ex-${ns}` },
    }),
  );
  const ebin = await buildClient(join(root, 'probe-build'));
  const p1 = await ProbeNode.start(erl, ebin, 'p1', {
    client: {
      name: 'web',
      namespace: ns,
      api_url: s.server,
      ca_file: s.pki.caCert,
      cert_file: creds.cert,
      key_file: creds.key,
      lease: false,
    },
    hostname: 'p1',
  });

  member = spawn(
    'elixir',
    [
      '--name',
      'ex@127.0.0.1',
      '--erl',
      '-start_epmd false -kernel inet_dist_use_interface {127,0,0,1}',
      '-S',
      'mix',
      'run',
      '--no-halt',
      '--no-compile',
    ],
    {
      cwd: app,
      env: {
        ...env,
        ERL_EPMD_PORT: String(erl.epmdPort),
        HOSTNAME: 'ex',
        CT_NAME: 'web',
        CT_NAMESPACE: ns,
        CT_API_URL: s.server,
        CT_CA_FILE: s.pki.caCert,
        CT_CERT_FILE: creds.cert,
        CT_KEY_FILE: creds.key,
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    },
  );
  member.stdout!.on('data', (b: Buffer) => (memberOut += b.toString()));
  member.stderr!.on('data', (b: Buffer) => (memberOut += b.toString()));
  await p1.waitForNodes(['ex@127.0.0.1'], 60_000);
  // The hook hears the status in any case; a round is reported only if this side made a call
  // (when p1 dialled first, the connection already holds and the round calls nothing).
  await waitFor(
    "the Elixir app's hook to hear the status",
    () => memberOut.includes('member event: %{event: :status'),
    60_000,
  );
  member.stdin!.write('state\n');
  await waitFor(
    'the Elixir app to print its state',
    () => /member state: .*self_check.*ok: true/s.test(memberOut),
    20_000,
  );
}, 600_000);
