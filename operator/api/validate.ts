import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { specSchema, type JSONSchema } from './schema.js';
import { toOpenApi } from './generate.js';
import type {
  ClusterTopologySpec,
  FailureDomainLevel,
  FailureDomainsSpec,
  MembershipSpec,
  NamingSpec,
} from './types.generated.js';
import { checkFailureDomainSettings } from '../failure-domains/index.js';

/**
 * Validates a ClusterTopology spec the way the API server does (the same schema), and fills
 * the schema's defaults. The operator runs it too, because an object may come from an older
 * CRD or a client that skipped validation: a bad spec makes that topology not Ready, with the
 * field named, and leaves the others working.
 */

/** A spec with every default filled in. */
export type ResolvedSpec = Required<
  Omit<ClusterTopologySpec, 'namespace' | 'failureDomains' | 'naming' | 'membership'>
> & {
  namespace?: string;
  naming: Required<Omit<NamingSpec, 'basename'>> & { basename?: string };
  membership: Required<MembershipSpec>;
  failureDomains: FailureDomainsSpec & { levels: FailureDomainLevel[]; analysis: 'On' | 'Off' };
};

const K8S_KEYWORDS = ['x-kubernetes-validations', 'x-kubernetes-list-type', 'x-kubernetes-list-map-keys'];

export function makeAjv(): Ajv {
  const ajv = new Ajv({ allErrors: true, useDefaults: true, strict: true, allowUnionTypes: true });
  for (const k of K8S_KEYWORDS) ajv.addKeyword(k);
  ajv.addFormat('date-time', true);
  return ajv;
}

/** Adds `additionalProperties: false` everywhere: the API server prunes unknown fields, we refuse them. */
function closed(s: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...s };
  if (s.type === 'object' && s.properties) {
    out.additionalProperties = false;
    out.properties = Object.fromEntries(
      Object.entries(s.properties as Record<string, Record<string, unknown>>).map(([k, v]) => [k, closed(v)]),
    );
  }
  if (s.items) out.items = closed(s.items as Record<string, unknown>);
  return out;
}

let specValidator: ValidateFunction | undefined;
function validator(): ValidateFunction {
  specValidator ??= makeAjv().compile(closed(toOpenApi(specSchema as JSONSchema)));
  return specValidator;
}

const UNIT_MS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

/** Parses a Go duration ("10s", "1m30s", "250ms") into milliseconds; undefined if it is not one. */
export function parseDuration(text: string): number | undefined {
  const re = /([0-9]+(?:\.[0-9]+)?)(ns|us|µs|ms|s|m|h)/gy;
  let total = 0;
  let matched = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    total += Number(m[1]) * UNIT_MS[m[2]!]!;
    matched = re.lastIndex;
  }
  return matched === text.length && text.length > 0 ? total : undefined;
}

export function formatAjvErrors(errors: ErrorObject[] | null | undefined, root: string): string[] {
  return (errors ?? []).map((e) => {
    const path = root + e.instancePath.replace(/\/(\d+)/g, '[$1]').replace(/\//g, '.');
    if (e.keyword === 'additionalProperties')
      return `${path}: unknown field "${(e.params as { additionalProperty: string }).additionalProperty}"`;
    if (e.keyword === 'enum')
      return `${path}: must be one of ${(e.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}`;
    return `${path}: ${e.message ?? e.keyword}`;
  });
}

export type SpecCheck = { ok: true; spec: ResolvedSpec } | { ok: false; problems: string[] };

export function validateSpec(input: unknown): SpecCheck {
  const spec = structuredClone(input ?? {}) as Record<string, unknown>;
  const validate = validator();
  if (!validate(spec)) return { ok: false, problems: formatAjvErrors(validate.errors, 'spec') };
  const problems: string[] = [];
  if (!/\S/.test(spec.selector as string)) problems.push('spec.selector: must not be blank');
  const interval = parseDuration(spec.pollingInterval as string);
  if (interval === undefined || interval < 1000) problems.push('spec.pollingInterval: must be at least 1s');
  // within naming another level, unique keys, no cycles, partitionLevel among the levels
  for (const p of checkFailureDomainSettings(spec.failureDomains as ResolvedSpec['failureDomains']))
    problems.push(p.startsWith('spec.') ? p : `spec.failureDomains.${p}`);
  return problems.length ? { ok: false, problems } : { ok: true, spec: spec as unknown as ResolvedSpec };
}

export function pollingIntervalMs(spec: ResolvedSpec): number {
  return parseDuration(spec.pollingInterval) ?? 10_000;
}
