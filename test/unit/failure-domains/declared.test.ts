import { describe, expect, it } from '@jest/globals';

import {
  analyzeFailureDomains,
  analyzePeers,
  checkFailureDomainSettings,
  matchesSelector,
  parseLabelSelector,
  type PeerForAnalysis,
} from '../../../operator/failure-domains/index.js';
import { m } from './helpers.js';

const ZONE = 'topology.kubernetes.io/zone';
const REGION = 'topology.kubernetes.io/region';
const HOST = 'kubernetes.io/hostname';

describe('defaults that do not cry wolf', () => {
  const node = (region: string, zone: string, host: string) => ({
    [REGION]: region,
    [ZONE]: zone,
    [HOST]: host,
  });

  it('three voters in three zones of one region: Survives with the default levels', () => {
    const a = analyzeFailureDomains([
      m('a', node('r', 'z1', 'h1')),
      m('b', node('r', 'z2', 'h2')),
      m('c', node('r', 'z3', 'h3')),
    ]);
    expect(a.verdict).toBe('Survives');
    expect(a.levels.map((l) => l.state)).toEqual(['SharedByAll', 'Judged', 'Judged']);
  });

  it('a region and a zone every voter shares are not judged; the hosts are', () => {
    const a = analyzeFailureDomains([
      m('a', node('r', 'z', 'h1')),
      m('b', node('r', 'z', 'h2')),
      m('c', node('r', 'z', 'h3')),
    ]);
    expect(a.levels.map((l) => [l.state, l.sharedDomain])).toEqual([
      ['SharedByAll', 'r'],
      ['SharedByAll', 'z'],
      ['Judged', undefined],
    ]);
    expect(a.verdict).toBe('Survives');
  });

  it('two zones holding 2+1: the zone level separates the voters and is judged: Breaks', () => {
    const a = analyzeFailureDomains([
      m('a', node('r', 'z1', 'h1')),
      m('b', node('r', 'z1', 'h2')),
      m('c', node('r', 'z2', 'h3')),
    ]);
    expect(a.verdict).toBe('Breaks');
  });

  it('every voter on one host: nothing separates them, the narrowest level is judged: Breaks', () => {
    const a = analyzeFailureDomains([
      m('a', node('r', 'z', 'h')),
      m('b', node('r', 'z', 'h')),
      m('c', node('r', 'z', 'h')),
    ]);
    expect(a.levels.map((l) => l.state)).toEqual(['SharedByAll', 'SharedByAll', 'Judged']);
    expect(a.verdict).toBe('Breaks');
  });

  it('configured levels are all judged: one hypervisor carrying every voter breaks', () => {
    const a = analyzeFailureDomains(
      [m('a', { hv: 'x', host: '1' }), m('b', { hv: 'x', host: '2' }), m('c', { hv: 'x', host: '3' })],
      { levels: [{ key: 'hv' }, { key: 'host' }] },
    );
    expect(a.levels.map((l) => l.state)).toEqual(['Judged', 'Judged']);
    expect(a.verdict).toBe('Breaks');
  });
});

describe('nested levels: known labels rule domains out', () => {
  it('a voter in rack r1 of an unknown zone cannot be in z2/r2', () => {
    const a = analyzeFailureDomains(
      [m('a', { zone: 'z1', rack: 'r1' }), m('b', { zone: 'z2', rack: 'r2' }), m('c', { rack: 'r1' })],
      { levels: [{ key: 'zone' }, { key: 'rack', within: 'zone' }] },
    );
    const rack = (d: string) => a.domains.find((x) => x.level === 'rack' && x.domain === d)!;
    expect(rack('z2/r2')).toMatchObject({ verdict: 'Survives', mayAlsoHold: 0 });
    expect(rack('z1/r1').verdict).toBe('AtRisk'); // c may be in it: 2 of 3 lost
  });
});

