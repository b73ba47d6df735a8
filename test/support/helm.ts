import { execFile } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { ensureBinaries } from '../../dev/cluster/binaries.js';
import type { RunResult } from './cluster.js';

/** The real helm (built from Go modules and cached like the control plane), run on the chart in charts/. */

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
export const CHART_DIR = join(repoRoot, 'charts', 'cluster-topology');
export const EXAMPLES_DIR = join(repoRoot, 'examples');

let helmPath: Promise<string> | undefined;
let helmHome: Promise<string> | undefined;

export function helmBinary(): Promise<string> {
  helmPath ??= ensureBinaries((l) => process.stderr.write(`[helm] ${l}\n`), { withHelm: true }).then(
    (b) => b.helm!,
  );
  return helmPath;
}

/** Runs helm with its cache/config/data in a directory of the run's own (never ~/.config/helm). Never throws on exit code. */
export async function helm(
  args: string[],
  opts: { kubeconfig?: string; timeoutMs?: number } = {},
): Promise<RunResult> {
  const bin = await helmBinary();
  helmHome ??= mkdtemp(join(tmpdir(), 'ctopo-helm-'));
  const home = await helmHome;
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    HELM_CACHE_HOME: join(home, 'cache'),
    HELM_CONFIG_HOME: join(home, 'config'),
    HELM_DATA_HOME: join(home, 'data'),
    ...(opts.kubeconfig ? { KUBECONFIG: opts.kubeconfig } : {}),
  };
  return new Promise((ok) =>
    execFile(
      bin,
      [...args, ...(opts.kubeconfig ? ['--kubeconfig', opts.kubeconfig] : [])],
      { env, timeout: opts.timeoutMs ?? 120_000, maxBuffer: 64 * 1024 * 1024 },
      (err, stdout, stderr) =>
        ok({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
    ),
  );
}

export async function helmOk(
  args: string[],
  opts: { kubeconfig?: string; timeoutMs?: number } = {},
): Promise<string> {
  const r = await helm(args, opts);
  if (r.code !== 0) throw new Error(`helm ${args.join(' ')} failed (${r.code}): ${r.stderr}`);
  return r.stdout;
}

/** A Kubernetes object as rendered (only what the tests look at is typed). */
export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [key: string]: unknown;
}

/** `helm template` of the chart with `--set`-style values; the objects, parsed. */
export async function renderChart(
  release: string,
  namespace: string,
  sets: string[] = [],
  extra: string[] = [],
): Promise<K8sObject[]> {
  const out = await helmOk([
    'template',
    release,
    CHART_DIR,
    '--namespace',
    namespace,
    ...sets.flatMap((v) => ['--set', v]),
    ...extra,
  ]);
  return parseManifests(out);
}

export function parseManifests(text: string): K8sObject[] {
  return parseAllDocuments(text)
    .map((d) => d.toJS() as K8sObject | null)
    .filter((o): o is K8sObject => !!o && typeof o === 'object' && 'kind' in o);
}

export const find = (objs: K8sObject[], kind: string, name?: string, namespace?: string) =>
  objs.filter(
    (o) =>
      o.kind === kind &&
      (name === undefined || o.metadata.name === name) &&
      (namespace === undefined || o.metadata.namespace === namespace),
  );
