/**
 * The operator designs a benchmark can run side by side in one run: `now` (`ctopo operator`) and
 * `former` (bench/former-operator.ts: the design before issue #29, injected from here).
 */
import { startOperator, type CtopoProcess } from '../test/support/operator-process.js';
import { FORMER_OPERATOR_SCRIPT, OPERATOR_NODE_FLAGS } from './former-operator.js';

export type Design = 'now' | 'former' | 'baseline';

/** How a figure names each design. */
export const DESIGN_NAME: Record<Design, string> = {
  now: 'now',
  former:
    'before (#29: a list and watch per topology, re-listed each poll; every change written at once, as a merge patch; every peer field)',
  baseline: 'baseline (`ctopo operator` of another checkout, BENCH_BASELINE_CTOPO)',
};
export const DESIGN_SHORT: Record<Design, string> = { now: 'now', former: 'before', baseline: 'baseline' };

export function startDesign(
  design: Design,
  kubeconfig: string,
  extra: string[],
  env: NodeJS.ProcessEnv = {},
): CtopoProcess {
  if (design === 'baseline') {
    const bin = process.env.BENCH_BASELINE_CTOPO;
    if (!bin)
      throw new Error(
        'the design baseline needs BENCH_BASELINE_CTOPO=/path/to/another/checkout/bin/ctopo.js',
      );
    return startOperator(kubeconfig, extra, env, bin);
  }
  return design === 'now'
    ? startOperator(kubeconfig, extra, env)
    : startOperator(
        kubeconfig,
        extra,
        env,
        FORMER_OPERATOR_SCRIPT,
        env.CTOPO_RUNTIME_FLAGS !== undefined
          ? env.CTOPO_RUNTIME_FLAGS.split(' ').filter(Boolean)
          : OPERATOR_NODE_FLAGS,
      );
}
