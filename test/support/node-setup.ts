import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import { startControlPlane } from '../../operator/devcluster/control-plane.js';

/**
 * The real node's tests (jest project `node`, only with CTOPO_REAL_NODE=1): one dev cluster with
 * a real node for the run (`ctopo dev-cluster up --node`), its state directory handed to the
 * workers in CTOPO_NODE_STATE_DIR. Needs root, cgroups and overlayfs (docs/real-node.md).
 */
export default async function nodeSetup(): Promise<void> {
  const dir = await mkdtemp(join('/tmp', 'ctopo-node-'));
  const t0 = Date.now();
  process.env.CTOPO_NODE_STATE_DIR = dir;
  const s = await startControlPlane(dir, {
    node: true,
    log: (l) => process.stderr.write(`[real node] ${l}\n`),
  });
  process.stderr.write(
    `[real node] ${s.server} and node Ready after ${((Date.now() - t0) / 1000).toFixed(1)} s\n`,
  );
}
