import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';

import {
  analyzeFailureDomains,
  analyzePeers,
  type DomainVerdict,
  type FailureDomainAnalysis,
  type Member,
  type PeerForAnalysis,
} from '../../../operator/failure-domains/index.js';
import { fillingCount, oracle, type OracleSettings } from './oracle.js';

// Small value sets so that domains collide, nest, are shared and go missing often.
const value = fc.constantFrom('a', 'b', 'c', '');
const labels = fc.record({ site: value, rack: value, host: value, vpn: value }, { requiredKeys: [] });
const member = fc.record({
  labels: fc.option(labels, { nil: undefined, freq: 5 }),
  votes: fc.option(fc.integer({ min: 0, max: 3 }), { nil: undefined }),
  ready: fc.option(fc.boolean(), { nil: undefined }),
});
const members: fc.Arbitrary<Member[]> = fc
  .array(member, { maxLength: 7 })
  .map((ms) => ms.map((x, i) => ({ name: `m${i}`, ...x })));
const levelSets: OracleSettings['levels'][] = [
  [{ key: 'site' }, { key: 'rack' }, { key: 'host' }],
  // Nested: racks named within their site, hosts within their rack.
  [{ key: 'site' }, { key: 'rack', within: 'site' }, { key: 'host', within: 'rack' }],
  [{ key: 'rack', within: 'site' }, { key: 'site' }],
  [{ key: 'site' }, { key: 'vpn', transport: true }],
  [{ key: 'site' }, { key: 'rack', within: 'site' }, { key: 'vpn', transport: true }],
];
const settings: fc.Arbitrary<OracleSettings> = fc.constantFrom(...levelSets).chain((levels) =>
  fc.record(
    {
      levels: fc.constant(levels),
      partitionLevel: fc.constantFrom(...levels.filter((l) => l.transport !== true).map((l) => l.key)),
      expectedVoters: fc.integer({ min: 0, max: 6 }),
    },
    { requiredKeys: ['levels'] },
  ),
);
const small = fc.tuple(members, settings).filter(([ms, s]) => fillingCount(ms, s) <= 3000);

const severity: Record<DomainVerdict, number> = { Survives: 0, AtRisk: 1, Breaks: 2 };
const domainKey = (level: string, domain: string) => `${level}\u0000${domain}`;

function agree(a: FailureDomainAnalysis, o: ReturnType<typeof oracle>): void {
  expect(a.votingWeight).toBe(o.W);
  expect(a.quorum).toBe(o.Q);
  for (const l of a.levels) expect([l.key, l.state]).toEqual([l.key, o.states[l.key]]);
  for (const d of a.domains)
    expect([d.level, d.domain, d.verdict, d.verdictNow]).toEqual([
      d.level,
      d.domain,
      o.domains.get(domainKey(d.level, d.domain))!.verdict,
      o.domains.get(domainKey(d.level, d.domain))!.verdictNow,
    ]);
  // Every placed domain of a judged level is reported.
  const judged = new Set(a.levels.filter((l) => l.state === 'Judged').map((l) => l.key));
  expect(a.domains.length).toBe(
    [...o.domains.keys()].filter((k) => judged.has(k.split('\u0000')[0]!)).length,
  );
  for (const l of a.levels.filter((x) => x.transport !== true))
    expect([l.key, l.survivesAnySingle]).toEqual([l.key, o.anySingle[l.key]]);
  expect(a.partition?.level).toBe(o.partition?.level);
  if (a.partition !== undefined && o.partition !== undefined) {
    expect(a.partition.result).toBe(o.partition.result);
    for (const side of a.partition.sides)
      expect([side.domain, side.canCommit]).toEqual([side.domain, o.partition.sides.get(side.domain)]);
    expect(a.partition.sides.length).toBe(o.partition.sides.size);
    for (const i of a.partition.isolations ?? []) {
      const x = o.partition.isolations.get(i.domain)!;
      expect([i.domain, i.canCommit, i.restCanCommit]).toEqual([i.domain, x.inside, x.rest]);
    }
  }
  const links = a.links ?? [];
  expect(links.length).toBe(o.links.size);
  for (const link of links) {
    const x = o.links.get(`${link.level}\u0000${link.link}`)!;
    expect([link.link, link.verdict, link.restCanCommit]).toEqual([link.link, x.verdict, x.rest]);
    for (const c of link.cutOff)
      expect([link.link, c.domain, c.canCommit]).toEqual([link.link, c.domain, x.cutOff.get(c.domain)]);
    expect(link.cutOff.length).toBe(x.cutOff.size);
  }
  expect(a.verdict).toBe(o.verdict);
}

