import type { FailureDomainsResult } from '../failure-domains/index.js';

/**
 * The exit status of `ctopo analyze`: verdicts apart from errors, so CI can gate on a layout or a
 * live topology and still tell a quorum that breaks apart from an analysis that could not run.
 *
 * | code | meaning                                                                     |
 * |------|-----------------------------------------------------------------------------|
 * | 0    | Survives: every single loss leaves a majority                               |
 * | 1    | Breaks: some single loss costs the majority                                 |
 * | 2    | AtRisk: the answer depends on members of unknown placement                  |
 * | 3    | NoVoters: no member holds a vote                                            |
 * | 4    | Off: the topology declares no quorum (spec.failureDomains.analysis: Off)    |
 * | 5    | the layout file and the live placement differ (with --layout and NAME)      |
 * | 64   | bad usage or a bad layout file                                              |
 * | 69   | could not analyse: the topology is missing, unreadable, or its status is    |
 * |      | malformed; the API server refused or did not answer                         |
 * | 75   | no analysis yet (the operator has not listed the pods): try again later     |
 *
 * The structural verdict decides, as on paper.
 */
export const EXIT_OFF = 4;
export const EXIT_DIFFERENT = 5;
/** sysexits' EX_UNAVAILABLE. */
export const EXIT_CANNOT_ANALYSE = 69;
/** sysexits' EX_TEMPFAIL: the status holds no analysis yet; asking again later may answer. */
export const EXIT_NO_ANALYSIS_YET = 75;

export function analysisExitCode(analysis: FailureDomainsResult): 0 | 1 | 2 | 3 | 4 {
  switch (analysis.verdict) {
    case 'Survives':
      return 0;
    case 'Breaks':
      return 1;
    case 'AtRisk':
      return 2;
    case 'NoVoters':
      return 3;
    case 'Off':
      return EXIT_OFF;
  }
}
