// Generated from operator/api/schema.ts by `npm run generate`. Do not edit.

export interface ClusterTopologySpec {
  /** Label selector of the pods that form the cluster, in kubectl syntax; set-based expressions work too (e.g. "netzlive/pod-type=cluster-service", "app in (web,api),tier!=cache"). */
  selector: string;
  /** Namespace of the pods. Default: this resource's own namespace. Another namespace is refused unless the operator is configured to allow it. */
  namespace?: string;
  /** How often the pods are re-listed at the latest (a Go duration, at least 1s). Changes seen on the watch arrive sooner. */
  pollingInterval?: string;
  /** Discovery mode. Only "auto" exists. */
  mode?: "auto";
  /** Where addresses come from. Only "pods" exists. */
  ipLookupMode?: "pods";
  /** Which pod annotations hold the JSONPath expressions computing each pod's node name (name@host). */
  naming?: NamingSpec;
  /** What the peers become when listing pods is refused (401/403): Retain keeps the last known list; Disconnect empties it, so every agent disconnects (the behaviour of libcluster-style discovery). */
  onForbidden?: "Retain" | "Disconnect";
  /** Failure-domain (quorum) analysis of the peers, by the labels of the Nodes their pods run on. */
  failureDomains?: FailureDomainsSpec;
}

export interface ClusterTopologyStatus {
  /** The .metadata.generation this status was computed from. */
  observedGeneration?: number;
  /** Number of peers. */
  peerCount?: number;
  /** Number of excluded pods. */
  excludedCount?: number;
  /** The resolved peers, sorted by node name. */
  peers?: Peer[];
  /** Selected pods that are not peers, sorted by pod name. */
  excluded?: ExcludedPod[];
  /** The outcome of the last list of pods. */
  lastResponse?: LastResponse;
  /** When the pods were last listed. */
  lastPollTime?: string;
  /** Ready (the peers are current: the last list succeeded and the spec is valid), Degraded (the last list failed or the spec is refused; reason and message say why) and QuorumAtRisk (a single failure-domain loss would cost the voters their majority). */
  conditions?: Condition[];
  /** Which single failure would cost the peers their majority (quorum), per failure domain. */
  failureDomains?: FailureDomainsStatus;
}

export interface Condition {
  /** Ready, Degraded or QuorumAtRisk. */
  type: string;
  /** True, False or Unknown. */
  status: "True" | "False" | "Unknown";
  /** The .metadata.generation this condition was computed from. */
  observedGeneration?: number;
  /** When status last changed. */
  lastTransitionTime: string;
  /** CamelCase reason. */
  reason: string;
  /** What happened, for a person. */
  message: string;
}

export interface ExcludedPod {
  /** Pod name. */
  pod: string;
  /** Why it is not a peer. */
  reason: "NoPodIP" | "PodFinished" | "InvalidJSONPath" | "NoMatch" | "AmbiguousMatch" | "NotAString" | "InvalidNodeName" | "DuplicateNodeName" | "ExpressionTooCostly";
  /** What to do about it. */
  message: string;
}

export interface FailureDomainLevel {
  /** Node label key, e.g. topology.kubernetes.io/zone. */
  key: string;
  /** Key of another level that qualifies this one: domains are named parent/child ("zone-a/rack-1"), so a child name reused under two parents is two domains. */
  within?: string;
}

export interface FailureDomainLevelStatus {
  /** Level (Node label key). */
  key: string;
  /** The level this one is qualified by. */
  within?: string;
  /** Domains holding members. */
  domains: number;
  /** Whether every single domain of this level may be lost. */
  survivesAnySingle: "True" | "False" | "Unknown";
  /** Largest number of domains of this level that may be lost at once, worst case. */
  maxSimultaneousFailures: number;
  /** Votes whose placement at this level is unknown. */
  unknownPlacementWeight?: number;
  /** Those members (at most 20). */
  unknownPlacementMembers?: string[];
  /** Members of unknown placement left out of the list. */
  unknownPlacementMembersNotListed?: number;
  /** What to change. */
  advisory?: string;
}

