import { execFile } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { CRD_PATH } from '../generate/api.js';
import { GROUP, PLURAL } from '../../operator/api/schema.js';
import type { ControlPlaneState } from './control-plane.js';

const run = promisify(execFile);

/**
 * Applies the ClusterTopology CRD and returns once the API server serves it. Polls the
 * Established condition rather than `kubectl wait`, which fails outright (".status.conditions
 * accessor error") when asked about a CRD whose status the server has not written yet — as does
 * a jsonpath filter over those conditions, so the object is read whole.
 */
export async function installCrd(s: ControlPlaneState, timeoutMs = 60_000): Promise<void> {
  const kubectl = (...args: string[]) => run(s.binaries.kubectl, ['--kubeconfig', s.kubeconfig, ...args]);
  await kubectl('apply', '--server-side', '--force-conflicts', '-f', CRD_PATH);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    // -o json, not a jsonpath filter: kubectl fails a filter over conditions not yet written.
    const { stdout } = await kubectl('get', `crd/${PLURAL}.${GROUP}`, '-o', 'json');
    const crd = JSON.parse(stdout) as { status?: { conditions?: { type: string; status: string }[] } };
    if (crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')) return;
    if (Date.now() > deadline)
      throw new Error(`the ClusterTopology CRD is not established after ${timeoutMs / 1000} s`);
    await sleep(200);
  }
}
