import { describe, expect, it } from '@jest/globals';

import {
  analyzeFailureDomains,
  faultToleranceOf,
  maxSimultaneousFailures,
  quorumOf,
} from '../../../operator/failure-domains/index.js';
import { m, SITE, spread } from './helpers.js';

// etcd FAQ, "failure tolerance": cluster size → majority / failure tolerance.
const ETCD_FAQ: readonly [number, number, number][] = [
  [1, 1, 0],
  [2, 2, 0],
  [3, 2, 1],
  [4, 3, 1],
  [5, 3, 2],
  [6, 4, 2],
  [7, 4, 3],
  [8, 5, 3],
  [9, 5, 4],
];

describe('quorum arithmetic (etcd FAQ table)', () => {
  it.each(ETCD_FAQ)('W=%i → Q=%i, f=%i', (W, Q, f) => {
    expect(quorumOf(W)).toBe(Q);
    expect(faultToleranceOf(W)).toBe(f);
    // The same numbers come out of the analysis, one voter per host.
    const a = analyzeFailureDomains(
      spread(
        'v',
        'host',
        Array.from({ length: W }, (_, i) => `h${i}`),
      ),
      { levels: [{ key: 'host' }] },
    );
    expect([a.votingWeight, a.quorum, a.faultTolerance, a.voters]).toEqual([W, Q, f, W]);
    expect(a.currentFaultTolerance).toBe(f);
    // One host lost: survives iff at least one vote may be lost.
    expect(a.verdict).toBe(f >= 1 ? 'Survives' : 'Breaks');
    expect(a.levels[0]!.maxSimultaneousFailures).toBe(f);
  });

  it('never uses ceil(W/2): four voters need three', () => {
    expect(quorumOf(4)).toBe(3);
    expect(quorumOf(4)).not.toBe(Math.ceil(4 / 2));
  });

  it('W = 0 has no reachable majority: f = −1', () => {
    expect(quorumOf(0)).toBe(1);
    expect(faultToleranceOf(0)).toBe(-1);
  });
});

describe('votes per member', () => {
  it('counts votes, not members: a 3-vote member on one host breaks a 5-vote cluster', () => {
    const a = analyzeFailureDomains(
      [m('big', { host: 'h1' }, { votes: 3 }), m('a', { host: 'h2' }), m('b', { host: 'h3' })],
      { levels: [{ key: 'host' }] },
    );
    expect([a.voters, a.votingWeight, a.quorum, a.faultTolerance]).toEqual([3, 5, 3, 2]);
    const h1 = a.domains.find((d) => d.domain === 'h1')!;
    expect([h1.voters, h1.votingWeight, h1.votesLeftIfLost, h1.verdict]).toEqual([1, 3, 2, 'Breaks']);
    expect(a.domains.find((d) => d.domain === 'h2')!.verdict).toBe('Survives');
  });

  it('two voters on one hypervisor are two votes lost together', () => {
    const a = analyzeFailureDomains([m('a', { hv: 'x' }), m('b', { hv: 'x' }), m('c', { hv: 'y' })], {
      levels: [{ key: 'hv' }],
    });
    expect(a.domains[0]).toMatchObject({ domain: 'x', voters: 2, votingWeight: 2, verdict: 'Breaks' });
  });
});

