/**
 * Failure-domain analysis: which single loss — a zone, a host, a hypervisor, a rack — would
 * cost a quorum-based system its majority. Pure functions returning data only; the operator feeds
 * them peers with their Node's labels, `ctopo analyze` a layout file; the CLI owns the table and
 * the exit codes.
 */
export {
  ANALYSIS_OFF,
  defaultFailureDomainLevels,
  MEMBER_LIST_CAP,
  type CanCommit,
  type FailureDomainsResult,
  type LevelState,
  type LinkAnalysis,
  type PartitionIsolation,
  type DomainAnalysis,
  type DomainVerdict,
  type FailureDomainAnalysis,
  type FailureDomainLevel,
  type FailureDomainSettings,
  type LevelAnalysis,
  type Member,
  type OverallVerdict,
  type PartitionAnalysis,
  type PartitionResult,
  type PartitionSide,
  type Tristate,
} from './types.js';
export {
  analyzeFailureDomains,
  failureDomainsResult,
  faultToleranceOf,
  maxSimultaneousFailures,
  quorumOf,
} from './analysis.js';
export { analyzePeers, MAX_VOTES_PER_MEMBER, type PeerForAnalysis } from './voters.js';
export { matchesSelector, parseLabelSelector, type LabelSelector } from '../api/label-selector.js';
export {
  checkFailureDomainSettings,
  effectiveLevels,
  isDefaultLevels,
} from '../api/failure-domain-settings.js';
export { checkMembers, FailureDomainInputError } from './settings.js';
export { LAYOUT_MAX_VOTERS, parseLayout, type LayoutParseResult } from './layout.js';
export {
  CONDITION_DOMAIN_CAP,
  CONDITION_MESSAGE_MAX,
  quorumAtRiskCondition,
  type QuorumAtRiskCondition,
} from './condition.js';
