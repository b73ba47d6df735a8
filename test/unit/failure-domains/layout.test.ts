import { describe, expect, it } from '@jest/globals';

import { parseLayout } from '../../../operator/failure-domains/index.js';
import { fixture } from './helpers.js';

const problemsOf = (text: string): string[] => {
  const r = parseLayout(text);
  if (r.ok) throw new Error('expected the layout to be refused');
  return r.problems;
};

describe('parseLayout: good layouts', () => {
  it('reads the seed layout, with the defaults left to the analysis', () => {
    const r = parseLayout(fixture('two-sites.yaml'));
    expect(r).toEqual({
      ok: true,
      settings: { levels: [{ key: 'site' }, { key: 'hypervisor' }, { key: 'host' }], partitionLevel: 'site' },
      members: [
        { name: 'etcd-1', labels: { site: 'A', hypervisor: 'hv-1', host: 'vm-1' } },
        { name: 'etcd-2', labels: { site: 'A', hypervisor: 'hv-1', host: 'vm-2' }, votes: 1, ready: true },
        { name: 'etcd-3', labels: { site: 'B', hypervisor: 'hv-2', host: 'vm-3' } },
      ],
    });
  });

  it('reads JSON as well', () => {
    const r = parseLayout(fixture('two-sites.json'));
    expect(r.ok && r.settings.expectedVoters).toBe(3);
    expect(r.ok && r.members.map((m) => m.name)).toEqual(['etcd-1', 'etcd-2', 'etcd-3']);
  });

  it('keeps within, learners and levels of the three-site layout', () => {
    const r = parseLayout(fixture('three-sites.yaml'));
    expect(r.ok && r.settings.levels).toEqual([
      { key: 'site' },
      { key: 'rack', within: 'site' },
      { key: 'host' },
    ]);
    expect(r.ok && r.members.find((m) => m.name === 'learner-1')?.votes).toBe(0);
  });

  it('a voter without labels has unknown placement; levels may be omitted; voters may be empty', () => {
    expect(parseLayout('voters: [{name: a}]')).toEqual({
      ok: true,
      settings: {},
      members: [{ name: 'a', labels: undefined }],
    });
    expect(parseLayout('voters: []\nexpectedVoters: 0')).toEqual({
      ok: true,
      settings: { expectedVoters: 0 },
      members: [],
    });
  });

  it('accepts Kubernetes label keys, within a default-less level list', () => {
    const r = parseLayout(
      'levels: [{key: topology.kubernetes.io/zone}, {key: infra.example.com/rack, within: topology.kubernetes.io/zone}]\n' +
        'voters: [{name: a, labels: {topology.kubernetes.io/zone: z1, infra.example.com/rack: r1}}]',
    );
    expect(r.ok).toBe(true);
  });

  it('copies the labels, so the result shares nothing with the parser', () => {
    const r = parseLayout('voters: [{name: a, labels: {x: "1"}}]');
    expect(r.ok && Object.getPrototypeOf(r.members[0]!.labels)).toBe(Object.prototype);
  });
});

