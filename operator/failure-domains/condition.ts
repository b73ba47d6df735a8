import { boundedList, truncate, votes } from './text.js';
import type { DomainAnalysis, FailureDomainAnalysis } from './types.js';

/**
 * The `QuorumAtRisk` condition of a ClusterTopology, from an analysis. The first rule that
 * applies decides:
 *
 * | status  | reason                       | when                                                   |
 * |---------|------------------------------|--------------------------------------------------------|
 * | Unknown | `NoVoters`                   | W = 0: there is no majority to lose                    |
 * | True    | `QuorumLost`                 | the ready votes are below the quorum already           |
 * | True    | `SingleLossBreaksQuorum`     | some domain's loss breaks quorum (verdict `Breaks`)    |
 * | True    | `SingleLossBreaksQuorumNow`  | only with the not-ready members counted as lost        |
 * | True    | `UnknownPlacement`           | a verdict is `AtRisk`, or a level's answer is unknown  |
 * | False   | `SurvivesAnySingleLoss`      | otherwise                                              |
 *
 * The message names the domains concerned (`key=domain`), at most {@link CONDITION_DOMAIN_CAP}
 * of them plus a count, and is cut at {@link CONDITION_MESSAGE_MAX} characters.
 */
export interface QuorumAtRiskCondition {
  status: 'True' | 'False' | 'Unknown';
  reason:
    | 'NoVoters'
    | 'QuorumLost'
    | 'SingleLossBreaksQuorum'
    | 'SingleLossBreaksQuorumNow'
    | 'UnknownPlacement'
    | 'SurvivesAnySingleLoss';
  message: string;
}

export const CONDITION_DOMAIN_CAP = 8;
export const CONDITION_MESSAGE_MAX = 1024;

export function quorumAtRiskCondition(a: FailureDomainAnalysis): QuorumAtRiskCondition {
  const c = decide(a);
  return { ...c, message: truncate(c.message, CONDITION_MESSAGE_MAX) };
}

function decide(a: FailureDomainAnalysis): QuorumAtRiskCondition {
  const W = a.votingWeight;
  const Q = a.quorum;
  if (W === 0)
    return {
      status: 'Unknown',
      reason: 'NoVoters',
      message: 'no member holds a vote, so there is no majority to analyse',
    };
  if (a.currentFaultTolerance < 0)
    return {
      status: 'True',
      reason: 'QuorumLost',
      message: `quorum is lost now: ${a.readyVotingWeight} of ${W} votes are ready, ${Q} are needed`,
    };
  const breaking = a.domains.filter((d) => d.verdict === 'Breaks');
  if (breaking.length > 0)
    return {
      status: 'True',
      reason: 'SingleLossBreaksQuorum',
      message: `losing any one of these leaves fewer than ${Q} of ${W} votes: ${domainList(breaking, W)}`,
    };
  const breakingNow = a.domains.filter((d) => d.verdictNow === 'Breaks');
  if (breakingNow.length > 0)
    return {
      status: 'True',
      reason: 'SingleLossBreaksQuorumNow',
      message:
        `${a.readyVotingWeight} of ${W} votes are ready (quorum ${Q}); with the members that are not ready ` +
        `counted as lost, losing any one of these breaks quorum: ${domainList(breakingNow, W)}`,
    };
  const atRisk = a.domains.filter((d) => d.verdict === 'AtRisk' || d.verdictNow === 'AtRisk');
  const unknownLevels = a.levels.filter((l) => l.survivesAnySingle === 'Unknown');
  if (atRisk.length > 0 || unknownLevels.length > 0) {
    const unplaced = new Set(a.levels.flatMap((l) => l.unknownPlacementMembers));
    const parts = [
      `${votes(a.unknownPlacementWeight)} of ${W} ${a.unknownPlacementWeight === 1 ? 'has' : 'have'} unknown placement ` +
        `(label missing or empty, pod unscheduled, or Node gone: ${boundedList([...unplaced].sort(), CONDITION_DOMAIN_CAP)})`,
    ];
    if (atRisk.length > 0) parts.push(`losing any one of these may break quorum: ${domainList(atRisk, W)}`);
    const unplacedLevels = unknownLevels.filter(
      (l) => !a.domains.some((d) => d.level === l.key && d.verdict === 'AtRisk'),
    );
    if (unplacedLevels.length > 0)
      parts.push(
        `at ${unplacedLevels.map((l) => l.key).join(', ')} the placement of more votes than may be lost is unknown`,
      );
    return { status: 'True', reason: 'UnknownPlacement', message: parts.join('; ') };
  }
  return {
    status: 'False',
    reason: 'SurvivesAnySingleLoss',
    message:
      `every single domain loss leaves a majority (${a.levels.length} ${a.levels.length === 1 ? 'level' : 'levels'}, ` +
      `quorum ${Q} of ${W}, ${a.readyVotingWeight} ready)`,
  };
}

function domainList(domains: readonly DomainAnalysis[], W: number): string {
  return boundedList(
    domains.map((d) => `${d.level}=${d.domain} (${d.votingWeight} of ${W} votes)`),
    CONDITION_DOMAIN_CAP,
  );
}
