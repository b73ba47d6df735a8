import { MEMBER_LIST_CAP, type FailureDomainAnalysis, type LevelAnalysis } from '../failure-domains/index.js';

/**
 * Turns the `status.failureDomains` the operator wrote back into a complete analysis for
 * `formatAnalysisTable`. What the API server stored is the analysis minus what its schema does
 * not carry (it prunes unknown fields, and omits empty optional ones): absent counts and lists
 * get their neutral values, and a level's votes of unknown placement — which the table needs for
 * its AtRisk rows — are recomputed from the domains: every placed vote sits in exactly one domain
 * of each level, so U = W − Σ votes of that level's domains. Their names are recovered from the
 * peers when that is exact (no member list cut short, one vote each); otherwise only counted.
 * Pure; a status too broken to read (wrong types, unknown verdict) is refused with a reason.
 */

export type StatusAnalysis = { ok: true; analysis: FailureDomainAnalysis } | { ok: false; problem: string };

const VERDICTS = new Set(['Survives', 'Breaks', 'AtRisk', 'NoVoters']);

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const num = (v: unknown, fallback = 0): number =>
  typeof v === 'number' && Number.isFinite(v) ? v : fallback;
const arr = <T>(v: unknown): T[] => (Array.isArray(v) ? (v as T[]) : []);
const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** `peerNames`: the pods of status.peers (the members the operator analysed). */
export function analysisFromStatus(status: unknown, peerNames: readonly string[] = []): StatusAnalysis {
  if (!isRecord(status)) return { ok: false, problem: 'status.failureDomains is not an object' };
  for (const key of ['voters', 'votingWeight', 'quorum', 'faultTolerance'])
    if (typeof status[key] !== 'number')
      return { ok: false, problem: `status.failureDomains.${key} is missing or not a number` };
  if (typeof status.verdict !== 'string' || !VERDICTS.has(status.verdict))
    return {
      ok: false,
      problem: `status.failureDomains.verdict ${JSON.stringify(status.verdict)} is not one this ctopo knows (Survives, Breaks, AtRisk, NoVoters); is it older than the operator?`,
    };
  const W = num(status.votingWeight);
  const quorum = num(status.quorum);
  const readyVotingWeight = num(status.readyVotingWeight, W);
  const missingVoters = num(status.missingVoters);
  const domains = arr<Record<string, unknown>>(status.domains).map((d) => ({
    level: String(d.level ?? ''),
    domain: String(d.domain ?? ''),
    voters: num(d.voters),
    votingWeight: num(d.votingWeight),
    learners: num(d.learners),
    votesLeftIfLost: num(d.votesLeftIfLost, W - num(d.votingWeight)),
    verdict: (d.verdict ?? 'Breaks') as FailureDomainAnalysis['domains'][number]['verdict'],
    verdictNow: (d.verdictNow ??
      d.verdict ??
      'Breaks') as FailureDomainAnalysis['domains'][number]['verdictNow'],
    members: arr<string>(d.members),
    ...(typeof d.membersNotListed === 'number' ? { membersNotListed: d.membersNotListed } : {}),
  }));
  const standIns = Array.from({ length: missingVoters }, (_, i) => `(missing voter ${i + 1})`);
  const levels: LevelAnalysis[] = arr<Record<string, unknown>>(status.levels).map((l) => {
    const key = String(l.key ?? '');
    const mine = domains.filter((d) => d.level === key);
    const U =
      typeof l.unknownPlacementWeight === 'number'
        ? l.unknownPlacementWeight
        : Math.max(0, W - mine.reduce((s, d) => s + d.votingWeight, 0));
    const level: LevelAnalysis = {
      key,
      ...(typeof l.within === 'string' ? { within: l.within } : {}),
      domains: num(l.domains, mine.length),
      survivesAnySingle: (l.survivesAnySingle ?? 'Unknown') as LevelAnalysis['survivesAnySingle'],
      maxSimultaneousFailures: num(l.maxSimultaneousFailures),
      unknownPlacementWeight: U,
      ...unknownNames(l, mine, U, peerNames, standIns, num(status.voters)),
      ...(typeof l.advisory === 'string' ? { advisory: l.advisory } : {}),
    };
    return level;
  });
  const analysis: FailureDomainAnalysis = {
    voters: num(status.voters),
    votingWeight: W,
    learners: num(status.learners),
    quorum,
    faultTolerance: num(status.faultTolerance),
    unknownPlacementWeight: num(status.unknownPlacementWeight),
    missingVoters,
    readyVotingWeight,
    currentFaultTolerance: num(status.currentFaultTolerance, readyVotingWeight - quorum),
    verdict: status.verdict as FailureDomainAnalysis['verdict'],
    levels,
    domains,
    ...(isRecord(status.partition)
      ? {
          partition: {
            level: String(status.partition.level ?? ''),
            result: (status.partition.result ?? 'Unknown') as NonNullable<
              FailureDomainAnalysis['partition']
            >['result'],
            sides: arr<Record<string, unknown>>(status.partition.sides).map((s) => ({
              domain: String(s.domain ?? ''),
              votingWeight: num(s.votingWeight),
              canCommit: (s.canCommit ?? 'Maybe') as 'Yes' | 'No' | 'Maybe',
            })),
          },
        }
      : {}),
    warnings: arr<unknown>(status.warnings).map(String),
  };
  return { ok: true, analysis };
}

/** The level's unknown-placement names: as stored, else recovered from the peers when exact. */
function unknownNames(
  level: Record<string, unknown>,
  domains: readonly { members: string[]; voters: number; membersNotListed?: number }[],
  U: number,
  peerNames: readonly string[],
  standIns: readonly string[],
  voters: number,
): Pick<LevelAnalysis, 'unknownPlacementMembers' | 'unknownPlacementMembersNotListed'> {
  if (Array.isArray(level.unknownPlacementMembers))
    return {
      unknownPlacementMembers: (level.unknownPlacementMembers as unknown[]).map(String),
      ...(typeof level.unknownPlacementMembersNotListed === 'number'
        ? { unknownPlacementMembersNotListed: level.unknownPlacementMembersNotListed }
        : {}),
    };
  if (U === 0) return { unknownPlacementMembers: [] };
  const complete = domains.every((d) => d.membersNotListed === undefined);
  if (complete) {
    const placed = new Set(domains.flatMap((d) => d.members));
    const names = [...peerNames.filter((n) => !placed.has(n)), ...standIns].sort(compare);
    // One vote per member is the operator's case; with any other weighting the names cannot be told.
    if (names.length === U) return capped(names);
  }
  const count = Math.max(0, voters - domains.reduce((s, d) => s + d.voters, 0));
  return count > 0
    ? { unknownPlacementMembers: [], unknownPlacementMembersNotListed: count }
    : { unknownPlacementMembers: [] };
}

function capped(
  names: string[],
): Pick<LevelAnalysis, 'unknownPlacementMembers' | 'unknownPlacementMembersNotListed'> {
  return names.length > MEMBER_LIST_CAP
    ? {
        unknownPlacementMembers: names.slice(0, MEMBER_LIST_CAP),
        unknownPlacementMembersNotListed: names.length - MEMBER_LIST_CAP,
      }
    : { unknownPlacementMembers: names };
}
