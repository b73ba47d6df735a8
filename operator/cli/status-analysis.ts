import type { FailureDomainsResult } from '../failure-domains/index.js';
import { isRecord } from '../api/json.js';

/**
 * Reads `status.failureDomains` as the operator wrote it: the API's own type, checked, not
 * rebuilt. An analysis carries every field the analysis always sets (the CRD requires them of
 * each level, domain and link); `{verdict: Off}` is the whole status when the analysis is off.
 * A status that lacks them (written by an older operator) or carries a verdict this ctopo does
 * not know is refused with a reason, so `ctopo analyze` says it could not analyse instead of
 * printing a table with holes. Pure.
 */
export type StatusAnalysis = { ok: true; analysis: FailureDomainsResult } | { ok: false; problem: string };

const VERDICTS = new Set(['Survives', 'Breaks', 'AtRisk', 'NoVoters', 'Off']);
const NUMBERS = [
  'voters',
  'votingWeight',
  'learners',
  'quorum',
  'faultTolerance',
  'unknownPlacementWeight',
  'missingVoters',
  'readyVotingWeight',
  'currentFaultTolerance',
] as const;
const LISTS = ['levels', 'domains', 'warnings'] as const;

export function analysisFromStatus(status: unknown): StatusAnalysis {
  if (!isRecord(status)) return { ok: false, problem: 'status.failureDomains is not an object' };
  if (typeof status.verdict !== 'string' || !VERDICTS.has(status.verdict))
    return {
      ok: false,
      problem: `status.failureDomains.verdict ${JSON.stringify(status.verdict)} is not one this ctopo knows (${[...VERDICTS].join(', ')}); is it older than the operator?`,
    };
  if (status.verdict === 'Off') return { ok: true, analysis: { verdict: 'Off' } };
  for (const key of NUMBERS)
    if (typeof status[key] !== 'number')
      return {
        ok: false,
        problem: `status.failureDomains.${key} is missing or not a number (written by an older operator? it is rewritten on the next change)`,
      };
  for (const key of LISTS)
    if (!Array.isArray(status[key]))
      return { ok: false, problem: `status.failureDomains.${key} is missing or not a list` };
  return { ok: true, analysis: status as unknown as FailureDomainsResult };
}
