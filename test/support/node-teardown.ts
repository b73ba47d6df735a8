import { rm } from 'node:fs/promises';
import { stopControlPlane } from '../../dev/cluster/control-plane.js';

export default async function nodeTeardown(): Promise<void> {
  const dir = process.env.CTOPO_NODE_STATE_DIR;
  if (!dir || process.env.CTOPO_NODE_KEEP) return;
  await stopControlPlane(dir, (l) => process.stderr.write(`[real node] ${l}\n`));
  if (!process.env.CTOPO_KEEP_TEST_STATE) await rm(dir, { recursive: true, force: true });
}
