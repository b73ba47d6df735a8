import { readFile, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import {
  GROUP,
  KIND,
  PLURAL,
  RELEASE_ANNOTATION,
  VERSION,
  clusterTopologySchema,
  printerColumns,
  type JSONSchema,
} from '../../operator/api/schema.js';
import { toOpenApi } from '../../operator/api/openapi.js';
import { PACKAGE_VERSION } from '../../operator/config/version.js';
import {
  MEMBER_KIND,
  MEMBER_PLURAL,
  MEMBER_SHORT_NAMES,
  memberPrinterColumns,
  memberSchema,
} from '../../operator/api/member-schema.js';

/**
 * Generates, from `operator/api/schema.ts` and `member-schema.ts`, the CRDs and the TypeScript types. `npm run generate`
 * writes them; the unit test `api/generated.test` fails when the checked-in copies drift.
 */

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
export const CRD_PATH = join(repoRoot, 'crds', `${PLURAL}.${GROUP}.yaml`);
/** The Helm chart carries the same CRD (helm installs a chart's crds/ first). */
export const CHART_CRD_PATH = join(repoRoot, 'charts', 'cluster-topology', 'crds', `${PLURAL}.${GROUP}.yaml`);
export const MEMBER_CRD_PATH = join(repoRoot, 'crds', `${MEMBER_PLURAL}.${GROUP}.yaml`);
export const CHART_MEMBER_CRD_PATH = join(
  repoRoot,
  'charts',
  'cluster-topology',
  'crds',
  `${MEMBER_PLURAL}.${GROUP}.yaml`,
);
/** Every CRD the project defines, in the order they are applied. */
export const CRD_PATHS = [CRD_PATH, MEMBER_CRD_PATH];
export const TYPES_PATH = join(repoRoot, 'operator', 'api', 'types.generated.ts');

interface CrdDefinition {
  kind: string;
  plural: string;
  shortNames: string[];
  categories?: string[];
  /** A status subresource: status written only through /status. */
  statusSubresource: boolean;
  printerColumns: Record<string, unknown>[];
  schema: JSONSchema;
}

function crdOf(d: CrdDefinition): Record<string, unknown> {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${d.plural}.${GROUP}`, annotations: { [RELEASE_ANNOTATION]: PACKAGE_VERSION } },
    spec: {
      group: GROUP,
      names: {
        kind: d.kind,
        listKind: `${d.kind}List`,
        plural: d.plural,
        singular: d.kind.toLowerCase(),
        shortNames: d.shortNames,
        ...(d.categories ? { categories: d.categories } : {}),
      },
      scope: 'Namespaced',
      versions: [
        {
          name: VERSION,
          served: true,
          storage: true,
          ...(d.statusSubresource ? { subresources: { status: {} } } : {}),
          additionalPrinterColumns: d.printerColumns,
          schema: { openAPIV3Schema: toOpenApi(d.schema) },
        },
      ],
    },
  };
}

export function crdObject(): Record<string, unknown> {
  return crdOf({
    kind: KIND,
    plural: PLURAL,
    shortNames: ['ctopo', 'ct'],
    categories: ['all'],
    statusSubresource: true,
    printerColumns,
    schema: clusterTopologySchema,
  });
}

/** Member reports: no status subresource, so one request writes a whole report (member-schema.ts). */
export function memberCrdObject(): Record<string, unknown> {
  return crdOf({
    kind: MEMBER_KIND,
    plural: MEMBER_PLURAL,
    shortNames: MEMBER_SHORT_NAMES,
    statusSubresource: false,
    printerColumns: memberPrinterColumns,
    schema: memberSchema,
  });
}

// Each file opens its own document: `helm show crds` joins the files as they are, and without the
// marker kubectl read the two CRDs as one (the member CRD's keys won; the other was never applied).
const render = (crd: Record<string, unknown>, source: string): string =>
  `---\n# Generated from operator/api/${source} by \`npm run generate\`. Do not edit.\n` +
  stringify(crd, { lineWidth: 0, version: '1.1' });

export function renderCrd(): string {
  return render(crdObject(), 'schema.ts');
}

export function renderMemberCrd(): string {
  return render(memberCrdObject(), 'member-schema.ts');
}

function tsType(s: JSONSchema, named: Map<string, string>, indent: string): string {
  if (s.enum) return s.enum.map((e) => JSON.stringify(e)).join(' | ');
  switch (s.type) {
    case 'string':
      return 'string';
    case 'integer':
    case 'number':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'array':
      return `${wrap(tsType(s.items ?? {}, named, indent))}[]`;
    case 'object': {
      if (!s.properties) return 'Record<string, unknown>';
      if (s['x-ts-type']) {
        named.set(s['x-ts-type'], objectBody(s, named, '  '));
        return s['x-ts-type'];
      }
      return objectBody(s, named, indent + '  ');
    }
    default:
      return 'unknown';
  }
}

const wrap = (t: string) => (t.includes('|') ? `(${t})` : t);

function objectBody(s: JSONSchema, named: Map<string, string>, indent: string): string {
  const req = new Set(s.required ?? []);
  const lines = Object.entries(s.properties ?? {}).map(([k, v]) => {
    const doc = v.description ? `${indent}/** ${v.description.replace(/\*\//g, '*\\/')} */\n` : '';
    return `${doc}${indent}${k}${req.has(k) ? '' : '?'}: ${tsType(v, named, indent)};`;
  });
  return `{\n${lines.join('\n')}\n${indent.slice(2)}}`;
}

export function renderTypes(): string {
  const named = new Map<string, string>();
  tsType(clusterTopologySchema.properties!.spec!, named, '');
  tsType(clusterTopologySchema.properties!.status!, named, '');
  tsType(memberSchema.properties!.spec!, named, '');
  tsType(memberSchema.properties!.status!, named, '');
  const decls = [...named.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, body]) => `export interface ${name} ${body}`);
  return [
    '// Generated from operator/api/schema.ts and member-schema.ts by `npm run generate`. Do not edit.',
    '',
    decls.join('\n\n'),
    '',
  ].join('\n');
}

async function writeIfChanged(path: string, text: string): Promise<boolean> {
  const old = await readFile(path, 'utf8').catch(() => '');
  if (old === text) return false;
  await writeFile(path, text);
  return true;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const changed = [
    (await writeIfChanged(CRD_PATH, renderCrd())) && CRD_PATH,
    (await writeIfChanged(CHART_CRD_PATH, renderCrd())) && CHART_CRD_PATH,
    (await writeIfChanged(MEMBER_CRD_PATH, renderMemberCrd())) && MEMBER_CRD_PATH,
    (await writeIfChanged(CHART_MEMBER_CRD_PATH, renderMemberCrd())) && CHART_MEMBER_CRD_PATH,
    (await writeIfChanged(TYPES_PATH, renderTypes())) && TYPES_PATH,
  ].filter(Boolean);
  console.log(changed.length ? `wrote ${changed.join(', ')}` : 'generated files are up to date');
}
