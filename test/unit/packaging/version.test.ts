import { describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { CHART_DIR, repoRoot } from './paths.js';

/**
 * One version number, kept in package.json: every other place that states it says the same
 * (tools/release/version.mjs writes them; this reads each on its own). And one licence, declared
 * wherever a package format has a field for it.
 */

const read = (f: string) => readFileSync(join(repoRoot, f), 'utf8');
/** The OTP library's folder. */
const lib = 'clients/cluster_topology';
const pkg = JSON.parse(read('package.json')) as {
  version: string;
  license: string;
  scripts: Record<string, string>;
};
const version = pkg.version;

/** Every file git tracks that is text a user reads or a build takes (not the lock, not go.sum). */
const tracked = execFileSync('git', ['ls-files'], { cwd: repoRoot, encoding: 'utf8' })
  .split('\n')
  .filter((f) => /\.(md|ya?ml|json|exs|src|txt|tpl|sh|mjs)$|(^|\/)Dockerfile$/.test(f))
  .filter((f) => !/package-lock\.json$|^tools\/.*\/go\.(mod|sum)$|^BENCHMARKS\.md$/.test(f));

describe('the version', () => {
  it('package.json holds a release version, X.Y.Z', () => {
    expect(version).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it('package-lock.json names the same version (npm version writes both)', () => {
    const lock = JSON.parse(read('package-lock.json')) as {
      version: string;
      packages: Record<string, { version?: string }>;
    };
    expect({ top: lock.version, root: lock.packages['']?.version }).toEqual({ top: version, root: version });
  });

  it('the chart: version and appVersion', () => {
    const chart = parse(readFileSync(join(CHART_DIR, 'Chart.yaml'), 'utf8')) as Record<string, unknown>;
    expect({ version: chart.version, appVersion: chart.appVersion }).toEqual({
      version,
      appVersion: version,
    });
  });

  it('the generated CRDs name the release they come from (ctopo check compares it with its own)', () => {
    const crds = tracked.filter((f) => /^(charts\/cluster-topology\/)?crds\/.*\.yaml$/.test(f));
    expect(crds.length).toBeGreaterThanOrEqual(2);
    for (const f of crds) {
      const crd = parse(read(f)) as { metadata: { annotations?: Record<string, string> } };
      expect({ f, release: crd.metadata.annotations?.['cluster.netzlive.io/release'] }).toEqual({
        f,
        release: version,
      });
    }
  });

  it("the OTP library: the .app.src's vsn and mix.exs's version", () => {
    expect(/\{vsn, "([^"]*)"\}/.exec(read(`${lib}/src/cluster_topology.app.src`))?.[1]).toBe(version);
    expect(/^\s*version: "([^"]*)"/m.exec(read(`${lib}/mix.exs`))?.[1]).toBe(version);
  });

  it('the image tag, the package tarball, the release directory and the git tag, wherever a tracked file quotes them', () => {
    const quoted =
      /(ghcr\.io\/netzlive\/cluster-topology:|\bcluster-topology[-:]|cluster_topology-|release\/|tag: "v|\{tag, "v)(\d+\.\d+\.\d+)\b/g;
    const other: string[] = [];
    let seen = 0;
    for (const f of tracked)
      for (const m of read(f).matchAll(quoted)) {
        seen++;
        if (m[2] !== version) other.push(`${f}: ${m[0]}`);
      }
    expect(other).toEqual([]);
    expect(seen).toBeGreaterThan(5); // the examples' images, the Dockerfile, the docs' artifact names
  });

  it('CHANGELOG.md has a section for it, in the Keep a Changelog form', () => {
    const log = read('CHANGELOG.md');
    expect(log).toMatch(/^# Changelog$/m);
    expect(log).toMatch(/^## \[Unreleased\]$/m);
    expect(log).toMatch(
      new RegExp(`^## \\[${version.replace(/\./g, '\\.')}\\] - \\d{4}-\\d{2}-\\d{2}$`, 'm'),
    );
    // Newest first: [Unreleased], then this version, then older ones.
    const heads = [...log.matchAll(/^## \[([^\]]+)\]/gm)].map((m) => m[1]);
    expect(heads.slice(0, 2)).toEqual(['Unreleased', version]);
  });

  it('`npm version X` writes the other places too (the version script)', () => {
    expect(pkg.scripts.version).toMatch(/tools\/release\/version\.mjs/);
  });
});

describe('the licence', () => {
  it('LICENSE holds the Apache License 2.0, and package.json says so', () => {
    const text = read('LICENSE');
    expect(text).toMatch(/Apache License\s+Version 2\.0, January 2004/);
    expect(text).toMatch(/END OF TERMS AND CONDITIONS/);
    expect(pkg.license).toBe('Apache-2.0');
  });

  it('the chart, the .app.src and mix.exs declare it', () => {
    const chart = parse(readFileSync(join(CHART_DIR, 'Chart.yaml'), 'utf8')) as {
      annotations?: Record<string, string>;
    };
    expect(chart.annotations?.['artifacthub.io/license']).toBe('Apache-2.0');
    expect(read(`${lib}/src/cluster_topology.app.src`)).toMatch(/\{licenses, \["Apache-2\.0"\]\}/);
    expect(read(`${lib}/mix.exs`)).toMatch(/licenses: \["Apache-2\.0"\]/);
  });
});