describe('learners (votes: 0)', () => {
  const members = [
    m('v1', { site: 'A' }),
    m('v2', { site: 'B' }),
    m('v3', { site: 'C' }),
    m('l1', { site: 'A' }, { votes: 0 }),
    m('l2', { site: 'D' }, { votes: 0 }),
  ];
  const a = analyzeFailureDomains(members, { levels: SITE });

  it('are counted on neither side', () => {
    expect([a.voters, a.learners, a.votingWeight, a.quorum, a.faultTolerance]).toEqual([3, 2, 3, 2, 1]);
    expect(a.readyVotingWeight).toBe(3);
  });

  it('are listed in their domain without adding votes', () => {
    expect(a.domains.find((d) => d.domain === 'A')).toMatchObject({
      voters: 1,
      learners: 1,
      votingWeight: 1,
      votesLeftIfLost: 2,
      members: ['l1', 'v1'],
    });
  });

  it('a learners-only domain costs nothing and is no partition side that can commit', () => {
    expect(a.domains.find((d) => d.domain === 'D')).toMatchObject({
      voters: 0,
      learners: 1,
      votingWeight: 0,
      votesLeftIfLost: 3,
      verdict: 'Survives',
    });
    expect(a.partition!.sides.find((s) => s.domain === 'D')).toEqual({
      domain: 'D',
      votingWeight: 0,
      canCommit: 'No',
    });
  });

  it('cannot rescue quorum: three voters in one site and ten learners elsewhere still break', () => {
    const b = analyzeFailureDomains(
      [
        ...spread('v', 'site', ['A', 'A', 'A']),
        ...spread(
          'l',
          'site',
          Array.from({ length: 10 }, () => 'B'),
        ).map((x) => ({ ...x, votes: 0 })),
      ],
      { levels: SITE },
    );
    expect(b.verdict).toBe('Breaks');
    expect(b.votingWeight).toBe(3);
  });

  it('a learner of unknown placement adds no unknown votes', () => {
    const b = analyzeFailureDomains(
      [...spread('v', 'site', ['A', 'B', 'C']), m('l', undefined, { votes: 0 })],
      {
        levels: SITE,
      },
    );
    expect(b.unknownPlacementWeight).toBe(0);
    expect(b.verdict).toBe('Survives');
    expect(b.levels[0]!.unknownPlacementMembers).toEqual([]);
  });
});

describe('no voters', () => {
  it('an empty membership is NoVoters, never Survives', () => {
    const a = analyzeFailureDomains([], {});
    expect(a.verdict).toBe('NoVoters');
    expect([a.voters, a.votingWeight, a.quorum, a.faultTolerance, a.currentFaultTolerance]).toEqual([
      0, 0, 1, -1, -1,
    ]);
    expect(a.domains).toEqual([]);
    expect(a.partition).toBeUndefined();
    expect(a.levels.map((l) => [l.survivesAnySingle, l.maxSimultaneousFailures])).toEqual([
      ['False', 0],
      ['False', 0],
      ['False', 0],
    ]);
  });

  it('learners only is NoVoters, and their domains do not survive', () => {
    const a = analyzeFailureDomains(
      [m('l1', { site: 'A' }, { votes: 0 }), m('l2', { site: 'B' }, { votes: 0 })],
      { levels: SITE, partitionLevel: 'site' },
    );
    expect(a.verdict).toBe('NoVoters');
    expect(a.learners).toBe(2);
    expect(a.domains.map((d) => [d.verdict, d.verdictNow])).toEqual([
      ['Breaks', 'Breaks'],
      ['Breaks', 'Breaks'],
    ]);
    expect(a.partition).toEqual({
      level: 'site',
      result: 'NoMajority',
      sides: [
        { domain: 'A', votingWeight: 0, canCommit: 'No' },
        { domain: 'B', votingWeight: 0, canCommit: 'No' },
      ],
    });
  });
});

describe('maxSimultaneousFailures', () => {
  it('is the largest t whose t biggest domains fit within f', () => {
    // W = 9, f = 4: 3+1 fits, 3+1+1 does not.
    expect(maxSimultaneousFailures([1, 3, 1, 1, 1, 1, 1], 0, 4)).toBe(2);
    expect(maxSimultaneousFailures([1, 1, 1, 1, 1], 0, 2)).toBe(2);
    expect(maxSimultaneousFailures([3, 1, 1], 0, 2)).toBe(0);
    expect(maxSimultaneousFailures([], 0, 2)).toBe(0);
  });

  it('counts the unknown votes as lost with the domains (worst case)', () => {
    expect(maxSimultaneousFailures([1, 1, 1, 1, 1], 1, 2)).toBe(1);
    expect(maxSimultaneousFailures([1, 1, 1, 1, 1], 2, 2)).toBe(0);
    expect(maxSimultaneousFailures([1, 1, 1], 3, 2)).toBe(0);
  });

  it('counts a learners-only domain as a free loss', () => {
    expect(maxSimultaneousFailures([0, 1, 1, 1], 0, 1)).toBe(1);
    expect(maxSimultaneousFailures([0, 0], 0, 0)).toBe(2);
  });

  it('five sites 2+2+2+2+1 of 9 survive any two losses but not three', () => {
    const a = analyzeFailureDomains(spread('v', 'site', ['A', 'A', 'B', 'B', 'C', 'C', 'D', 'D', 'E']), {
      levels: SITE,
    });
    expect(a.faultTolerance).toBe(4);
    expect(a.levels[0]).toMatchObject({ domains: 5, survivesAnySingle: 'True', maxSimultaneousFailures: 2 });
  });
});
