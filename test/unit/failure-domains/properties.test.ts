import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';

import {
  analysisExitCode,
  analyzeFailureDomains,
  CONDITION_MESSAGE_MAX,
  formatAnalysisTable,
  quorumAtRiskCondition,
  type DomainVerdict,
  type FailureDomainSettings,
  type Member,
} from '../../../operator/failure-domains/index.js';

// Small value sets so that domains collide, are shared and go missing often.
const value = fc.constantFrom('a', 'b', 'c', 'd', '');
const labels = fc.record({ site: value, rack: value, host: value }, { requiredKeys: [] });
const member = fc.record({
  labels: fc.option(labels, { nil: undefined, freq: 6 }),
  votes: fc.option(fc.integer({ min: 0, max: 3 }), { nil: undefined }),
  ready: fc.option(fc.boolean(), { nil: undefined }),
});
const members: fc.Arbitrary<Member[]> = fc
  .array(member, { maxLength: 12 })
  .map((ms) => ms.map((x, i) => ({ name: `m${String(i).padStart(2, '0')}`, ...x })));
const settings: fc.Arbitrary<FailureDomainSettings> = fc.record(
  {
    levels: fc.constantFrom(
      [{ key: 'site' }, { key: 'rack' }, { key: 'host' }],
      [{ key: 'site' }, { key: 'rack', within: 'site' }, { key: 'host', within: 'rack' }],
      [{ key: 'host' }],
    ),
    partitionLevel: fc.constantFrom('host'),
    expectedVoters: fc.integer({ min: 0, max: 15 }),
  },
  { requiredKeys: ['levels'] },
);
const input = fc.tuple(members, settings);

const votesOf = (m: Member) => m.votes ?? 1;
const severity: Record<DomainVerdict, number> = { Survives: 0, AtRisk: 1, Breaks: 2 };

/** W from the input alone, independently of the implementation. */
function expectedWeight(ms: readonly Member[], s: FailureDomainSettings): number {
  const found = ms.filter((m) => votesOf(m) > 0);
  const missing = Math.max(0, (s.expectedVoters ?? 0) - found.length);
  return found.reduce((a, m) => a + votesOf(m), 0) + missing;
}