describe('the analysis agrees with a brute force over every filling of the unknown labels', () => {
  it('domains, levels, partitions, isolations, links and the verdict — flat, nested and transport levels', () => {
    fc.assert(
      fc.property(small, ([ms, s]) => agree(analyzeFailureDomains(ms, s), oracle(ms, s))),
      { numRuns: 400 },
    );
  });

  it('at most one side of any cut commits (in every filling, and in what the analysis says)', () => {
    fc.assert(
      fc.property(small, ([ms, s]) => {
        expect(oracle(ms, s).mostSidesCommitting).toBeLessThanOrEqual(1);
        const a = analyzeFailureDomains(ms, s);
        const yes = (xs: readonly string[]) => xs.filter((x) => x === 'Yes').length;
        if (a.partition !== undefined) {
          expect(yes(a.partition.sides.map((x) => x.canCommit))).toBeLessThanOrEqual(1);
          for (const i of a.partition.isolations ?? [])
            expect(yes([i.canCommit, i.restCanCommit])).toBeLessThanOrEqual(1);
        }
        for (const l of a.links ?? [])
          expect(yes([...l.cutOff.map((c) => c.canCommit), l.restCanCommit])).toBeLessThanOrEqual(1);
      }),
      { numRuns: 300 },
    );
  });
});

