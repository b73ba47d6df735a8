import { rm } from 'node:fs/promises';
import { stopControlPlane } from '../../dev/cluster/control-plane.js';

export default async function globalTeardown(): Promise<void> {
  const dir = process.env.CTOPO_TEST_STATE_DIR;
  if (!dir) return;
  await stopControlPlane(dir);
  if (!process.env.CTOPO_KEEP_TEST_STATE) await rm(dir, { recursive: true, force: true });
}
