import { readFile, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  EXCLUSION_REASONS,
  printerColumns,
  specSchema,
  statusSchema,
  type JSONSchema,
} from '../../operator/api/schema.js';
import {
  memberPrinterColumns,
  memberSpecSchema,
  memberStatusSchema,
} from '../../operator/api/member-schema.js';
import { operatorMetrics } from '../../operator/observability/operator-metrics.js';
import { agentMetrics } from '../../operator/agent/metrics.js';
import { commands } from '../../operator/cli/commands/index.js';
import type { CommandEntry } from '../../operator/cli/program.js';
import { devCommands } from '../commands/index.js';

/**
 * `docs/reference.md`, generated from what the code defines — the resource's schema, the CLI's
 * commands and the metrics registries — so the reference cannot drift from the code
 * (`npm run generate` writes it; a unit test fails when the checked-in copy differs).
 */

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
export const REFERENCE_PATH = join(repoRoot, 'docs', 'reference.md');

/** What each exclusion reason means. Typed by the reason list, so a new reason needs its line. */
export const EXCLUSION_REASON_DOCS: Record<(typeof EXCLUSION_REASONS)[number], string> = {
  NoPodIP:
    'The pod has no IP yet (not scheduled or not started). This holds with a hostname annotation and the DNS fallbacks too: a pod without an IP cannot be reached by any name.',
  PodFinished: 'The pod has Succeeded or Failed; it will not run again.',
  InvalidJSONPath: 'A naming annotation is not a usable JSONPath (syntax, or outside the accepted subset).',
  NoMatch: 'A naming annotation matched nothing in this pod.',
  AmbiguousMatch: 'A naming annotation matched several distinct values.',
  NotAString: 'A naming annotation matched a value that is not a string.',
  InvalidNodeName: 'The computed name is not a valid Erlang node name (name@host).',
  DuplicateNodeName:
    'Several pods computed the same node name. If exactly one of them is not terminating, it is the peer and the terminating ones are excluded; otherwise all of them are excluded.',
  ExpressionTooCostly:
    'A naming annotation needs more than the evaluation step budget against this pod (for example a search with .. over a large pod); simplify it.',
  NoNamespace:
    'naming.hostFallback PodDNS or Hostname, and the pod has no metadata.namespace (only pods read from a file lack it).',
  NoSubdomain:
    'naming.hostFallback Hostname, no hostname annotation, and the pod has no spec.subdomain (a StatefulSet sets it from serviceName).',
  PodTerminating: 'membership.terminating is Drop and the pod is being deleted.',
  PodNotReady: "membership.peers is Ready and the pod's Ready condition is not True.",
};

const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');

function typeOf(s: JSONSchema): string {
  if (s.enum) return s.enum.map((v) => `\`${String(v)}\``).join(' \\| ');
  if (s.type === 'array') return `${s.items ? typeOf(s.items) : 'any'}[]`;
  return String(s.type ?? 'any');
}

/** One row per field, depth first, with its dotted path. */
function fieldRows(s: JSONSchema, path: string, out: string[]): void {
  const req = new Set(s.required ?? []);
  for (const [name, f] of Object.entries(s.properties ?? {})) {
    const p = path ? `${path}.${name}` : name;
    const def = f.default !== undefined ? `\`${JSON.stringify(f.default)}\`` : '';
    out.push(
      `| \`${p}\` | ${cell(typeOf(f))} | ${req.has(name) ? 'yes' : ''} | ${def} | ${cell(f.description ?? '')} |`,
    );
    const inner = f.type === 'array' ? f.items : f;
    if (inner?.properties) fieldRows(inner, f.type === 'array' ? `${p}[]` : p, out);
  }
}

function fieldTable(title: string, s: JSONSchema, path: string): string {
  const rows: string[] = [];
  fieldRows(s, path, rows);
  return [
    `## ${title}`,
    '',
    '| field | type | required | default | meaning |',
    '| --- | --- | --- | --- | --- |',
    ...rows,
  ].join('\n');
}

async function metricsTable(
  title: string,
  registry: { getMetricsAsJSON(): Promise<Array<{ name: string; help: string; type: unknown }>> },
  prefix: string,
): Promise<string> {
  const all = await registry.getMetricsAsJSON();
  // The process figures (`PREFIXprocess_…`, `PREFIXnodejs_…`) are named in one line below.
  const process = (name: string) =>
    name.startsWith(`${prefix}process_`) || name.startsWith(`${prefix}nodejs_`);
  const ours = all.filter((m) => !process(m.name)).sort((a, b) => a.name.localeCompare(b.name));
  const figures = all
    .filter((m) => process(m.name))
    .map((m) => `\`${m.name.slice(prefix.length)}\``)
    .sort();
  return [
    `### ${title}`,
    '',
    '| metric | type | meaning |',
    '| --- | --- | --- |',
    ...ours.map((m) => `| \`${m.name}\` | ${String(m.type)} | ${cell(m.help)} |`),
    '',
    `Plus the process's own figures, prefixed \`${prefix}\`: ${figures.join(', ')}.`,
  ].join('\n');
}