describe('monotonicity', () => {
  const placedEverywhere = fc.record({
    site: fc.constantFrom('a', 'b', 'c'),
    rack: fc.constantFrom('a', 'b', 'c'),
    host: fc.constantFrom('a', 'b', 'c'),
    vpn: fc.constantFrom('a', 'b'),
  });

  it('adding a fully placed voter never improves its own domains and never worsens another', () => {
    fc.assert(
      fc.property(
        members,
        settings,
        placedEverywhere,
        fc.integer({ min: 1, max: 3 }),
        fc.boolean(),
        (ms, s, where, votes, ready) => {
          const before = analyzeFailureDomains(ms, s);
          const after = analyzeFailureDomains([...ms, { name: 'zz-new', labels: where, votes, ready }], s);
          for (const d of after.domains) {
            const old = before.domains.find((x) => x.level === d.level && x.domain === d.domain);
            if (old === undefined) continue;
            if (d.members.includes('zz-new')) {
              expect(severity[d.verdict]).toBeGreaterThanOrEqual(severity[old.verdict]);
              if (ready) expect(severity[d.verdictNow]).toBeGreaterThanOrEqual(severity[old.verdictNow]);
            } else {
              expect(severity[d.verdict]).toBeLessThanOrEqual(severity[old.verdict]);
              if (ready) expect(severity[d.verdictNow]).toBeLessThanOrEqual(severity[old.verdictNow]);
            }
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('zero-vote members change no verdict, wherever they are', () => {
    fc.assert(
      fc.property(members, settings, fc.array(member, { minLength: 1, maxLength: 3 }), (ms, s, extra) => {
        const zero = extra.map((x, i) => ({ name: `zz-${i}`, ...x, votes: 0 }));
        const a = analyzeFailureDomains(ms, s);
        const b = analyzeFailureDomains([...ms, ...zero], s);
        expect(b.verdict).toBe(a.verdict);
        expect([b.votingWeight, b.quorum, b.voters]).toEqual([a.votingWeight, a.quorum, a.voters]);
        expect(b.levels.map((l) => [l.key, l.state, l.survivesAnySingle])).toEqual(
          a.levels.map((l) => [l.key, l.state, l.survivesAnySingle]),
        );
        const voting = (x: FailureDomainAnalysis) =>
          x.domains
            .filter((d) => d.votingWeight > 0)
            .map((d) => [d.level, d.domain, d.verdict, d.verdictNow]);
        expect(voting(b)).toEqual(voting(a));
        expect(b.partition?.result).toBe(a.partition?.result);
        expect((b.links ?? []).map((l) => [l.link, l.verdict])).toEqual(
          (a.links ?? []).map((l) => [l.link, l.verdict]),
        );
      }),
      { numRuns: 300 },
    );
  });
});

describe('declared voters (the operator’s peers)', () => {
  const peer = fc.record({
    nodeLabels: fc.option(fc.record({ site: fc.constantFrom('a', 'b', 'c') }), { nil: undefined, freq: 5 }),
    ready: fc.boolean(),
    role: fc.constantFrom('voter', 'learner', 'web'),
    votes: fc.option(fc.constantFrom('0', '1', '2', '3', 'x'), { nil: undefined }),
  });
  const peers = fc.array(peer, { maxLength: 8 }).map((ps) =>
    ps.map((p, i): PeerForAnalysis => ({
      name: `p${i}`,
      nodeLabels: p.nodeLabels,
      ready: p.ready,
      podLabels: { role: p.role },
      votes: p.votes,
    })),
  );
  const declared = {
    levels: [{ key: 'site' }],
    voters: { selector: 'role in (voter,learner)', learnerSelector: 'role=learner' },
  };

  it('learners never change a verdict: a peer matching learnerSelector is as good as absent', () => {
    fc.assert(
      fc.property(peers, fc.array(peer, { minLength: 1, maxLength: 3 }), (ps, extra) => {
        const learners = extra.map((p, i) => ({
          name: `zz-${i}`,
          nodeLabels: p.nodeLabels,
          ready: p.ready,
          podLabels: { role: 'learner' },
          votes: p.votes,
        }));
        const a = analyzePeers(ps, declared);
        const b = analyzePeers([...ps, ...learners], declared);
        if (a.verdict === 'Off' || b.verdict === 'Off') throw new Error('analysis is on');
        expect(b.verdict).toBe(a.verdict);
        expect([b.votingWeight, b.voters, b.learners]).toEqual([
          a.votingWeight,
          a.voters,
          a.learners + learners.length,
        ]);
      }),
    );
  });

  it('peers outside the selectors are not members; votes come from the annotation', () => {
    fc.assert(
      fc.property(peers, (ps) => {
        const a = analyzePeers(ps, declared);
        if (a.verdict === 'Off') throw new Error('analysis is on');
        const role = (p: PeerForAnalysis) => p.podLabels!.role;
        const votesOf = (p: PeerForAnalysis) =>
          p.votes === undefined || p.votes === 'x' ? 1 : Number(p.votes);
        const voters = ps.filter((p) => role(p) === 'voter');
        expect(a.ignoredPeers).toBe(ps.filter((p) => role(p) === 'web').length);
        expect(a.votingWeight).toBe(voters.reduce((s, p) => s + votesOf(p), 0));
        expect(a.voters).toBe(voters.filter((p) => votesOf(p) > 0).length);
        const bad = voters.filter((p) => p.votes === 'x').length;
        expect(a.warnings.filter((w) => w.includes('netzlive/votes')).length).toBe(
          Math.min(bad, 5) + (bad > 5 ? 1 : 0),
        );
      }),
    );
  });

  it('analysis Off is the whole answer', () => {
    fc.assert(
      fc.property(peers, (ps) =>
        expect(analyzePeers(ps, { ...declared, analysis: 'Off' })).toEqual({ verdict: 'Off' }),
      ),
      { numRuns: 20 },
    );
  });
});
