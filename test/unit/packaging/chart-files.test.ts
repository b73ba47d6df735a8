import { describe, expect, it } from '@jest/globals';
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'yaml';
import { CHART_DIR, repoRoot } from './paths.js';

/** The chart's files that need no helm: CRDs in step with the generated ones, values documented and covered by the schema. */

describe('chart CRDs', () => {
  it('charts/cluster-topology/crds/ holds exactly the generated crds/, byte for byte (npm run generate writes both)', async () => {
    const generated = (await readdir(join(repoRoot, 'crds'))).filter((f) => f.endsWith('.yaml')).sort();
    const shipped = (await readdir(join(CHART_DIR, 'crds'))).sort();
    expect(shipped).toEqual(generated);
    for (const f of generated)
      expect({ f, text: await readFile(join(CHART_DIR, 'crds', f), 'utf8') }).toEqual({
        f,
        text: await readFile(join(repoRoot, 'crds', f), 'utf8'),
      });
  });
});

describe('Chart.yaml', () => {
  it('appVersion is the package version, so the default image is the code of this checkout', async () => {
    const chart = parse(await readFile(join(CHART_DIR, 'Chart.yaml'), 'utf8')) as Record<string, string>;
    const pkg = JSON.parse(await readFile(join(repoRoot, 'package.json'), 'utf8')) as { version: string };
    expect(chart).toMatchObject({ apiVersion: 'v2', name: 'cluster-topology', appVersion: pkg.version });
    expect(chart.version).toMatch(/^\d+\.\d+\.\d+$/);
  });
});

type Schema = {
  type?: string;
  properties?: Record<string, Schema>;
  additionalProperties?: boolean | Schema;
};

/** Key paths of a values object, stopping at objects the schema leaves free (Kubernetes pass-through). */
function valuePaths(v: unknown, schema: Schema | undefined, prefix: string, out: string[]): void {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return;
  for (const [k, child] of Object.entries(v)) {
    const path = prefix ? `${prefix}.${k}` : k;
    out.push(path);
    const sub = schema?.properties?.[k];
    if (sub?.properties && sub.additionalProperties === false) valuePaths(child, sub, path, out);
  }
}

describe('values.yaml and values.schema.json', () => {
  it('every key of values.yaml is described in the schema, and the schema refuses unknown keys', async () => {
    const values = parse(await readFile(join(CHART_DIR, 'values.yaml'), 'utf8')) as Record<string, unknown>;
    const schema = JSON.parse(await readFile(join(CHART_DIR, 'values.schema.json'), 'utf8')) as Schema;
    expect(schema.additionalProperties).toBe(false);
    const paths: string[] = [];
    valuePaths(values, schema, '', paths);
    const missing: string[] = [];
    for (const p of paths) {
      let s: Schema | undefined = schema;
      for (const k of p.split('.')) s = s?.properties?.[k];
      if (!s) missing.push(p);
    }
    expect(missing).toEqual([]);
    // ...and the other way: nothing in the schema that values.yaml does not show (global is helm's).
    const schemaPaths: string[] = [];
    const walk = (s: Schema, prefix: string) => {
      for (const [k, sub] of Object.entries(s.properties ?? {})) {
        const p = prefix ? `${prefix}.${k}` : k;
        if (p === 'global') continue;
        schemaPaths.push(p);
        if (sub.additionalProperties === false) walk(sub, p);
      }
    };
    walk(schema, '');
    expect(schemaPaths.filter((p) => !paths.includes(p))).toEqual([]);
  });

  it('every key in values.yaml has a comment right above it (Kubernetes fields inside resources, security contexts and probes excepted)', async () => {
    const lines = (await readFile(join(CHART_DIR, 'values.yaml'), 'utf8')).split('\n');
    const passThrough = [
      'resources',
      'podSecurityContext',
      'securityContext',
      'livenessProbe',
      'readinessProbe',
    ];
    const undocumented: string[] = [];
    const stack: { indent: number; key: string }[] = [];
    lines.forEach((line, i) => {
      const m = /^( *)([A-Za-z][\w]*):/.exec(line);
      if (!m) return;
      const indent = m[1]!.length;
      while (stack.length && stack.at(-1)!.indent >= indent) stack.pop();
      const inside = stack.some((s) => passThrough.includes(s.key));
      stack.push({ indent, key: m[2]! });
      if (inside) return;
      const prev = lines[i - 1] ?? '';
      if (!new RegExp(`^ {${indent}}# \\S`).test(prev)) undocumented.push(stack.map((s) => s.key).join('.'));
    });
    expect(undocumented).toEqual([]);
  });

  it('the defaults are least privilege and hardened', async () => {
    const v = parse(await readFile(join(CHART_DIR, 'values.yaml'), 'utf8')) as {
      scope: { namespaces: string[]; clusterWide: boolean; allowTargetNamespaces: string[] };
      operator: {
        replicas: number;
        securityContext: Record<string, unknown>;
        leaderElection: { enabled: boolean };
      };
      metrics: { serviceMonitor: { enabled: boolean } };
    };
    expect(v.scope).toEqual({ namespaces: [], clusterWide: false, allowTargetNamespaces: [] });
    expect(v.operator.replicas).toBe(2);
    expect(v.operator.leaderElection.enabled).toBe(true);
    expect(v.operator.securityContext).toMatchObject({
      runAsNonRoot: true,
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(v.metrics.serviceMonitor.enabled).toBe(false);
  });
});
