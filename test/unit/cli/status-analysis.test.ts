import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { analysisFromStatus } from '../../../operator/cli/status-analysis.js';
import { formatAnalysisTable } from '../../../operator/cli/analysis-table.js';
import {
  analyzeFailureDomains,
  parseLayout,
  type FailureDomainAnalysis,
} from '../../../operator/failure-domains/index.js';
import { fixturePath } from './helpers.js';

/** What the API server gives back of a status the operator wrote: the same JSON. */
const asStored = (a: unknown): unknown => JSON.parse(JSON.stringify(a));

describe('analysisFromStatus', () => {
  it.each(['two-sites.yaml', 'three-sites.yaml', 'two-sites-vpn.yaml'])(
    'gives back the same table as the analysis of %s',
    (file) => {
      const layout = parseLayout(readFileSync(fixturePath('layouts', file), 'utf8'));
      if (!layout.ok) throw new Error(layout.problems.join('; '));
      const a = analyzeFailureDomains(layout.members, layout.settings);
      const r = analysisFromStatus(asStored(a));
      if (!r.ok) throw new Error(r.problem);
      expect(formatAnalysisTable(r.analysis as FailureDomainAnalysis)).toBe(formatAnalysisTable(a));
    },
  );

  it('reads an analysis that is off', () => {
    expect(analysisFromStatus({ verdict: 'Off' })).toEqual({ ok: true, analysis: { verdict: 'Off' } });
  });

  it.each([
    [null, 'status.failureDomains is not an object'],
    [
      { votingWeight: 1, quorum: 1, faultTolerance: 0, verdict: 'Breaks' },
      'status.failureDomains.voters is missing',
    ],
    [
      { voters: 1, votingWeight: 1, quorum: 1, faultTolerance: 0, verdict: 'Doomed' },
      '"Doomed" is not one this ctopo knows',
    ],
    // An older operator's minimal status: refused, not filled with guesses.
    [
      { voters: 0, votingWeight: 0, quorum: 1, faultTolerance: -1, verdict: 'NoVoters' },
      'status.failureDomains.learners is missing or not a number',
    ],
    [
      {
        ...(asStored(analyzeFailureDomains([], {})) as object),
        domains: 'none',
      },
      'status.failureDomains.domains is missing or not a list',
    ],
  ])('refuses a status it cannot read: %j', (status, problem) => {
    const r = analysisFromStatus(status);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.problem).toContain(problem);
  });
});
