import { isNonNegativeInteger } from '../api/failure-domain-settings.js';
import type { Member } from './types.js';

/**
 * Validation of the analysis input, beyond what a JSON schema can say. The settings' rules are
 * the API's (`api/failure-domain-settings.ts`); the members' are these: a name that is a string,
 * `votes` a non-negative integer (and a total that stays an exact integer), `ready` a boolean,
 * `labels` an object or absent. Every problem is one string `path: what is wrong`.
 */

export class FailureDomainInputError extends Error {
  readonly problems: readonly string[];
  constructor(problems: readonly string[]) {
    super(`invalid failure-domain input: ${problems.join('; ')}`);
    this.name = 'FailureDomainInputError';
    this.problems = problems;
  }
}

/** Problems of the members; `path` names the list (`members`, or `voters` in a layout file). */
export function checkMembers(members: readonly Member[], path = 'members'): string[] {
  const problems: string[] = [];
  if (!Array.isArray(members)) return [`${path}: must be a list`];
  members.forEach((m, i) => {
    if (typeof m?.name !== 'string') problems.push(`${path}[${i}].name: must be a string`);
    if (m?.votes !== undefined && !isNonNegativeInteger(m.votes))
      problems.push(`${path}[${i}].votes: must be an integer >= 0`);
    if (m?.ready !== undefined && typeof m.ready !== 'boolean')
      problems.push(`${path}[${i}].ready: must be a boolean`);
    if (m?.labels !== undefined && (typeof m.labels !== 'object' || m.labels === null))
      problems.push(`${path}[${i}].labels: must be a map of strings, or absent`);
  });
  const total = members.reduce((t, m) => t + (isNonNegativeInteger(m?.votes) ? m.votes : 1), 0);
  if (!Number.isSafeInteger(total))
    problems.push(`${path}: the votes add up to more than ${Number.MAX_SAFE_INTEGER}`);
  return problems;
}
