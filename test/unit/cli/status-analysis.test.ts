import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { analysisFromStatus } from '../../../operator/cli/status-analysis.js';
import {
  analyzeFailureDomains,
  formatAnalysisTable,
  parseLayout,
  type FailureDomainAnalysis,
  type Member,
} from '../../../operator/failure-domains/index.js';
import { fixturePath } from './helpers.js';

/**
 * What the API server keeps of an analysis written to .status: the CRD's status schema has no
 * per-level unknownPlacementWeight / unknownPlacementMembers(NotListed), so they are pruned.
 */
function asStored(a: FailureDomainAnalysis): unknown {
  const copy = JSON.parse(JSON.stringify(a)) as Record<string, unknown>;
  for (const l of copy.levels as Record<string, unknown>[]) {
    delete l.unknownPlacementWeight;
    delete l.unknownPlacementMembers;
    delete l.unknownPlacementMembersNotListed;
  }
  return copy;
}

const LEVELS = { levels: [{ key: 'site' }, { key: 'hypervisor' }] };
const peer = (name: string, labels?: Record<string, string>, ready = true): Member => ({
  name,
  labels,
  ready,
});

describe('analysisFromStatus', () => {
  it.each(['seed-003.yaml', 'three-sites.yaml'])(
    'gives back the same table as the analysis of %s',
    (file) => {
      const layout = parseLayout(readFileSync(fixturePath('layouts', file), 'utf8'));
      if (!layout.ok) throw new Error(layout.problems.join('; '));
      const a = analyzeFailureDomains(layout.members, layout.settings);
      const r = analysisFromStatus(
        asStored(a),
        layout.members.map((m) => m.name),
      );
      expect(r.ok).toBe(true);
      if (r.ok) expect(formatAnalysisTable(r.analysis)).toBe(formatAnalysisTable(a));
    },
  );

  it('recovers the votes and names of unknown placement per level from the domains and peers', () => {
    const members = [
      peer('web-0', { site: 'A', hypervisor: 'hv-1' }),
      peer('web-1', { site: 'B' }), // no hypervisor label
      peer('web-2', undefined), // unscheduled
    ];
    const a = analyzeFailureDomains(members, { ...LEVELS, expectedVoters: 4 });
    expect(a.verdict).toBe('AtRisk');
    const r = analysisFromStatus(
      asStored(a),
      members.map((m) => m.name),
    );
    if (!r.ok) throw new Error(r.problem);
    expect(r.analysis.levels).toEqual(a.levels);
    expect(formatAnalysisTable(r.analysis)).toBe(formatAnalysisTable(a));
  });

  it('counts the unknown members when their names cannot be told', () => {
    const members = [peer('web-0', { site: 'A' }), peer('web-1', undefined), peer('web-2', undefined)];
    const a = analyzeFailureDomains(members, LEVELS);
    // No peer names given: the two unplaced voters are counted, not named.
    const r = analysisFromStatus(asStored(a));
    if (!r.ok) throw new Error(r.problem);
    const site = r.analysis.levels[0]!;
    expect(site.unknownPlacementWeight).toBe(2);
    expect(site.unknownPlacementMembers).toEqual([]);
    expect(site.unknownPlacementMembersNotListed).toBe(2);
    expect(formatAnalysisTable(r.analysis)).toContain('- site: 2 votes of unknown placement (+2 more)');
  });

  it('fills what the API server leaves out of a minimal status', () => {
    const r = analysisFromStatus({
      voters: 0,
      votingWeight: 0,
      quorum: 1,
      faultTolerance: -1,
      verdict: 'NoVoters',
    });
    if (!r.ok) throw new Error(r.problem);
    expect(r.analysis).toMatchObject({
      learners: 0,
      levels: [],
      domains: [],
      warnings: [],
      currentFaultTolerance: -1,
    });
    expect(formatAnalysisTable(r.analysis)).toContain('Verdict: NoVoters');
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
  ])('refuses a status it cannot read: %j', (status, problem) => {
    const r = analysisFromStatus(status);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.problem).toContain(problem);
  });
});
