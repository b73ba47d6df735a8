import { execFile } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { CRD_PATHS } from '../generate/api.js';
import { GROUP, PLURAL } from '../../operator/api/schema.js';
import { MEMBER_PLURAL } from '../../operator/api/member-schema.js';
import type { ControlPlaneState } from './control-plane.js';

const run = promisify(execFile);

/**
 * Applies the project's CRDs (ClusterTopology, ClusterTopologyMember) and returns once the API
 * server serves them (established, and a list answers). Polls the
 * Established condition rather than `kubectl wait`, which fails outright (".status.conditions
 * accessor error") when asked about a CRD whose status the server has not written yet — as does
 * a jsonpath filter over those conditions, so the object is read whole.
 */
export async function installCrd(s: ControlPlaneState, timeoutMs = 60_000): Promise<void> {
  const kubectl = (...args: string[]) => run(s.binaries.kubectl, ['--kubeconfig', s.kubeconfig, ...args]);
  await kubectl('apply', '--server-side', '--force-conflicts', ...CRD_PATHS.flatMap((f) => ['-f', f]));
  const deadline = Date.now() + timeoutMs;
  for (const plural of [PLURAL, MEMBER_PLURAL])
    for (;;) {
      // -o json, not a jsonpath filter: kubectl fails a filter over conditions not yet written.
      const { stdout } = await kubectl('get', `crd/${plural}.${GROUP}`, '-o', 'json');
      const crd = JSON.parse(stdout) as { status?: { conditions?: { type: string; status: string }[] } };
      // Established is not yet served: a list answers 429 "storage is (re)initializing" until the
      // API server's cache of the new resource is ready, so wait for a list to answer.
      if (
        crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') &&
        (await kubectl('get', `${plural}.${GROUP}`, '-A', '-o', 'name').then(
          () => true,
          () => false,
        ))
      )
        break;
      if (Date.now() > deadline)
        throw new Error(`the CRD ${plural}.${GROUP} is not established after ${timeoutMs / 1000} s`);
      await sleep(200);
    }
}
