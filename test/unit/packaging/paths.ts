import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Paths of the packaging files, from the compiled test (dist/test/unit/packaging/). */
export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');
export const CHART_DIR = join(repoRoot, 'charts', 'cluster-topology');
export const EXAMPLES_DIR = join(repoRoot, 'examples');