describe('label selectors', () => {
  it.each([
    ['role=voter', { role: 'voter' }, true],
    ['role==voter', { role: 'learner' }, false],
    ['role!=voter', {}, true],
    ['role in (voter, learner)', { role: 'learner' }, true],
    ['role notin (web)', { role: 'web' }, false],
    ['ra-member', { 'ra-member': '' }, true],
    ['!ra-member', { 'ra-member': 'x' }, false],
    ['app=etcd,tier in (control-plane)', { app: 'etcd', tier: 'control-plane' }, true],
    ['component=etcd', undefined, false],
  ])('%s on %j is %s', (text, labels, expected) => {
    const r = parseLabelSelector(text);
    if (!r.ok) throw new Error(r.problem);
    expect(matchesSelector(r.selector, labels)).toBe(expected);
  });

  it.each([
    ['role=a b', 'is not a requirement'],
    ['role in (a,b c)', '"b c" is not a label value'],
    [' , ', 'the selector is empty'],
    ['$(touch /tmp/x)', 'is not a requirement'],
  ])('refuses %j', (text, problem) => {
    const r = parseLabelSelector(text);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.problem).toContain(problem);
  });
});

describe('settings', () => {
  it.each([
    [{ voters: { selector: 'a b' } }, 'voters.selector: "a b" is not a requirement'],
    [
      { levels: [{ key: 'site' }, { key: 'vpn', transport: true, within: 'site' }] },
      'levels[1].within: a transport level stands alone (no within)',
    ],
    [
      {
        levels: [
          { key: 'vpn', transport: true },
          { key: 'site', within: 'vpn' },
        ],
      },
      'levels[1].within: "vpn" is a transport level; no level is within one',
    ],
    [
      { levels: [{ key: 'site' }, { key: 'vpn', transport: true }], partitionLevel: 'vpn' },
      'partitionLevel: "vpn" is a transport level',
    ],
    [{ analysis: 'Maybe' }, 'analysis: must be On or Off'],
  ])('%j is refused', (settings, problem) => {
    expect(checkFailureDomainSettings(settings as never).join('\n')).toContain(problem);
  });
});

describe('analyzePeers', () => {
  const peer = (name: string, site: string, role: string, votes?: string): PeerForAnalysis => ({
    name,
    nodeLabels: { site },
    ready: true,
    podLabels: { role },
    ...(votes !== undefined ? { votes } : {}),
  });

  it('declared voters and learners; other peers are not members', () => {
    const a = analyzePeers(
      [
        peer('ra-0', 'A', 'ra'),
        peer('ra-1', 'B', 'ra', '2'),
        peer('obs', 'A', 'observer'),
        peer('web', 'C', 'web'),
      ],
      {
        levels: [{ key: 'site' }],
        voters: { selector: 'role in (ra, observer)', learnerSelector: 'role=observer' },
      },
    );
    if (a.verdict === 'Off') throw new Error('on');
    expect([a.voters, a.votingWeight, a.learners, a.ignoredPeers]).toEqual([2, 3, 1, 1]);
    expect(a.domains.find((d) => d.domain === 'A')).toMatchObject({
      voters: 1,
      learners: 1,
      members: ['obs', 'ra-0'],
    });
  });

  it('a bad votes annotation is said, and the voter keeps one vote', () => {
    const a = analyzePeers([peer('a', 'A', 'x', '1e3'), peer('b', 'B', 'x', '-1')], {
      levels: [{ key: 'site' }],
    });
    if (a.verdict === 'Off') throw new Error('on');
    expect(a.votingWeight).toBe(2);
    expect(a.warnings.slice(0, 2)).toEqual([
      'pod "a": annotation netzlive/votes "1e3" is not an integer from 0 to 10000; counted with 1 vote',
      'pod "b": annotation netzlive/votes "-1" is not an integer from 0 to 10000; counted with 1 vote',
    ]);
  });

  it('without declared voters every peer votes once, as before', () => {
    const a = analyzePeers([peer('a', 'A', 'x'), peer('b', 'B', 'y')], { levels: [{ key: 'site' }] });
    if (a.verdict === 'Off') throw new Error('on');
    expect([a.voters, a.votingWeight, a.ignoredPeers]).toEqual([2, 2, undefined]);
  });
});
