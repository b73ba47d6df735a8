import { execFile } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { installCrd as installDevCrd } from '../../dev/cluster/crd.js';
import {
  kubeconfigFor,
  readState,
  startControlPlane,
  stopControlPlane,
  type ControlPlaneState,
  type IpFamily,
} from '../../dev/cluster/control-plane.js';

/** The run's shared control plane (started by global-setup). */
export async function sharedCluster(): Promise<ControlPlaneState> {
  const dir = process.env.CTOPO_TEST_STATE_DIR;
  if (!dir)
    throw new Error(
      'CTOPO_TEST_STATE_DIR is not set: integration tests run through `npm test` (jest globalSetup)',
    );
  const s = await readState(dir);
  if (!s) throw new Error(`no control plane state in ${dir}`);
  return s;
}

/**
 * A control plane of the test's own, for tests that stop or pause the API server, or that need
 * it on [::1] (`ipFamily: 'ipv6'`).
 */
export async function privateCluster(
  opts: { ipFamily?: IpFamily } = {},
): Promise<{ state: ControlPlaneState; stop: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'ctopo-private-'));
  const state = await startControlPlane(dir, opts);
  return { state, stop: async () => void (await stopControlPlane(dir)) };
}

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the real kubectl against `s` (admin unless `kubeconfig` is given). Never throws on exit code. */
export function kubectl(
  s: ControlPlaneState,
  args: string[],
  opts: { input?: string; kubeconfig?: string } = {},
): Promise<RunResult> {
  return new Promise((ok) => {
    const child = execFile(
      s.binaries.kubectl,
      ['--kubeconfig', opts.kubeconfig ?? s.kubeconfig, ...args],
      { timeout: 60_000, maxBuffer: 64 * 1024 * 1024 },
      (err, stdout, stderr) =>
        ok({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
    );
    if (opts.input !== undefined) child.stdin!.end(opts.input);
  });
}

export async function kubectlOk(
  s: ControlPlaneState,
  args: string[],
  opts: { input?: string; kubeconfig?: string } = {},
): Promise<string> {
  const r = await kubectl(s, args, opts);
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${r.code}): ${r.stderr}`);
  return r.stdout;
}

/** Installs the project's CRD and waits until it is served. Idempotent. */
export async function installCrd(s: ControlPlaneState): Promise<void> {
  await installDevCrd(s);
}

/** A namespace of the test's own, so tests never see each other's objects. */
export async function freshNamespace(s: ControlPlaneState, prefix = 't'): Promise<string> {
  const ns = `${prefix}-${randomBytes(4).toString('hex')}`;
  await kubectlOk(s, ['create', 'namespace', ns]);
  return ns;
}

/** A kubeconfig for a user identified by a client certificate (CN = user, O = groups). */
export function kubeconfigForUser(
  s: ControlPlaneState,
  user: string,
  groups: string[] = [],
): Promise<string> {
  return kubeconfigFor(s, `${user}.kubeconfig`, { user, groups });
}

/** A kubeconfig with a bearer token, optionally pointed at another server (a fault proxy). */
export function kubeconfigForToken(
  s: ControlPlaneState,
  file: string,
  token: string,
  server?: string,
): Promise<string> {
  return kubeconfigFor(s, file, { token }, server);
}
