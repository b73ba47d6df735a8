import { Ajv, type ErrorObject } from 'ajv';
import { parseDocument } from 'yaml';

import { checkFailureDomainSettings } from '../api/failure-domain-settings.js';
import type { FailureDomainLevel, FailureDomainSettings, Member } from './types.js';

/**
 * A layout file: the "on paper" method. Write down every voter and what it shares, then
 * let the analysis remove each shared thing and recount.
 *
 * ```yaml
 * levels: [{key: site}, {key: hypervisor}, {key: host}, {key: vpn, transport: true}]   # as spec.failureDomains.levels
 * partitionLevel: site                                    # optional
 * expectedVoters: 3                                       # optional
 * voters:
 *   - {name: etcd-1, labels: {site: A, hypervisor: hv-1, host: vm-1}}   # votes 1, ready true
 *   - {name: etcd-2, labels: {site: A, hypervisor: hv-1, host: vm-2}, votes: 1, ready: true}
 * ```
 *
 * The text is YAML or JSON (one document). Nothing unknown is accepted: every key outside the
 * schema, a missing or empty name, a name used twice, a vote count that is not an integer ≥ 0,
 * a label value that is not a string, a `within` that names no other level, nested levels that
 * form a cycle, a `partitionLevel` that is not a level — each is one problem that names its path
 * (`voters[2].votes: must be >= 0`). All problems are reported at once. `levels` may be omitted
 * (the well-known node labels then apply), `voters` may be empty (the verdict is then NoVoters,
 * unless `expectedVoters` adds some), a voter without `labels` has unknown placement.
 */
export type LayoutParseResult =
  { ok: true; members: Member[]; settings: FailureDomainSettings } | { ok: false; problems: string[] };

/** Generous for any real cluster; it bounds the work an accidental or hostile file can cause. */
export const LAYOUT_MAX_VOTERS = 10_000;
const MAX_VOTES = 2_147_483_647;

const layoutSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['voters'],
  properties: {
    levels: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['key'],
        properties: {
          key: { type: 'string', minLength: 1 },
          within: { type: 'string', minLength: 1 },
          transport: { type: 'boolean' },
        },
      },
    },
    partitionLevel: { type: 'string', minLength: 1 },
    expectedVoters: { type: 'integer', minimum: 0, maximum: LAYOUT_MAX_VOTERS },
    voters: {
      type: 'array',
      maxItems: LAYOUT_MAX_VOTERS,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['name'],
        properties: {
          name: { type: 'string', minLength: 1 },
          labels: { type: 'object', additionalProperties: { type: 'string' } },
          votes: { type: 'integer', minimum: 0, maximum: MAX_VOTES },
          ready: { type: 'boolean' },
        },
      },
    },
  },
} as const;

// Compiled once: the validator is a pure function of its input.
const validate = new Ajv({ allErrors: true, strict: true, verbose: true }).compile(layoutSchema);

export function parseLayout(text: string): LayoutParseResult {
  const doc = parseDocument(text, { uniqueKeys: true, prettyErrors: true });
  const syntax = [...doc.errors, ...doc.warnings].map(
    (e) => `layout: not valid YAML or JSON: ${firstLine(e.message)}`,
  );
  if (syntax.length > 0) return { ok: false, problems: syntax };
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: 100 });
  } catch (e) {
    return { ok: false, problems: [`layout: cannot be read: ${(e as Error).message}`] };
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data))
    return {
      ok: false,
      problems: ['layout: must be a map with voters (and optionally levels, partitionLevel, expectedVoters)'],
    };

  const problems = validate(data) ? [] : unique((validate.errors ?? []).map(describe));
  problems.push(...semanticProblems(data as Record<string, unknown>, problems));
  if (problems.length > 0) return { ok: false, problems };

  const layout = data as unknown as Layout;
  const settings: FailureDomainSettings = {};
  if (layout.levels !== undefined)
    settings.levels = layout.levels.map((l) => ({
      key: l.key,
      ...(l.within !== undefined ? { within: l.within } : {}),
      ...(l.transport !== undefined ? { transport: l.transport } : {}),
    }));
  if (layout.partitionLevel !== undefined) settings.partitionLevel = layout.partitionLevel;
  if (layout.expectedVoters !== undefined) settings.expectedVoters = layout.expectedVoters;
  const members = layout.voters.map((v) => {
    const m: Member = { name: v.name, labels: v.labels === undefined ? undefined : { ...v.labels } };
    if (v.votes !== undefined) m.votes = v.votes;
    if (v.ready !== undefined) m.ready = v.ready;
    return m;
  });
  return { ok: true, members, settings };
}

