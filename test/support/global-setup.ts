import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startControlPlane } from '../../dev/cluster/control-plane.js';

/**
 * One real control plane (etcd + kube-apiserver) for the whole integration run. Its state
 * directory reaches the test workers through CTOPO_TEST_STATE_DIR; tests that must break the
 * API server (stop, pause) start one of their own instead.
 */
export default async function globalSetup(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'ctopo-test-'));
  const t0 = Date.now();
  const s = await startControlPlane(dir, { log: (l) => process.stderr.write(`[control plane] ${l}\n`) });
  process.stderr.write(
    `[control plane] ${s.server} ready after ${((Date.now() - t0) / 1000).toFixed(1)} s (state ${dir})\n`,
  );
  process.env.CTOPO_TEST_STATE_DIR = dir;
}
