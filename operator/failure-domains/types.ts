/**
 * Types of the failure-domain analysis. Its settings and its output are the API's own types
 * (generated from `operator/api/schema.ts`): `spec.failureDomains` in, `status.failureDomains`
 * out, one definition each. Only the member, the analysis's input row, is defined here.
 */
import type {
  FailureDomainLevel,
  FailureDomainLevelStatus,
  FailureDomainsSpec,
  FailureDomainsStatus,
  FailureDomainStatus,
  LinkStatus,
  PartitionIsolation,
  PartitionSide,
  PartitionStatus,
} from '../api/types.generated.js';

export type {
  FailureDomainLevel,
  LinkStatus as LinkAnalysis,
  PartitionIsolation,
  PartitionSide,
  PartitionStatus as PartitionAnalysis,
};

/** `spec.failureDomains` of a ClusterTopology, and the settings part of a layout file. */
export type FailureDomainSettings = FailureDomainsSpec;

/** One member of the quorum: in the operator a peer, its labels those of the Node it runs on. */
export interface Member {
  name: string;
  /** `undefined`: placement unknown (the pod is unscheduled, or its Node is gone). */
  labels: Readonly<Record<string, string>> | undefined;
  /** Default 1; 0 = a non-voting member (learner, observer). A non-negative integer. */
  votes?: number;
  /** Default true. A member that is not ready counts as already lost in the current-state figures. */
  ready?: boolean;
}

/** The well-known node labels, from the widest domain to the narrowest (the API's default). */
export { defaultFailureDomainLevels } from '../api/failure-domain-settings.js';

/** How many member names one list in the output holds; the rest are only counted. */
export const MEMBER_LIST_CAP = 20;

/** What the loss of one domain does to the majority. */
export type DomainVerdict = FailureDomainStatus['verdict'];

/** The whole analysis: the worst verdict, `NoVoters` when there is no vote at all. */
export type OverallVerdict = Exclude<FailureDomainsStatus['verdict'], 'Off'>;

/** A Kubernetes-style tri-state, as strings so it reads the same in YAML and JSON. */
export type Tristate = FailureDomainLevelStatus['survivesAnySingle'];

export type CanCommit = PartitionSide['canCommit'];

export type PartitionResult = PartitionStatus['result'];

export type LevelState = FailureDomainLevelStatus['state'];

export type DomainAnalysis = FailureDomainStatus;

export type LevelAnalysis = FailureDomainLevelStatus;

/** The fields an analysis always sets (the status schema requires only `verdict`, for Off). */
type Always =
  | 'voters'
  | 'votingWeight'
  | 'learners'
  | 'quorum'
  | 'faultTolerance'
  | 'unknownPlacementWeight'
  | 'missingVoters'
  | 'readyVotingWeight'
  | 'currentFaultTolerance'
  | 'levels'
  | 'domains'
  | 'warnings';

/** `status.failureDomains` when the analysis is on. */
export type FailureDomainAnalysis = Omit<FailureDomainsStatus, 'verdict'> &
  Required<Pick<FailureDomainsStatus, Always>> & { verdict: OverallVerdict };

/** `status.failureDomains`: an analysis, or `{verdict: 'Off'}`. */
export type FailureDomainsResult = FailureDomainAnalysis | { verdict: 'Off' };

export const ANALYSIS_OFF: Readonly<{ verdict: 'Off' }> = Object.freeze({ verdict: 'Off' });
