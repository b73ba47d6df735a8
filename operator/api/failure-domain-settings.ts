import type { FailureDomainLevel, FailureDomainsSpec } from './types.generated.js';
import { parseLabelSelector } from './label-selector.js';

/**
 * The rules a spec.failureDomains (or a layout file's settings) must follow beyond what a JSON
 * schema can say: `levels`, when given, holds at least one level; keys are non-empty and unique;
 * `within` names another level's key and the `within` links form no cycle (a domain's path must
 * end); a transport level stands alone (no `within` on it or naming it) and is not the
 * `partitionLevel`; `partitionLevel` names a level; `expectedVoters` is a non-negative integer;
 * `voters.selector` and `voters.learnerSelector` parse as label selectors. Spec validation
 * (`validate.ts`) and the analysis (`failure-domains/`) both check them.
 *
 * Every problem is one string `path: what is wrong`, paths written `levels[3].within`, so that a
 * layout file, a CRD status message and a test can all point at the offending field.
 */

type FailureDomainSettings = FailureDomainsSpec;

/** The well-known node labels, from the widest domain to the narrowest. */
export const defaultFailureDomainLevels: readonly Readonly<FailureDomainLevel>[] = Object.freeze([
  Object.freeze({ key: 'topology.kubernetes.io/region' }),
  Object.freeze({ key: 'topology.kubernetes.io/zone' }),
  Object.freeze({ key: 'kubernetes.io/hostname' }),
]);

/** The levels in effect: the configured ones, or the defaults when none are configured. */
export function effectiveLevels(settings: FailureDomainSettings | undefined): readonly FailureDomainLevel[] {
  return settings?.levels ?? defaultFailureDomainLevels;
}

/**
 * Whether `levels` are the defaults (region, zone, hostname, nothing nested or transport). The
 * CRD fills the defaults in, so levels written out exactly like them are taken as the defaults.
 */
export function isDefaultLevels(levels: readonly FailureDomainLevel[]): boolean {
  return (
    levels.length === defaultFailureDomainLevels.length &&
    levels.every(
      (l, i) =>
        l.key === defaultFailureDomainLevels[i]!.key && l.within === undefined && l.transport !== true,
    )
  );
}

export function isNonNegativeInteger(x: unknown): x is number {
  return typeof x === 'number' && Number.isSafeInteger(x) && x >= 0;
}

const quote = (s: string): string => JSON.stringify(s);

export function checkFailureDomainSettings(settings: FailureDomainSettings | undefined): string[] {
  const problems: string[] = [];
  if (settings === undefined) return problems;
  const levels = settings.levels;
  if (levels !== undefined) {
    if (!Array.isArray(levels)) problems.push('levels: must be a list');
    else if (levels.length === 0)
      problems.push('levels: must hold at least one level (omit it for the defaults)');
    else problems.push(...checkLevels(levels));
  }
  const keys = new Set(
    Array.isArray(levels) ? levels.map((l) => l?.key) : effectiveLevels(undefined).map((l) => l.key),
  );
  if (settings.partitionLevel !== undefined) {
    if (typeof settings.partitionLevel !== 'string' || !keys.has(settings.partitionLevel))
      problems.push(
        `partitionLevel: ${quote(String(settings.partitionLevel))} is not one of the levels (${[...keys].join(', ')})`,
      );
  }
  if (settings.partitionLevel !== undefined && Array.isArray(levels)) {
    const p = levels.find((l) => l?.key === settings.partitionLevel);
    if (p?.transport === true)
      problems.push(
        `partitionLevel: ${quote(settings.partitionLevel)} is a transport level; the sides of a partition are domains that hold votes`,
      );
  }
  if (settings.expectedVoters !== undefined && !isNonNegativeInteger(settings.expectedVoters))
    problems.push('expectedVoters: must be an integer >= 0');
  if (settings.analysis !== undefined && settings.analysis !== 'On' && settings.analysis !== 'Off')
    problems.push('analysis: must be On or Off');
  for (const which of ['selector', 'learnerSelector'] as const) {
    const text = settings.voters?.[which];
    if (text === undefined) continue;
    const r =
      typeof text === 'string'
        ? parseLabelSelector(text)
        : { ok: false as const, problem: 'must be a string' };
    if (!r.ok) problems.push(`voters.${which}: ${r.problem}`);
  }
  return problems;
}

function checkLevels(levels: readonly FailureDomainLevel[]): string[] {
  const problems: string[] = [];
  const firstIndex = new Map<string, number>();
  levels.forEach((level, i) => {
    if (typeof level?.key !== 'string' || level.key === '') {
      problems.push(`levels[${i}].key: must be a non-empty string`);
      return;
    }
    const seen = firstIndex.get(level.key);
    if (seen !== undefined) problems.push(`levels[${i}].key: ${quote(level.key)} is already levels[${seen}]`);
    else firstIndex.set(level.key, i);
  });
  levels.forEach((level, i) => {
    if (level?.transport === true && level.within !== undefined)
      problems.push(`levels[${i}].within: a transport level stands alone (no within)`);
    const parent = levels.find((l) => l?.key === level?.within);
    if (parent?.transport === true)
      problems.push(`levels[${i}].within: ${quote(parent.key)} is a transport level; no level is within one`);
  });
  levels.forEach((level, i) => {
    const within = level?.within;
    if (within === undefined) return;
    if (typeof within !== 'string' || !firstIndex.has(within) || within === level.key)
      problems.push(`levels[${i}].within: ${quote(String(within))} is not the key of another level`);
  });
  if (problems.length > 0) return problems;
  // Follow each level's parents; coming back to the start is a cycle, and its paths would never end.
  const byKey = new Map(levels.map((l) => [l.key, l]));
  levels.forEach((level, i) => {
    const chain = [level.key];
    let parent = level.within;
    while (parent !== undefined && !chain.includes(parent)) {
      chain.push(parent);
      parent = byKey.get(parent)?.within;
    }
    if (parent === level.key)
      problems.push(
        `levels[${i}].within: the levels are nested in a cycle (${[...chain, parent].join(' → ')})`,
      );
  });
  return problems;
}
