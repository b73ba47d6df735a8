/**
 * Types of the failure-domain analysis: its input (members and `spec.failureDomains`) and its
 * output (the shape written to `status.failureDomains`; field names are API).
 */

/** One failure-domain level: a node label key, optionally qualified by a parent level. */
export interface FailureDomainLevel {
  /** The node label whose value names the domain, e.g. `topology.kubernetes.io/zone`. */
  key: string;
  /**
   * The key of another level. A domain of this level is then named by its path,
   * `<parent path>/<value>` (`zone-a/rack-1`), so one value under two parents is two domains.
   */
  within?: string;
}

/** `spec.failureDomains` of a ClusterTopology, and the settings part of a layout file. */
export interface FailureDomainSettings {
  /** Default: {@link defaultFailureDomainLevels} (region, zone, hostname). At least one level. */
  levels?: FailureDomainLevel[];
  /** The level whose domains are cut apart by a partition. Default: the first level whose voters
   * sit in two or more domains. */
  partitionLevel?: string;
  /** The application's voter count, when it knows more voters than there are members found. */
  expectedVoters?: number;
}

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

/** The well-known node labels, from the widest domain to the narrowest. */
export const defaultFailureDomainLevels: readonly Readonly<FailureDomainLevel>[] = Object.freeze([
  Object.freeze({ key: 'topology.kubernetes.io/region' }),
  Object.freeze({ key: 'topology.kubernetes.io/zone' }),
  Object.freeze({ key: 'kubernetes.io/hostname' }),
]);

/** How many member names one list in the output holds; the rest are only counted. */
export const MEMBER_LIST_CAP = 20;

/** What the loss of one domain does to the majority. */
export type DomainVerdict = 'Survives' | 'Breaks' | 'AtRisk';

/** The whole analysis: the worst domain verdict, or `NoVoters` when there is no vote at all. */
export type OverallVerdict = DomainVerdict | 'NoVoters';

/** A Kubernetes-style tri-state, as strings so it reads the same in YAML and JSON. */
export type Tristate = 'True' | 'False' | 'Unknown';

export type CanCommit = 'Yes' | 'No' | 'Maybe';

export type PartitionResult = 'MajoritySide' | 'NoMajority' | 'Unknown';

export interface DomainAnalysis {
  /** The level's key. */
  level: string;
  /** The label value, or the path `parent/value` for a level declared `within` another. */
  domain: string;
  /** Members with at least one vote in this domain. */
  voters: number;
  /** L: the votes this domain holds. */
  votingWeight: number;
  /** Non-voting members in this domain (listed in `members`, never counted as votes). */
  learners: number;
  /** W − L. */
  votesLeftIfLost: number;
  /** Structural: every member alive except this domain's. */
  verdict: DomainVerdict;
  /** Current state: members that are not ready count as already lost. */
  verdictNow: DomainVerdict;
  /** Sorted names, at most {@link MEMBER_LIST_CAP}. */
  members: string[];
  /** How many names `members` leaves out; present only when it leaves some out. */
  membersNotListed?: number;
}

export interface LevelAnalysis {
  key: string;
  within?: string;
  /** Domains holding at least one member (voter or learner). */
  domains: number;
  /** True: every single domain loss survives; False: at least one breaks; Unknown: depends on
   * members of unknown placement. */
  survivesAnySingle: Tristate;
  /** Largest t such that losing any t domains of this level at once survives, counting the votes
   * of unknown placement as lost with them (worst case). */
  maxSimultaneousFailures: number;
  /** U at this level: votes of voters whose placement at this level is unknown. */
  unknownPlacementWeight: number;
  /** Those voters, sorted, at most {@link MEMBER_LIST_CAP}. */
  unknownPlacementMembers: string[];
  unknownPlacementMembersNotListed?: number;
  /** Present when exactly two domains hold all the votes of this level. */
  advisory?: string;
}

export interface PartitionSide {
  domain: string;
  votingWeight: number;
  canCommit: CanCommit;
}

export interface PartitionAnalysis {
  /** The level's key. */
  level: string;
  result: PartitionResult;
  /** One side per domain of the level, sorted by domain. */
  sides: PartitionSide[];
}

export interface FailureDomainAnalysis {
  /** Members with at least one vote, including expected voters that were not found. */
  voters: number;
  /** W. */
  votingWeight: number;
  /** Members with 0 votes. */
  learners: number;
  /** Q = floor(W/2) + 1. */
  quorum: number;
  /** f = W − Q; −1 when W = 0 (no quorum can form). */
  faultTolerance: number;
  /** Votes of voters whose placement is unknown at one level or more. */
  unknownPlacementWeight: number;
  /** Voters that `expectedVoters` adds beyond those found: unknown placement, not ready. */
  missingVoters: number;
  /** R: votes of ready voters. */
  readyVotingWeight: number;
  /** R − Q; negative means quorum is lost now. */
  currentFaultTolerance: number;
  verdict: OverallVerdict;
  levels: LevelAnalysis[];
  /** Sorted by level order, then domain. */
  domains: DomainAnalysis[];
  /** Absent when no level has voters in two or more domains and none is configured. */
  partition?: PartitionAnalysis;
  warnings: string[];
}
