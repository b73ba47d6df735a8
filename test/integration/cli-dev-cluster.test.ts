import { afterAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readState, stopControlPlane } from '../../operator/devcluster/control-plane.js';
import { kubectl } from '../support/cluster.js';
import { runCtopo } from './cli-run.js';

/**
 * `ctopo dev-cluster up` as a user runs it: the CRD comes installed, and `up` after `down`
 * starts the same cluster again (same CA, port and data), so what was talking to it reconnects.
 */
describe('ctopo dev-cluster', () => {
  let dir = '';
  afterAll(async () => {
    if (dir) await stopControlPlane(dir);
  });

  it('installs the CRD and restarts with its CA, port and data', async () => {
    dir = await mkdtemp(join(tmpdir(), 'ctopo-devcli-'));
    const up = await runCtopo(['dev-cluster', 'up', '--state', dir]);
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

    expect((await runCtopo(['dev-cluster', 'down', '--state', dir])).code).toBe(0);
    expect((await runCtopo(['dev-cluster', 'status', '--state', dir])).code).toBe(1);

    const again = await runCtopo(['dev-cluster', 'up', '--state', dir]);
    expect(again.code).toBe(0);
    const second = (await readState(dir))!;
    expect(second.server).toBe(first.server);
    expect(await readFile(second.pki.caCert, 'utf8')).toBe(ca);
    expect(await readFile(second.kubeconfig, 'utf8')).toBe(admin);
    const ns = await kubectl(second, ['get', 'namespace', 'kept-across-restart', '-o', 'name']);
    expect(ns.stdout.trim()).toBe('namespace/kept-across-restart');
  });
});