describe('properties', () => {
  it('at most one partition side can commit, and only with a majority', () => {
    fc.assert(
      fc.property(input, ([ms, s]) => {
        const a = analyzeFailureDomains(ms, s);
        if (a.partition === undefined) return;
        const yes = a.partition.sides.filter((x) => x.canCommit === 'Yes');
        expect(yes.length).toBeLessThanOrEqual(1);
        yes.forEach((x) => expect(x.votingWeight).toBeGreaterThanOrEqual(a.quorum));
        expect(a.partition.result === 'MajoritySide').toBe(yes.length === 1);
      }),
    );
  });

  it('adding a voter to a domain never turns its verdict from Breaks to Survives', () => {
    // Every run starts from a domain that Breaks: a fully placed member's labels get more plain
    // voters than all the other votes together, so its domain at each level holds the majority.
    const fullyPlaced = fc.record({
      site: fc.constantFrom('a', 'b', 'c', 'd'),
      rack: fc.constantFrom('a', 'b', 'c', 'd'),
      host: fc.constantFrom('a', 'b', 'c', 'd'),
    });
    let checked = 0;
    fc.assert(
      fc.property(input, fullyPlaced, ([ms, s], labels) => {
        const heavy = ms.reduce((a, m) => a + votesOf(m), 0) + (s.expectedVoters ?? 0) + 1;
        const base: Member[] = [
          ...ms,
          ...Array.from({ length: heavy }, (_, k) => ({ name: `zy-${k}`, labels })),
        ];
        const before = analyzeFailureDomains(base, s);
        const breaking = before.domains.filter((d) => d.members.includes('zy-0') && d.verdict === 'Breaks');
        expect(breaking.length).toBeGreaterThan(0);
        const after = analyzeFailureDomains([...base, { name: 'zz-new', labels }], s);
        for (const old of breaking) {
          const d = after.domains.find((x) => x.level === old.level && x.domain === old.domain);
          expect(d).toBeDefined();
          expect(d?.verdict).toBe('Breaks');
        }
        checked++;
      }),
    );
    expect(checked).toBe(100);
  });

  it('does not depend on the order of the members', () => {
    fc.assert(
      fc.property(
        input.chain(([ms, s]) =>
          fc.tuple(fc.constant(ms), fc.shuffledSubarray(ms, { minLength: ms.length }), fc.constant(s)),
        ),
        ([ms, shuffled, s]) => {
          expect(analyzeFailureDomains(shuffled, s)).toEqual(analyzeFailureDomains(ms, s));
        },
      ),
    );
  });

  it('is NoVoters exactly when W = 0', () => {
    fc.assert(
      fc.property(input, ([ms, s]) => {
        const a = analyzeFailureDomains(ms, s);
        expect(a.votingWeight).toBe(expectedWeight(ms, s));
        expect(a.verdict === 'NoVoters').toBe(a.votingWeight === 0);
      }),
    );
  });

  it('keeps its arithmetic consistent', () => {
    fc.assert(
      fc.property(input, ([ms, s]) => {
        const a = analyzeFailureDomains(ms, s);
        expect(a.quorum + a.faultTolerance).toBe(a.votingWeight);
        expect(2 * a.quorum).toBeGreaterThan(a.votingWeight);
        expect(a.readyVotingWeight).toBeLessThanOrEqual(a.votingWeight);
        expect(a.currentFaultTolerance).toBe(a.readyVotingWeight - a.quorum);
        for (const l of a.levels) {
          const inDomains = a.domains
            .filter((d) => d.level === l.key)
            .reduce((x, d) => x + d.votingWeight, 0);
          expect(inDomains + l.unknownPlacementWeight).toBe(a.votingWeight);
          expect(l.unknownPlacementWeight).toBeLessThanOrEqual(a.unknownPlacementWeight);
        }
        for (const d of a.domains) {
          expect(d.votesLeftIfLost).toBe(a.votingWeight - d.votingWeight);
          // Members already down can only make things worse now.
          expect(severity[d.verdictNow]).toBeGreaterThanOrEqual(severity[d.verdict]);
        }
      }),
    );
  });

  it('agrees with a brute force over every place the unknown voters could be (flat levels)', () => {
    fc.assert(
      fc.property(members, (ms) => {
        const s = { levels: [{ key: 'site' }, { key: 'host' }] };
        const a = analyzeFailureDomains(ms, s);
        const voters = ms.filter((m) => votesOf(m) > 0);
        const W = voters.reduce((x, m) => x + votesOf(m), 0);
        const f = W - (Math.floor(W / 2) + 1);
        for (const { key } of s.levels) {
          const where = (m: Member) => m.labels?.[key as 'site'] || undefined;
          const unknown = voters.filter((m) => where(m) === undefined).map(votesOf);
          // Every subset of the unknown voters may be the part that sits in the lost domain.
          const extras = unknown.reduce<number[]>((sums, v) => [...sums, ...sums.map((x) => x + v)], [0]);
          const weights = new Map<string, number>();
          for (const m of voters)
            if (where(m) !== undefined) weights.set(where(m)!, (weights.get(where(m)!) ?? 0) + votesOf(m));
          for (const [domain, L] of weights) {
            const outcomes = new Set(extras.map((e) => L + e <= f));
            const oracle = outcomes.size === 2 ? 'AtRisk' : outcomes.has(true) ? 'Survives' : 'Breaks';
            expect(a.domains.find((d) => d.level === key && d.domain === domain)!.verdict).toBe(oracle);
          }
          // Losing any t domains survives iff every t-subset, with the unknown votes inside, fits.
          const ws = [...a.domains.filter((d) => d.level === key).map((d) => d.votingWeight)];
          const U = unknown.reduce((x, v) => x + v, 0);
          let best = 0;
          for (let t = 1; t <= ws.length; t++) {
            const subsets = combinations(ws, t);
            if (W > 0 && subsets.every((c) => c.reduce((x, v) => x + v, 0) + U <= f)) best = t;
            else break;
          }
          expect(a.levels.find((l) => l.key === key)!.maxSimultaneousFailures).toBe(best);
        }
      }),
    );
  });

  it('formats, conditions and exit codes every analysis without failing', () => {
    fc.assert(
      fc.property(input, ([ms, s]) => {
        const a = analyzeFailureDomains(ms, s);
        const c = quorumAtRiskCondition(a);
        expect(c.message.length).toBeLessThanOrEqual(CONDITION_MESSAGE_MAX);
        expect(c.status === 'False').toBe(
          a.verdict === 'Survives' && a.domains.every((d) => d.verdictNow === 'Survives'),
        );
        expect(analysisExitCode(a)).toBe({ Survives: 0, Breaks: 1, AtRisk: 2, NoVoters: 3 }[a.verdict]);
        const table = formatAnalysisTable(a);
        if (a.votingWeight > 0) for (const d of a.domains) expect(table).toContain(` ${d.domain} (`);
        else expect(table).toContain('NoVoters');
      }),
    );
  });
});

function combinations(xs: readonly number[], k: number): number[][] {
  if (k === 0) return [[]];
  if (xs.length < k) return [];
  const [head, ...rest] = xs as [number, ...number[]];
  return [...combinations(rest, k - 1).map((c) => [head, ...c]), ...combinations(rest, k)];
}
