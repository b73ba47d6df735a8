import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import { readState, startControlPlane } from '../../dev/cluster/control-plane.js';

/**
 * The real node's tests (jest project `node`, only with CTOPO_REAL_NODE=1): one dev cluster with
 * a real node for the run (`npm run dev-cluster -- up --node`), its state directory handed to the
 * workers in CTOPO_NODE_STATE_DIR. Needs root, cgroups and overlayfs (docs/real-node.md).
 * CTOPO_NODE_STATE_DIR set beforehand names a dev cluster with a node that is already up
 * (`npm run dev-cluster -- up --node --state DIR`): the tests use it and leave it running.
 */
export default async function nodeSetup(): Promise<void> {
  const given = process.env.CTOPO_NODE_STATE_DIR;
  if (given) {
    if (!(await readState(given))?.node)
      throw new Error(`CTOPO_NODE_STATE_DIR=${given} holds no dev cluster with a node`);
    process.env.CTOPO_NODE_KEEP = '1';
    return;
  }
  const dir = await mkdtemp(join('/tmp', 'ctopo-node-'));
  const t0 = Date.now();
  process.env.CTOPO_NODE_STATE_DIR = dir;
  const s = await startControlPlane(dir, {
    node: true,
    log: (l) => process.stderr.write(`[real node] ${l}\n`),
  });
  process.stderr.write(
    `[real node] ${s.server} and node schedulable after ${((Date.now() - t0) / 1000).toFixed(1)} s\n`,
  );
}
