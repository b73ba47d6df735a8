import { describe, expect, it } from '@jest/globals';

import { formatAnalysisTable } from '../../../operator/cli/analysis-table.js';
import {
  analyzeFailureDomains,
  type FailureDomainSettings,
  type Member,
} from '../../../operator/failure-domains/index.js';
import { loadLayout, m, SITE, spread } from '../failure-domains/helpers.js';

const table = (members: Member[], settings: FailureDomainSettings) =>
  formatAnalysisTable(analyzeFailureDomains(members, settings));

/** The cells of the row whose first cell starts with `what`. */
function row(text: string, what: string): string[] {
  const line = text.split('\n').find((l) => l.startsWith(`| ${what}`));
  if (line === undefined) throw new Error(`no row ${what} in\n${text}`);
  return line
    .slice(1, -1)
    .split(/(?<!\\)\|/)
    .map((c) => c.trim());
}

describe('formatAnalysisTable', () => {
  const { members, settings } = loadLayout('two-sites.yaml');
  const seed = table(members, settings);

  it("reproduces the seed's four rows", () => {
    expect(row(seed, 'site B')).toEqual(['site B (etcd-3)', '2 of 3', 'Yes']);
    expect(row(seed, 'site A')).toEqual(['site A (etcd-1, etcd-2)', '1 of 3', 'No']);
    expect(row(seed, 'hypervisor hv-1')).toEqual(['hypervisor hv-1 (etcd-1, etcd-2)', '1 of 3', 'No']);
    expect(row(seed, 'the link between sites only')).toEqual([
      'the link between sites only',
      '2 of 3 on one side',
      'Only on the majority side',
    ]);
  });

  it('prints the whole seed analysis exactly', () => {
    expect(seed).toBe(
      [
        '3 voters (3 votes), 0 learners; quorum 2 of 3; a majority survives the loss of 1 vote.',
        'Verdict: Breaks — a single loss can cost the majority.',
        '',
        '| What disappears                  | Voters left        | Writes still commit       |',
        '|----------------------------------|--------------------|---------------------------|',
        '| site A (etcd-1, etcd-2)          | 1 of 3             | No                        |',
        '| site B (etcd-3)                  | 2 of 3             | Yes                       |',
        '| hypervisor hv-1 (etcd-1, etcd-2) | 1 of 3             | No                        |',
        '| hypervisor hv-2 (etcd-3)         | 2 of 3             | Yes                       |',
        '| host vm-1 (etcd-1)               | 2 of 3             | Yes                       |',
        '| host vm-2 (etcd-2)               | 2 of 3             | Yes                       |',
        '| host vm-3 (etcd-3)               | 2 of 3             | Yes                       |',
        '| the link between sites only      | 2 of 3 on one side | Only on the majority side |',
        '| partition at site: side A        | 2 of 3             | Yes                       |',
        '| partition at site: side B        | 1 of 3             | No                        |',
        '',
        '| Level      | Domains | Survives any single loss | Simultaneous losses survived |',
        '|------------|---------|--------------------------|------------------------------|',
        '| site       | 2       | No                       | 0                            |',
        '| hypervisor | 2       | No                       | 0                            |',
        '| host       | 3       | Yes                      | 1                            |',
        '',
        '- site: all votes sit in exactly two domains (A: 2 of 3, B: 1 of 3); a majority split over two domains ' +
          'can never survive the loss of either: losing A breaks quorum. Add a voter in a third, independent domain',
        '- hypervisor: all votes sit in exactly two domains (hv-1: 2 of 3, hv-2: 1 of 3); a majority split over two ' +
          'domains can never survive the loss of either: losing hv-1 breaks quorum. Add a voter in a third, independent domain',
        '',
        'Now: 3 of 3 votes ready (quorum 2); 1 more vote may be lost.',
        '',
      ].join('\n'),
    );
  });

  it('says Maybe, with the range of votes left, where placement is unknown', () => {
    const t = table([...spread('v', 'site', ['A', 'A', 'B', 'C']), m('pending', undefined)], {
      levels: SITE,
    });
    expect(t).toContain('Verdict: AtRisk — it depends on where the vote of unknown placement is.');
    expect(row(t, 'site A')).toEqual([
      'site A (v-1, v-2)',
      '2 to 3 of 5',
      'Maybe (1 vote of unknown placement)',
    ]);
    expect(row(t, 'site B')).toEqual(['site B (v-3)', '4 of 5', 'Yes']);
    expect(row(t, 'the links between sites only')).toEqual([
      'the links between sites only',
      'at most 2 of 5 on one side, 1 vote unplaced',
      'Maybe (1 vote of unknown placement)',
    ]);
    expect(row(t, 'partition at site: side A')).toEqual([
      'partition at site: side A',
      '2 of 5',
      'Maybe (1 vote of unknown placement)',
    ]);
    expect(row(t, 'site  ')).toEqual(['site', '3', 'Unknown', '0']);
    expect(t).toContain('- site: 1 vote of unknown placement (pending)');
  });

  it('says when no side of a partition can commit', () => {
    const t = table(spread('v', 'site', ['A', 'A', 'B', 'B']), { levels: SITE });
    expect(row(t, 'the link between sites only')).toEqual([
      'the link between sites only',
      'at most 2 of 4 on any side',
      'No (no side holds a majority)',
    ]);
  });

  it('has no partition rows without a partition, and no summary row for a single side', () => {
    expect(table(spread('v', 'site', ['A', 'A']), { levels: SITE })).not.toContain('partition at');
    const one = table(spread('v', 'site', ['A', 'A']), { levels: SITE, partitionLevel: 'site' });
    expect(row(one, 'partition at site: side A')).toEqual(['partition at site: side A', '2 of 2', 'Yes']);
    expect(one).not.toContain('between');
  });

  it('shows the current state: members not ready counted as lost', () => {
    const t = table(
      [m('a', { host: 'h1' }), m('b', { host: 'h2' }), m('c', { host: 'h3' }, { ready: false })],
      {
        levels: [{ key: 'host' }],
      },
    );
    expect(t).toContain(
      [
        'Now: 2 of 3 votes ready (quorum 2); no further vote may be lost.',
        'With the members that are not ready counted as lost:',
        '- losing host h1 breaks quorum',
        '- losing host h2 breaks quorum',
      ].join('\n'),
    );
  });

  it('says when quorum is lost now', () => {
    const t = table(
      [
        m('a', { host: 'h1' }),
        m('b', { host: 'h2' }, { ready: false }),
        m('c', { host: 'h3' }, { ready: false }),
      ],
      {
        levels: [{ key: 'host' }],
      },
    );
    expect(t).toContain('Now: quorum is lost: 1 of 3 votes ready (quorum 2); writes cannot commit.');
  });

  it('lists the warnings last', () => {
    const t = table(spread('v', 'site', ['A', 'B', 'C']), { levels: SITE, expectedVoters: 4 });
    expect(
      t.endsWith(
        'Warnings:\n- expectedVoters is 4 but 3 voters were found: 1 more is counted as a voter of unknown placement, not ready\n',
      ),
    ).toBe(true);
  });

  it('prints only the header for no voters', () => {
    expect(table([], { levels: SITE })).toBe(
      '0 voters (0 votes), 0 learners.\nVerdict: NoVoters — no member holds a vote.\n\n' +
        'No member holds a vote: there is no majority to keep, so no loss can be survived.\n',
    );
  });

  it('shortens level keys to their last segment unless two would collide', () => {
    const t = table(
      [m('a', { 'topology.kubernetes.io/zone': 'z1', 'a.example/rack': 'r1', 'b.example/rack': 'x' })],
      {
        levels: [
          { key: 'topology.kubernetes.io/zone' },
          { key: 'a.example/rack' },
          { key: 'b.example/rack' },
        ],
      },
    );
    expect(t).toContain('| zone z1 (a) ');
    expect(t).toContain('| a.example/rack r1 (a) ');
    expect(t).toContain('| b.example/rack x (a) ');
  });

  it('bounds the names in a row and escapes "|"', () => {
    const t = table(spread('v', 'site', Array(9).fill('A|B')), { levels: SITE });
    expect(row(t, 'site A')).toEqual(['site A\\|B (v-1, v-2, v-3, v-4, v-5, v-6, +3 more)', '0 of 9', 'No']);
  });

  it('names learners among the members of their domain and counts only votes', () => {
    const t = table([...spread('v', 'site', ['A', 'B', 'C']), m('l', { site: 'A' }, { votes: 0 })], {
      levels: SITE,
    });
    expect(t.startsWith('3 voters (3 votes), 1 learner;')).toBe(true);
    expect(row(t, 'site A')).toEqual(['site A (l, v-1)', '2 of 3', 'Yes']);
  });

  it('pluralises level names for the link row', () => {
    const t = table(
      [
        m('a', { 'infra.example.com/switch': 's1' }),
        m('b', { 'infra.example.com/switch': 's2' }),
        m('c', { 'infra.example.com/switch': 's3' }),
      ],
      { levels: [{ key: 'infra.example.com/switch' }] },
    );
    expect(t).toContain('| the links between switches only ');
    const u = table([m('a', { proxy: 'p1' }), m('b', { proxy: 'p2' })], { levels: [{ key: 'proxy' }] });
    expect(u).toContain('| the link between proxies only ');
  });
});

