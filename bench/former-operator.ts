/**
 * `ctopo operator` as it worked before issue #29, for the benchmarks that measure it beside the
 * operator of today in one run: every topology lists and watches its own pods and re-lists them
 * (restarting the watch) every pollingInterval, each status change is written at once, as a merge
 * patch of the whole changed fields, and every peer carries every field. The parts are injected
 * here (ControllerParts); nothing of this lives in the operator's own code paths.
 *
 *   node --max-semi-space-size=2 dist/bench/former-operator.js operator [ctopo operator flags]
 */
import { pathToFileURL } from 'node:url';
import type { ControllerParts } from '../operator/manager/run.js';
import { operatorCommandWith } from '../operator/cli/commands/operator.js';
import { runProgram } from '../operator/cli/program.js';
import { SelectorPodSources } from '../operator/controller/selector-pod-sources.js';
import { fileURLToPath } from 'node:url';

export const FORMER_DESIGN: ControllerParts = {
  podSources: (kube, opts) => new SelectorPodSources(kube, opts),
  writeWindowMs: 0,
  statusPatch: 'merge',
  lightPeersAbove: Infinity,
};

/** This file, compiled: what a bench spawns. */
export const FORMER_OPERATOR_SCRIPT = fileURLToPath(import.meta.url);
/** The Node.js flags `ctopo operator` runs with (bin/ctopo.js), so both designs run alike. */
export const OPERATOR_NODE_FLAGS = ['--max-semi-space-size=2'];

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await runProgram(
    {
      name: 'former-operator',
      invoke: 'node dist/bench/former-operator.js',
      title: 'ctopo operator as it worked before issue #29 (for the benchmarks)',
      commands: [
        {
          name: 'operator',
          summary: 'the former operator',
          load: async () => operatorCommandWith(FORMER_DESIGN),
        },
      ],
    },
    process.argv.slice(2),
  );
}
