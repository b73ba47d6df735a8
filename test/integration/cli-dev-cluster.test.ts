import { afterAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readState, stopControlPlane } from '../../dev/cluster/control-plane.js';
import { isOurs } from '../../dev/cluster/processes.js';
import { processesMatching } from '../support/processes.js';
import { waitFor } from '../support/wait.js';
import { kubectl } from '../support/cluster.js';
import { ctopoDevBin } from '../support/operator-process.js';
import { runCtopo } from './cli-run.js';

const devCluster = (args: string[], opts: { timeoutMs?: number } = {}) =>
  runCtopo(['dev-cluster', ...args], { ...opts, bin: ctopoDevBin });

/**
 * `npm run dev-cluster -- up` as a user runs it (the dev tools' entry): the CRD comes installed,
 * and `up` after `down` starts the same cluster again (same CA, port and data), so what was
 * talking to it reconnects; after a crash of the API server, `up` starts it again beside the etcd
 * that still runs.
 */
describe('npm run dev-cluster', () => {
  let dir = '';
  afterAll(async () => {
    if (dir) await stopControlPlane(dir);
  });

  it('installs the CRD and restarts with its CA, port and data', async () => {
    // Starting a control plane twice takes a while on a loaded machine; the limits are generous.
    dir = await mkdtemp(join(tmpdir(), 'ctopo-devcli-'));
    const up = await devCluster(['up', '--state', dir], { timeoutMs: 180_000 });
    expect(up.stderr + up.stdout).toContain('dev cluster up');
    expect(up.code).toBe(0);
    const first = (await readState(dir))!;
    const ca = await readFile(first.pki.caCert, 'utf8');
    const admin = await readFile(first.kubeconfig, 'utf8');

    const crd = await kubectl(first, ['get', 'crd', 'clustertopologies.cluster.netzlive.io', '-o', 'name']);
    expect(crd.stdout.trim()).toBe(
      'customresourcedefinition.apiextensions.k8s.io/clustertopologies.cluster.netzlive.io',
    );
    expect((await kubectl(first, ['create', 'namespace', 'kept-across-restart'])).code).toBe(0);

    expect((await devCluster(['down', '--state', dir])).code).toBe(0);
    expect((await devCluster(['status', '--state', dir])).code).toBe(1);

    const again = await devCluster(['up', '--state', dir], { timeoutMs: 180_000 });
    expect(again.code).toBe(0);
    const second = (await readState(dir))!;
    expect(second.server).toBe(first.server);
    expect(await readFile(second.pki.caCert, 'utf8')).toBe(ca);
    expect(await readFile(second.kubeconfig, 'utf8')).toBe(admin);
    const ns = await kubectl(second, ['get', 'namespace', 'kept-across-restart', '-o', 'name']);
    expect(ns.stdout.trim()).toBe('namespace/kept-across-restart');
  }, 420_000);

  it('a dead API server beside a live etcd: status says which runs, up starts the API server beside that etcd, down leaves nothing', async () => {
    const before = (await readState(dir))!;
    process.kill(before.apiserver.pid, 'SIGKILL');
    await waitFor(
      'the API server to be gone',
      async () => !(await isOurs(before.apiserver.pid, before.binaries.kubeApiserver)),
    );

    const status = await devCluster(['status', '--state', dir]);
    expect(status.code).toBe(1);
    expect(status.stdout).toContain(`partly running (${dir}):`);
    expect(status.stdout).toContain(`  etcd: runs (pid ${before.etcd.pid})`);
    expect(status.stdout).toContain('  kube-apiserver: not running');

    const up = await devCluster(['up', '--state', dir], { timeoutMs: 180_000 });
    expect(up.stderr).toContain(`etcd still runs (pid ${before.etcd.pid}), so only kube-apiserver starts`);
    expect(up.code).toBe(0);
    const after = (await readState(dir))!;
    expect(after.etcd).toEqual(before.etcd);
    expect(after.server).toBe(before.server);
    const ns = await kubectl(after, ['get', 'namespace', 'kept-across-restart', '-o', 'name']);
    expect(ns.stdout.trim()).toBe('namespace/kept-across-restart');
    expect((await devCluster(['status', '--state', dir])).stdout).toContain('running: ');

    // Every process that uses this directory: exactly the two recorded, and none once stopped.
    const using = () => processesMatching(new RegExp(`${dir}/`));
    expect((await using()).map((l) => Number(l.split(':')[0])).sort()).toEqual(
      [after.etcd.pid, after.apiserver.pid].sort(),
    );
    expect((await devCluster(['down', '--state', dir])).code).toBe(0);
    expect(await using()).toEqual([]);
    expect((await devCluster(['up', '--state', dir], { timeoutMs: 180_000 })).code).toBe(0);
  }, 420_000);

  it('kubeconfig --as writes a kubeconfig that authenticates as that service account, nothing more', async () => {
    const s = (await readState(dir))!;
    expect((await kubectl(s, ['-n', 'kept-across-restart', 'create', 'serviceaccount', 'reader'])).code).toBe(
      0,
    );
    const file = join(dir, 'reader.kubeconfig');
    const r = await devCluster([
      'kubeconfig',
      '--state',
      dir,
      '--as',
      'kept-across-restart/reader',
      '--out',
      file,
    ]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const who = await kubectl(s, ['auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}'], {
      kubeconfig: file,
    });
    expect(who.stdout).toBe('system:serviceaccount:kept-across-restart:reader');
    const denied = await kubectl(s, ['get', 'namespaces'], { kubeconfig: file });
    expect(denied.stderr).toMatch(/forbidden/i);
  });
});
