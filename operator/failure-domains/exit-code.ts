import type { FailureDomainAnalysis } from './types.js';

/**
 * The exit status of `ctopo analyze`, so CI can gate on a layout: 0 every single loss survives,
 * 1 a single loss breaks quorum, 2 the answer depends on members of unknown placement,
 * 3 no voters. (64, bad input, is the CLI's own.) The structural verdict decides, as on paper.
 */
export function analysisExitCode(analysis: FailureDomainAnalysis): 0 | 1 | 2 | 3 {
  switch (analysis.verdict) {
    case 'Survives':
      return 0;
    case 'Breaks':
      return 1;
    case 'AtRisk':
      return 2;
    case 'NoVoters':
      return 3;
  }
}