describe('formatAnalysisTable: cuts per site and shared links', () => {
  it("the VPN both sites reach each other through: its own row, transport, never a vote (the source document's table)", () => {
    const { members, settings } = loadLayout('two-sites-vpn.yaml');
    const t = table(members, settings);
    // The four rows of the source document's table come out exactly.
    expect(row(t, 'site B')).toEqual(['site B (etcd-3)', '2 of 3', 'Yes']);
    expect(row(t, 'site A')).toEqual(['site A (etcd-1, etcd-2)', '1 of 3', 'No']);
    expect(row(t, 'hypervisor hv-1')).toEqual(['hypervisor hv-1 (etcd-1, etcd-2)', '1 of 3', 'No']);
    expect(row(t, 'the inter-site link tunnel-1 only')).toEqual([
      'the inter-site link tunnel-1 only',
      '2 of 3 on one side',
      "Only on site A's side",
    ]);
    // A link is no vote: still 3 voters, quorum 2.
    expect(t.startsWith('3 voters (3 votes), 0 learners; quorum 2 of 3;')).toBe(true);
    expect(row(t, 'vpn  ')).toEqual(['vpn', '1', 'Yes', '1']);
  });

  it('a concentrator three sites share: its loss leaves no side a majority', () => {
    const t = table(
      [
        m('a', { site: 'A', link: 'hub' }),
        m('b', { site: 'B', link: 'hub' }),
        m('c', { site: 'C', link: 'hub' }),
      ],
      { levels: [{ key: 'site' }, { key: 'link', transport: true }] },
    );
    expect(t).toContain('Verdict: Breaks');
    expect(row(t, 'the inter-site link hub only')).toEqual([
      'the inter-site link hub only',
      'at most 1 of 3 on any side',
      'No (no side holds a majority)',
    ]);
  });

  it('three sites or more: each site cut off from the rest, which side commits', () => {
    const t = table(spread('v', 'site', ['A', 'A', 'B', 'B', 'C']), { levels: SITE });
    expect(row(t, 'site A cut off from the rest')).toEqual([
      'site A cut off from the rest',
      'A: 2 of 5, rest: 3 of 5',
      'Only in the rest',
    ]);
    expect(row(t, 'site C cut off from the rest')).toEqual([
      'site C cut off from the rest',
      'C: 1 of 5, rest: 4 of 5',
      'Only in the rest',
    ]);
    const big = table(spread('v', 'site', ['A', 'A', 'A', 'B', 'C']), { levels: SITE });
    expect(row(big, 'site A cut off from the rest')).toEqual([
      'site A cut off from the rest',
      'A: 3 of 5, rest: 2 of 5',
      'Only inside A',
    ]);
    // Two sites: the special case keeps its single link row, no per-site rows.
    expect(table(spread('v', 'site', ['A', 'B', 'B']), { levels: SITE })).not.toContain(
      'cut off from the rest',
    );
  });

  it('says which levels are not judged, and why', () => {
    const t = formatAnalysisTable(
      analyzeFailureDomains(
        ['a', 'b', 'c'].map((z, i) =>
          m(`etcd-${i}`, {
            'topology.kubernetes.io/region': 'eu-1',
            'topology.kubernetes.io/zone': z,
            'kubernetes.io/hostname': `n${i}`,
          }),
        ),
      ),
    );
    expect(t).toContain('Verdict: Survives');
    expect(row(t, 'region')).toEqual(['region', '1', 'shared by all (not judged)', '0']);
    expect(t).toContain('- region: every placed voter is in eu-1; the default levels do not judge');
    const u = table(spread('v', 'site', ['A', 'B', 'C']), { levels: [{ key: 'site' }, { key: 'rack' }] });
    expect(row(u, 'rack ')).toEqual(['rack', '0', 'not labelled (not judged)', '0']);
  });
});
