import { Ajv, type ValidateFunction } from 'ajv';
import { specSchema, type JSONSchema } from './schema.js';
import { toOpenApi } from './openapi.js';
import type {
  ClusterTopologySpec,
  FailureDomainLevel,
  FailureDomainsSpec,
  MembershipSpec,
  NamingSpec,
} from './types.generated.js';
import { checkFailureDomainSettings } from './failure-domain-settings.js';
import { formatSchemaErrors } from './schema-errors.js';
import { parseDuration } from './duration.js';

export { parseDuration };

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

export type SpecCheck = { ok: true; spec: ResolvedSpec } | { ok: false; problems: string[] };

export function validateSpec(input: unknown): SpecCheck {
  const spec = structuredClone(input ?? {}) as Record<string, unknown>;
  const validate = validator();
  if (!validate(spec)) return { ok: false, problems: formatSchemaErrors(validate.errors, 'spec') };
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
