import { readFileSync } from 'node:fs';

import {
  parseLayout,
  type FailureDomainSettings,
  type Member,
} from '../../../operator/failure-domains/index.js';

/** The text of a fixture in test/fixtures/layouts (tests run from dist/, fixtures stay in the source tree). */
export function fixture(name: string): string {
  return readFileSync(new URL(`../../../../test/fixtures/layouts/${name}`, import.meta.url), 'utf8');
}

export function loadLayout(name: string): { members: Member[]; settings: FailureDomainSettings } {
  const r = parseLayout(fixture(name));
  if (!r.ok) throw new Error(`fixture ${name} does not parse: ${r.problems.join('; ')}`);
  return r;
}

/** A member from a compact spec: `m('etcd-1', {site: 'A'})`. */
export function m(
  name: string,
  labels: Record<string, string> | undefined,
  extra: Partial<Member> = {},
): Member {
  return { name, labels, ...extra };
}

/** Members `prefix-1..n` with one label `key`, values taken in turn from `values`. */
export function spread(prefix: string, key: string, values: readonly string[]): Member[] {
  return values.map((v, i) => m(`${prefix}-${i + 1}`, { [key]: v }));
}

export const SITE = [{ key: 'site' }];
