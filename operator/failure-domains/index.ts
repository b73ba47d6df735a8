/**
 * Failure-domain analysis: which single loss — a zone, a host, a hypervisor, a rack — would
 * cost a quorum-based system its majority. Pure functions only; the operator feeds them peers
 * with their Node's labels, `ctopo analyze` feeds them a layout file.
 */
export {
  defaultFailureDomainLevels,
  MEMBER_LIST_CAP,
  type CanCommit,
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
export { analyzeFailureDomains, faultToleranceOf, maxSimultaneousFailures, quorumOf } from './analysis.js';
export {
  checkFailureDomainSettings,
  checkMembers,
  effectiveLevels,
  FailureDomainInputError,
} from './settings.js';
export { LAYOUT_MAX_VOTERS, parseLayout, type LayoutParseResult } from './layout.js';
export { formatAnalysisTable, TABLE_MEMBER_CAP } from './format.js';
export {
  CONDITION_DOMAIN_CAP,
  CONDITION_MESSAGE_MAX,
  quorumAtRiskCondition,
  type QuorumAtRiskCondition,
} from './condition.js';
export { analysisExitCode } from './exit-code.js';