describe('parseLayout: bad layouts name the path', () => {
  it.each<[string, string[]]>([
    [
      'bad-not-yaml.txt',
      [
        'layout: not valid YAML or JSON: Flow map in block collection must be sufficiently indented and end with a } at line 2, column 1',
        'layout: not valid YAML or JSON: Flow sequence in block collection must be sufficiently indented and end with a ] at line 2, column 1',
      ],
    ],
    [
      'bad-not-a-map.yaml',
      ['layout: must be a map with voters (and optionally levels, partitionLevel, expectedVoters)'],
    ],
    ['bad-missing-name.yaml', ['voters[1].name: is required', 'voters[2].name: must not be empty']],
    ['bad-duplicate-name.yaml', ['voters[2].name: duplicate name "etcd-1" (first at voters[0])']],
    ['bad-votes.yaml', ['voters[1].votes: must be an integer', 'voters[2].votes: must be >= 0']],
    [
      'bad-unknown-key.yaml',
      [
        'voter: unknown key (allowed: levels, partitionLevel, expectedVoters, voters)',
        'levels[0].parent: unknown key (allowed: key, within, transport)',
        'voters[0].vote: unknown key (allowed: name, labels, votes, ready)',
      ],
    ],
    ['bad-within.yaml', ['levels[1].within: "room" is not the key of another level']],
    [
      'bad-within-cycle.yaml',
      [
        'levels[0].within: the levels are nested in a cycle (zone → rack → zone)',
        'levels[1].within: the levels are nested in a cycle (rack → zone → rack)',
      ],
    ],
    ['bad-partition-level.yaml', ['partitionLevel: "region" is not one of the levels (site, host)']],
    [
      'bad-types.yaml',
      [
        'levels: must be a list',
        'expectedVoters: must be an integer',
        'voters[0].labels.site: must be a string',
        'voters[0].ready: must be a boolean',
        'voters[1]: must be a map',
      ],
    ],
  ])('%s', (name, expected) => {
    expect(problemsOf(fixture(name))).toEqual(expected);
  });

  it('an empty file', () => {
    expect(problemsOf('')).toEqual([
      'layout: must be a map with voters (and optionally levels, partitionLevel, expectedVoters)',
    ]);
  });

  it('no voters key', () => {
    expect(problemsOf('levels: [{key: site}]')).toEqual(['voters: is required']);
  });

  it('several documents', () => {
    expect(problemsOf('voters: []\n---\nvoters: []\n')[0]).toMatch(
      /^layout: not valid YAML or JSON: Source contains multiple documents/,
    );
  });

  it('a key given twice', () => {
    expect(problemsOf('voters: []\nvoters: []\n')[0]).toMatch(
      /^layout: not valid YAML or JSON: Map keys must be unique/,
    );
  });

  it('an unresolved tag', () => {
    expect(problemsOf('voters: !custom []\n')[0]).toMatch(
      /^layout: not valid YAML or JSON: Unresolved tag: !custom/,
    );
  });

  it('an alias bomb is refused, not expanded', () => {
    const bomb = ['a: &a [x, x, x, x, x, x, x, x, x, x]'];
    for (let i = 0; i < 8; i++)
      bomb.push(
        `${'b'.repeat(i + 1)}: &${'b'.repeat(i + 1)} [${Array(10)
          .fill(`*${i === 0 ? 'a' : 'b'.repeat(i)}`)
          .join(', ')}]`,
      );
    bomb.push('voters: []');
    expect(problemsOf(bomb.join('\n'))[0]).toMatch(/^layout: cannot be read: /);
  });

  it('reports duplicate names and schema problems of one file together', () => {
    expect(problemsOf('voters: [{name: a, votes: -2}, {name: a}]')).toEqual([
      'voters[0].votes: must be >= 0',
      'voters[1].name: duplicate name "a" (first at voters[0])',
    ]);
  });

  it('does not repeat a level problem that the schema already gave', () => {
    expect(problemsOf('levels: [{key: ""}]\npartitionLevel: x\nvoters: []')).toEqual([
      'levels[0].key: must not be empty',
    ]);
  });

  it('names label keys that are no identifiers with brackets, and unknown top-level keys by themselves', () => {
    expect(problemsOf('voters: [{name: a, labels: {topology.kubernetes.io/zone: 3}}]')).toEqual([
      'voters[0].labels["topology.kubernetes.io/zone"]: must be a string',
    ]);
    expect(problemsOf('voters: []\nfailure-domains: {}')).toEqual([
      'layout["failure-domains"]: unknown key (allowed: levels, partitionLevel, expectedVoters, voters)',
    ]);
  });

  it('bounds the votes and the number of voters', () => {
    expect(problemsOf('voters: [{name: a, votes: 1e12}]')).toEqual([
      'voters[0].votes: must be <= 2147483647',
    ]);
    expect(problemsOf('expectedVoters: 100000\nvoters: []')).toEqual(['expectedVoters: must be <= 10000']);
    const many = `voters: [${Array.from({ length: 10_001 }, (_, i) => `{name: v${i}}`).join(', ')}]`;
    expect(problemsOf(many)).toEqual(['voters: must hold at most 10000 items']);
  });

  it('rejects an empty level list and an empty within', () => {
    expect(problemsOf('levels: []\nvoters: []')).toEqual(['levels: must hold at least 1 item']);
    expect(problemsOf('levels: [{key: a, within: ""}]\nvoters: []')).toEqual([
      'levels[0].within: must not be empty',
    ]);
  });
});
