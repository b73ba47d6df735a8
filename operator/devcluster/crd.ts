import { execFile } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { CRD_PATH } from '../api/generate.js';
import { GROUP, PLURAL } from '../api/schema.js';
import type { ControlPlaneState } from './control-plane.js';

const run = promisify(execFile);

/**
 * Applies the ClusterTopology CRD and returns once the API server serves it. Polls the
 * Established condition in the object's JSON rather than with `kubectl wait` or a JSONPath
 * filter, which both fail outright (".status.conditions accessor error", "<nil> is not array or
 * slice and cannot be filtered") on a CRD whose status the server has not written yet.
 */
export async function installCrd(s: ControlPlaneState, timeoutMs = 60_000): Promise<void> {
  const kubectl = (...args: string[]) => run(s.binaries.kubectl, ['--kubeconfig', s.kubeconfig, ...args]);
  await kubectl('apply', '--server-side', '--force-conflicts', '-f', CRD_PATH);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { stdout } = await kubectl('get', `crd/${PLURAL}.${GROUP}`, '-o', 'json');
    const crd = JSON.parse(stdout) as { status?: { conditions?: { type: string; status: string }[] | null } };
    if (crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')) return;
    if (Date.now() > deadline)
      throw new Error(`the ClusterTopology CRD is not established after ${timeoutMs / 1000} s`);
    await sleep(200);
  }
}
