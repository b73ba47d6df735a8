import { boundedList, truncate, votes } from './text.js';
import type { DomainAnalysis, FailureDomainAnalysis, FailureDomainsResult, LinkAnalysis } from './types.js';

/**
 * The `QuorumAtRisk` condition of a ClusterTopology, from an analysis. The first rule that
 * applies decides:
 *
 * | status  | reason                       | when                                                   |
 * |---------|------------------------------|--------------------------------------------------------|
 * | Unknown | `AnalysisOff`                | `analysis: Off`: the cluster declares no quorum        |
 * | Unknown | `NoVoters`                   | W = 0: there is no majority to lose                    |
 * | True    | `QuorumLost`                 | the ready votes are below the quorum already           |
 * | True    | `SingleLossBreaksQuorum`     | some domain's or link's loss breaks quorum (`Breaks`)  |
 * | True    | `SingleLossBreaksQuorumNow`  | only with the not-ready members counted as lost        |
 * | True    | `UnknownPlacement`           | a verdict is `AtRisk`, or a judged level's answer is unknown |
 * | False   | `SurvivesAnySingleLoss`      | otherwise                                              |
 *
 * The message names the domains concerned (`key=domain`), at most {@link CONDITION_DOMAIN_CAP}
 * of them plus a count, and is cut at {@link CONDITION_MESSAGE_MAX} characters.
 */
export interface QuorumAtRiskCondition {
  status: 'True' | 'False' | 'Unknown';
  reason:
    | 'AnalysisOff'
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

export function quorumAtRiskCondition(a: FailureDomainsResult): QuorumAtRiskCondition {
  if (a.verdict === 'Off')
    return {
      status: 'Unknown',
      reason: 'AnalysisOff',
      message: 'spec.failureDomains.analysis is Off: this cluster declares no quorum, so none is analysed',
    };
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
  const links = a.links ?? [];
  const cutting = links.filter((l) => l.verdict === 'Breaks');
  if (breaking.length > 0 || cutting.length > 0)
    return {
      status: 'True',
      reason: 'SingleLossBreaksQuorum',
      message: [
        ...(breaking.length > 0
          ? [`losing any one of these leaves fewer than ${Q} of ${W} votes: ${domainList(breaking, W)}`]
          : []),
        ...(cutting.length > 0
          ? [`losing any one of these links leaves no side with ${Q} of ${W} votes: ${linkList(cutting)}`]
          : []),
      ].join('; '),
    };
  // A voter of unknown placement holding more than f votes: its domain breaks, wherever it is.
  const heavy = a.levels.filter(
    (l) =>
      l.state === 'Judged' &&
      l.survivesAnySingle === 'False' &&
      !a.domains.some((d) => d.level === l.key && d.verdict === 'Breaks') &&
      !l.transport,
  );
  if (heavy.length > 0)
    return {
      status: 'True',
      reason: 'SingleLossBreaksQuorum',
      message: `at ${heavy.map((l) => l.key).join(', ')} a voter of unknown placement holds more than ${a.faultTolerance} of ${W} votes: losing its domain, wherever it is, breaks quorum (${boundedList(heavy[0]!.unknownPlacementMembers, CONDITION_DOMAIN_CAP)})`,
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
  const judged = a.levels.filter((l) => l.state === 'Judged');
  const unknownLevels = judged.filter((l) => l.survivesAnySingle === 'Unknown');
  if (judged.length === 0)
    return {
      status: 'True',
      reason: 'UnknownPlacement',
      message: `no level is judged: ${a.levels.map((l) => `${l.key} is ${l.state === 'NotLabelled' ? 'not labelled' : 'shared by all'}`).join(', ')}`,
    };
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
      `every single domain loss leaves a majority (${judged.length} ${judged.length === 1 ? 'level' : 'levels'}, ` +
      `quorum ${Q} of ${W}, ${a.readyVotingWeight} ready)`,
  };
}

function linkList(links: readonly LinkAnalysis[]): string {
  return boundedList(
    links.map((l) => `${l.level}=${l.link}`),
    CONDITION_DOMAIN_CAP,
  );
}

function domainList(domains: readonly DomainAnalysis[], W: number): string {
  return boundedList(
    domains.map((d) => `${d.level}=${d.domain} (${d.votingWeight} of ${W} votes)`),
    CONDITION_DOMAIN_CAP,
  );
}
