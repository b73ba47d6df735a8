import { afterAll, describe, expect, it } from '@jest/globals';
import { X509Certificate } from 'node:crypto';
import { mkdtemp, readFile } from 'node:fs/promises';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readState, stopControlPlane } from '../../dev/cluster/control-plane.js';
import { kubectl } from '../support/cluster.js';
import { ctopoDevBin } from '../support/operator-process.js';
import { runCtopo } from './cli-run.js';

const devCluster = (args: string[], opts: { timeoutMs?: number } = {}) =>
  runCtopo(['dev-cluster', ...args], { ...opts, bin: ctopoDevBin });

/** Whether this cluster's API server (its certificate, from its CA) answers HTTPS at host:port. */
const apiAnswers = (host: string, port: number, ca: Buffer) =>
  new Promise<boolean>((ok) => {
    const req = request({ host, port, path: '/readyz', ca, timeout: 5000 }, (res) => {
      res.resume();
      ok(true);
    });
    req.once('timeout', () => req.destroy(new Error('timeout')));
    req.once('error', () => ok(false));
    req.end();
  });

/**
 * `npm run dev-cluster -- up --ip-family ipv6`, as a user runs it (the dev tools' entry): a cluster whose every client must
 * speak IPv6 — the API server on [::1] only, a kubeconfig that says https://[::1]:PORT, and a
 * serving certificate for ::1. A restart keeps the family; mixing families is refused.
 */
describe('npm run dev-cluster -- --ip-family ipv6', () => {
  let dir = '';
  afterAll(async () => {
    if (dir) await stopControlPlane(dir);
  });

  it('serves on [::1] only, with a certificate for ::1; kubectl works through its kubeconfig', async () => {
    dir = await mkdtemp(join(tmpdir(), 'ctopo-dev6-'));
    const up = await devCluster(['up', '--state', dir, '--ip-family', 'ipv6'], {
      timeoutMs: 180_000,
    });
    expect(up.stderr + up.stdout).toContain('dev cluster up');
    expect(up.code).toBe(0);
    const s = (await readState(dir))!;
    expect(s.server).toBe(`https://[::1]:${s.apiserver.port}`);
    expect(await readFile(s.kubeconfig, 'utf8')).toContain(`server: https://[::1]:${s.apiserver.port}`);
    expect(new X509Certificate(await readFile(s.pki.serverCert)).checkIP('::1')).toBe('::1');
    const ca = await readFile(s.pki.caCert);
    expect(await apiAnswers('::1', s.apiserver.port, ca)).toBe(true);
    expect(await apiAnswers('127.0.0.1', s.apiserver.port, ca)).toBe(false);
    const crd = await kubectl(s, ['get', 'crd', 'clustertopologies.cluster.netzlive.io', '-o', 'name']);
    expect(crd.stdout.trim()).toBe(
      'customresourcedefinition.apiextensions.k8s.io/clustertopologies.cluster.netzlive.io',
    );
  }, 240_000);

  it('starts again in its own family, and refuses the other one for the same state directory', async () => {
    const first = (await readState(dir))!;
    expect((await devCluster(['down', '--state', dir])).code).toBe(0);
    const other = await devCluster(['up', '--state', dir, '--ip-family', 'ipv4']);
    expect(other.code).not.toBe(0);
    expect(other.stderr).toContain('holds an ipv6 dev cluster');
    const again = await devCluster(['up', '--state', dir], { timeoutMs: 180_000 });
    expect(again.code).toBe(0);
    expect((await readState(dir))!.server).toBe(first.server);
  }, 240_000);

  it('refuses an unknown family, and the real node with IPv6, before starting anything', async () => {
    const state = join(dir, 'never');
    const bad = await devCluster(['up', '--state', state, '--ip-family', 'ipv5']);
    expect(bad.code).toBe(64);
    expect(bad.stderr).toContain('--ip-family is ipv4 or ipv6');
    const node = await devCluster(['up', '--state', state, '--node', '--ip-family', 'ipv6']);
    expect(node.code).toBe(64);
    expect(node.stderr).toContain('IPv4 only');
    expect(await readState(state)).toBeUndefined();
  });
});
