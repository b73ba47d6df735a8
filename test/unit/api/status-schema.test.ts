import { describe, expect, it } from '@jest/globals';
import { readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { statusSchema, type JSONSchema } from '../../../operator/api/schema.js';
import { analyzeFailureDomains, analyzePeers, parseLayout } from '../../../operator/failure-domains/index.js';
import { resolvePeers } from '../../../operator/naming/index.js';

/**
 * The API server silently prunes status fields its schema does not declare. The operator
 * compares what it computes with what it reads back, so an undeclared field would be lost to
 * users AND make the operator rewrite the status forever. Every path the engines produce must
 * be declared.
 */
const fixtures = join(
  resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..'),
  'test',
  'fixtures',
);

function undeclared(value: unknown, schema: JSONSchema | undefined, path: string, out: string[]): void {
  if (!schema) {
    out.push(path);
    return;
  }
  if (Array.isArray(value)) value.forEach((v, i) => undeclared(v, schema.items, `${path}[${i}]`, out));
  else if (value && typeof value === 'object') {
    if (schema.type !== 'object' || !schema.properties) return void out.push(path);
    for (const [k, v] of Object.entries(value))
      if (v !== undefined) undeclared(v, schema.properties[k], `${path}.${k}`, out);
  }
}

describe('status schema covers everything the operator writes', () => {
  it('declares every field of the failure-domain analysis (rich layouts: within, learners, unknowns, partition)', async () => {
    for (const file of ['two-sites.yaml', 'three-sites.yaml', 'two-sites-vpn.yaml']) {
      const layout = parseLayout(await readFile(join(fixtures, 'layouts', file), 'utf8'));
      if (!layout.ok) throw new Error(layout.problems.join('; '));
      const members = [
        ...layout.members,
        ...Array.from({ length: 25 }, (_, i) => ({
          name: `unplaced-${i}`,
          labels: undefined,
          ready: i % 2 === 0,
        })),
      ];
      const analysis = analyzeFailureDomains(members, {
        ...layout.settings,
        expectedVoters: members.length + 2,
      });
      const missing: string[] = [];
      undeclared(analysis, statusSchema.properties!.failureDomains, 'status.failureDomains', missing);
      expect(missing).toEqual([]);
    }
  });

  it('declares the fields of declared voters, nested placement and the default levels', () => {
    const analysis = analyzePeers(
      [
        {
          name: 'a',
          nodeLabels: { zone: 'z1', rack: 'r1' },
          ready: true,
          podLabels: { ra: 'v' },
          votes: '2',
        },
        { name: 'b', nodeLabels: { zone: 'z2', rack: 'r2' }, ready: true, podLabels: { ra: 'v' } },
        { name: 'c', nodeLabels: { rack: 'r1' }, ready: true, podLabels: { ra: 'v' }, votes: 'x' },
        { name: 'l', nodeLabels: { zone: 'z1', rack: 'r1' }, ready: true, podLabels: { ra: 'l' } },
        { name: 'w', nodeLabels: undefined, ready: true, podLabels: {} },
      ],
      {
        levels: [{ key: 'zone' }, { key: 'rack', within: 'zone' }, { key: 'host' }],
        voters: { selector: 'ra', learnerSelector: 'ra=l' },
      },
    );
    const shared = analyzePeers(
      [1, 2, 3].map((i) => ({
        name: `e${i}`,
        nodeLabels: { 'topology.kubernetes.io/region': 'r', 'kubernetes.io/hostname': `h${i}` },
        ready: true,
      })),
      {},
    );
    for (const a of [analysis, shared]) {
      const missing: string[] = [];
      undeclared(a, statusSchema.properties!.failureDomains, 'status.failureDomains', missing);
      expect(missing).toEqual([]);
    }
    for (const field of ['ignoredPeers', 'mayAlsoHold', 'sharedDomain', 'isolations'])
      expect(JSON.stringify([analysis, shared])).toContain(`"${field}"`);
  });

  it('declares every field of peers and exclusions', () => {
    const pods = [
      {
        metadata: { name: 'a', uid: 'u1', deletionTimestamp: '2026-01-01T00:00:00Z' },
        spec: { nodeName: 'n' },
        status: { podIP: '10.0.0.1' },
      },
      { metadata: { name: 'b', uid: 'u2' }, status: {} },
    ];
    const r = resolvePeers(pods);
    expect(r.peers).toHaveLength(1);
    expect(r.excluded).toHaveLength(1);
    const missing: string[] = [];
    undeclared(r.peers, statusSchema.properties!.peers, 'status.peers', missing);
    undeclared(r.excluded, statusSchema.properties!.excluded, 'status.excluded', missing);
    expect(missing).toEqual([]);
  });
});