export interface FailureDomainsSpec {
  /** Levels of failure domains, outermost first. Default: region, zone, hostname (the well-known Node labels). */
  levels?: FailureDomainLevel[];
  /** Level whose domains are the sides of a network partition. Default: the first level with two or more domains. */
  partitionLevel?: string;
  /** Voters the application has when it knows more members than there are pods; the missing ones count as unknown placement, not ready. */
  expectedVoters?: number;
}

export interface FailureDomainsStatus {
  /** Voting members. */
  voters: number;
  /** W: total votes. */
  votingWeight: number;
  /** Members without a vote. */
  learners?: number;
  /** Q = floor(W/2)+1. */
  quorum: number;
  /** f = W - Q: votes that may be lost. */
  faultTolerance: number;
  /** Votes whose placement is unknown at one level or more (no Node label, unscheduled, Node gone). */
  unknownPlacementWeight?: number;
  /** Voters that expectedVoters adds beyond the peers found: unknown placement, not ready. */
  missingVoters?: number;
  /** Votes of ready members. */
  readyVotingWeight?: number;
  /** Ready votes minus Q (negative: quorum is lost now). */
  currentFaultTolerance?: number;
  /** Breaks if any single domain loss breaks quorum, AtRisk if one may, else Survives; NoVoters when W = 0. */
  verdict: "Survives" | "AtRisk" | "Breaks" | "NoVoters";
  levels?: FailureDomainLevelStatus[];
  domains?: FailureDomainStatus[];
  partition?: PartitionStatus;
  warnings?: string[];
}

export interface FailureDomainStatus {
  /** Level key. */
  level: string;
  /** Domain name (parent/child with within). */
  domain: string;
  /** Members inside. */
  voters: number;
  /** Votes inside. */
  votingWeight: number;
  /** Members without a vote inside. */
  learners?: number;
  /** Votes left if this domain disappears. */
  votesLeftIfLost: number;
  /** With every member ready. */
  verdict: "Survives" | "AtRisk" | "Breaks";
  /** Counting members not ready now as lost. */
  verdictNow: "Survives" | "AtRisk" | "Breaks";
  /** Members inside (at most 20). */
  members: string[];
  /** Members left out of the list. */
  membersNotListed?: number;
}

export interface LastResponse {
  /** HTTP status code ("200", "403", …) or "TransportError". */
  code: string;
  /** Reason (OK, Forbidden, ServiceUnavailable, TransportError, …). */
  reason: string;
  /** What the API server or the transport said. */
  message?: string;
  /** When this outcome began. */
  since: string;
}

export interface NamingSpec {
  /** Annotation whose value is a JSONPath evaluated against the pod; its single match is the host part. Pods without it use status.podIP. */
  hostnameAnnotation?: string;
  /** Annotation whose value is a JSONPath evaluated against the pod; its single match is the name part. Pods without it use metadata.name. */
  nodenameAnnotation?: string;
}

export interface PartitionSide {
  /** Domain. */
  domain: string;
  /** Votes on this side. */
  votingWeight: number;
  /** Whether writes still commit on this side. */
  canCommit: "Yes" | "No" | "Maybe";
}

export interface PartitionStatus {
  /** Level whose domains are the sides. */
  level: string;
  /** MajoritySide, NoMajority or Unknown. */
  result: "MajoritySide" | "NoMajority" | "Unknown";
  sides: PartitionSide[];
}

export interface Peer {
  /** The node name agents connect to (name@host). */
  nodeName: string;
  /** Pod name. */
  pod: string;
  /** Pod UID: peers are keyed by it, so a reused IP never aliases another pod. */
  uid: string;
  /** status.podIP (may be empty when the host came from an annotation). */
  podIP: string;
  /** The Kubernetes Node the pod runs on (empty while unscheduled). */
  node: string;
  /** Where the host part came from. */
  hostSource: "Annotation" | "PodIP";
  /** Where the name part came from. */
  nameSource: "Annotation" | "PodName";
  /** The pod is being deleted; it stays a peer until it is gone. */
  terminating: boolean;
}