interface Layout {
  levels?: FailureDomainLevel[];
  partitionLevel?: string;
  expectedVoters?: number;
  voters: { name: string; labels?: Record<string, string>; votes?: number; ready?: boolean }[];
}

/**
 * What the schema cannot say. Runs on whatever parts are well-formed, so that one file shows
 * all its problems; parts the schema already rejected are skipped rather than reported twice.
 */
function semanticProblems(data: Record<string, unknown>, schemaProblems: readonly string[]): string[] {
  const problems: string[] = [];
  const voters = Array.isArray(data.voters) ? data.voters : [];
  const firstByName = new Map<string, number>();
  voters.forEach((v: unknown, i) => {
    const name = (v as { name?: unknown } | null)?.name;
    if (typeof name !== 'string' || name === '') return;
    const first = firstByName.get(name);
    if (first === undefined) firstByName.set(name, i);
    else
      problems.push(`voters[${i}].name: duplicate name ${JSON.stringify(name)} (first at voters[${first}])`);
  });

  const settingsShapeOk = !schemaProblems.some((p) => /^(levels|partitionLevel)[[:]/.test(p));
  if (settingsShapeOk) {
    const settings: FailureDomainSettings = {};
    if (data.levels !== undefined) settings.levels = data.levels as FailureDomainLevel[];
    if (typeof data.partitionLevel === 'string') settings.partitionLevel = data.partitionLevel;
    // expectedVoters is the schema's alone; the rest is settings validation shared with the CRD.
    problems.push(...checkFailureDomainSettings(settings));
  }
  return problems;
}

function describe(e: ErrorObject): string {
  const at = pathOf(e.instancePath);
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'additionalProperties': {
      const key = String(p.additionalProperty);
      const allowed = Object.keys((e.parentSchema as { properties?: object } | undefined)?.properties ?? {});
      return `${join(at, key)}: unknown key${allowed.length > 0 ? ` (allowed: ${allowed.join(', ')})` : ''}`;
    }
    case 'required':
      return `${join(at, String(p.missingProperty))}: is required`;
    case 'type':
      return `${at}: must be ${article(String(p.type))}`;
    case 'minLength':
      return `${at}: must not be empty`;
    case 'minItems':
      return `${at}: must hold at least ${String(p.limit)} item${p.limit === 1 ? '' : 's'}`;
    case 'maxItems':
      return `${at}: must hold at most ${String(p.limit)} items`;
    default:
      return `${at}: ${e.message ?? 'is invalid'}`;
  }
}

function article(type: string): string {
  const noun = { object: 'map', array: 'list' }[type] ?? type;
  return /^[aeiou]/.test(noun) ? `an ${noun}` : `a ${noun}`;
}

/** `/voters/2/labels/topology.kubernetes.io~1zone` → `voters[2].labels["topology.kubernetes.io/zone"]`. */
function pathOf(pointer: string): string {
  if (pointer === '') return 'layout';
  return pointer
    .split('/')
    .slice(1)
    .map((seg) => seg.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((acc, seg) => (acc === '' ? seg : join(acc, seg)), '');
}

function join(path: string, seg: string): string {
  if (/^\d+$/.test(seg)) return `${path}[${seg}]`;
  const plain = /^[A-Za-z_][A-Za-z0-9_]*$/.test(seg);
  if (path === 'layout') return plain ? seg : `layout[${JSON.stringify(seg)}]`;
  return plain ? `${path}.${seg}` : `${path}[${JSON.stringify(seg)}]`;
}

function firstLine(s: string): string {
  return s.split('\n')[0]!.replace(/:$/, '');
}

function unique(xs: readonly string[]): string[] {
  return [...new Set(xs)];
}