type Column = { name: string; jsonPath: string; description?: string; priority?: number };

const columnRows = (columns: readonly Column[]) =>
  columns.map(
    (c) =>
      `| ${c.name.toUpperCase()} | \`${cell(c.jsonPath)}\`${c.description ? ` — ${cell(c.description)}` : ''} | ${c.priority ? 'yes' : ''} |`,
  );

export async function renderReference(): Promise<string> {
  // One command at a time: jest's module linker fails on concurrent dynamic imports of one graph.
  const parts = [
    '# Reference',
    '',
    '<!-- Generated by `npm run generate` from the schema, the CLI and the metrics. Do not edit. -->',
    '',
    'Every field of the `ClusterTopology` and `ClusterTopologyMember` resources (`cluster.netzlive.io/v1alpha1`), every exclusion',
    'reason, metric and command-line flag. How readers use the status: [status-protocol.md](status-protocol.md).',
    '',
    fieldTable('Spec', specSchema, 'spec'),
    '',
    fieldTable('Status', statusSchema, 'status'),
    '',
    '## Columns of `kubectl get clustertopology`',
    '',
    '| column | shows | only with `-o wide` |',
    '| --- | --- | --- |',
    ...columnRows(printerColumns),
    '',
    '## ClusterTopologyMember',
    '',
    'One report per member pod (`kubectl get ctm`), written by its own reader; no status subresource.',
    'What it means and how it is written: [status-protocol.md §8](status-protocol.md#8-member-reports).',
    '',
    fieldTable('Member spec', memberSpecSchema, 'spec').replace(/^## /, '### '),
    '',
    fieldTable('Member status', memberStatusSchema, 'status').replace(/^## /, '### '),
    '',
    '### Columns of `kubectl get clustertopologymember`',
    '',
    '| column | shows | only with `-o wide` |',
    '| --- | --- | --- |',
    ...columnRows(memberPrinterColumns),
    '',
    '## Exclusion reasons',
    '',
    'Every selected pod that is not a peer is in `status.excluded` with one of these reasons and a',
    'message that says what to change.',
    '',
    '| reason | meaning |',
    '| --- | --- |',
    ...EXCLUSION_REASONS.map((r) => `| \`${r}\` | ${cell(EXCLUSION_REASON_DOCS[r])} |`),
    '',
    '## Metrics',
    '',
    await metricsTable(
      'Operator (`ctopo operator`, /metrics)',
      operatorMetrics().registry,
      'ctopo_operator_',
    ),
    '',
    await metricsTable('Agent (`ctopo agent`, /metrics)', agentMetrics().registry, 'ctopo_agent_'),
    '',
    '## Commands',
    '',
    'Also runs as the kubectl plugin `kubectl ctopo` (a `kubectl-ctopo` file on PATH; needs Node.js ≥ 22.19).',
    '',
    ...(await commandSections(commands, (name) => `ctopo ${name}`)),
    '## Development tools',
    '',
    'In a clone of the repository only (the npm package and the image leave them out): `npm run demo` and `npm run dev-cluster` build first, `npm run ctopo-dev -- <command>` runs what is built (CONTRIBUTING.md).',
    '',
    ...(await commandSections(devCommands, (name) => `npm run ${name}`)),
  ];
  return (
    parts
      .join('\n')
      .replace(/\n{3,}/g, '\n\n')
      .trimEnd() + '\n'
  );
}

/** Each command's help, loaded one after the other (jest's ESM loader trips over parallel imports). */
async function commandSections(
  entries: readonly CommandEntry[],
  heading: (name: string) => string,
): Promise<string[]> {
  const out: string[] = [];
  for (const c of entries) {
    const { help } = await c.load();
    out.push(`### \`${heading(c.name)}\``, '', c.summary, '', '```text', help, '```', '');
  }
  return out;
}

/** The long flags a help text names (`--no-foo` and `--[no-]foo` count as `foo`). */
export function flagsInHelp(help: string): Set<string> {
  const found = new Set<string>();
  for (const m of help.matchAll(/(?<![\w-])--(?:no-|\[no-\])?([a-z][a-z0-9-]*)/g)) found.add(m[1]!);
  return found;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const text = await renderReference();
  const old = await readFile(REFERENCE_PATH, 'utf8').catch(() => '');
  if (old !== text) await writeFile(REFERENCE_PATH, text);
  console.log(old === text ? 'docs/reference.md is up to date' : `wrote ${REFERENCE_PATH}`);
}
