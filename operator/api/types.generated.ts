// Generated from operator/api/schema.ts and member-schema.ts by `npm run generate`. Do not edit.

export interface BrokenLink {
  /** The member (pod) that reports it. */
  from: string;
  /** The member (pod) it is not connected to. */
  to: string;
  /** The reporting member's last reason. */
  reason: "Refused" | "Timeout" | "NodeDown" | "NotTried" | "Invalid";
}

export interface ClusterTopologyMemberSpec {
  /** The ClusterTopology (in this namespace) the member belongs to. */
  topology: string;
  /** The member pod. */
  pod: MemberPod;
}

export interface ClusterTopologyMemberStatus {
  /** When the member wrote this report (also renewed, unchanged, every 5 minutes). */
  reportedAt: string;
  /** The name the member's node runs as (node() in Erlang). */
  node: string;
  /** true: connected and notConnected are what the member sees (nodes()). false: the connector cannot see connections (exec, file); the counts say what it was given, and the mesh leaves its links unknown. */
  observed?: boolean;
  /** metadata.resourceVersion of the ClusterTopology the member had last read when it wrote this report (absent before its first read). For people; listedDigest says which list. */
  topologyResourceVersion?: string;
  /** Which peer list the view is of: CRC-32 (as zlib and erlang:crc32/1 compute it) of every status.peers[].nodeName, the member itself included, sorted in byte order, each followed by a line feed; 8 lowercase hex digits. Absent while the member has no list. */
  listedDigest?: string;
  /** Whom it is connected to, for members beyond the notConnected cap: the same CRC-32 as listedDigest over node plus every listed node name it is connected to. Two members with equal digests are connected to each other (each one's set holds the other), whatever the lists left out. Absent while the member has no list. */
  connectedDigest?: string;
  /** Listed peers other than the member itself. */
  listed: number;
  /** Of those, the peers it is connected to. */
  connected: number;
  /** Of those, the peers whose names it refuses (never dialled); each is also not connected. */
  invalid: number;
  /** connected/listed, e.g. 2/3: the CONNECTED column. */
  connectedOfListed: string;
  /** The listed peers it is not connected to, with the last reason, sorted by node name in byte order: the first 20 only. */
  notConnected: NotConnectedPeer[];
  /** Listed peers it is not connected to beyond the first 20 (their names sort after the last entry). */
  notConnectedOmitted?: number;
  /** Whether the node runs under the name the status lists for its pod. */
  selfCheck: SelfCheck;
  /** The reader's trouble with the status (docs/status-protocol.md §5), absent when none. A reader in trouble keeps its connections. */
  trouble?: ReaderTroubleReport;
}

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
  /** Which selected pods are peers, by their state. */
  membership?: MembershipSpec;
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
  /** Above 1000 peers: the value of terminating, ready and serving for every entry of peers that leaves it out (each entry writes them only where they differ). Absent at 1000 peers or fewer, where every entry writes all three. */
  peerDefaults?: PeerDefaults;
  /** Selected pods that are not peers, sorted by pod name. */
  excluded?: ExcludedPod[];
  /** The outcome of the last list of pods. */
  lastResponse?: LastResponse;
  /** The latest time the list of pods failed: the first failed answer of that run of failures, when it began and when a list succeeded again. Kept after recovery (until the next failure), so a failure that could not be written while it lasted — the API server itself was down — is still seen. */
  lastFailure?: LastFailure;
  /** The poll that produced the current content: the status is written only when it changes, so this is not a liveness signal (the liveness Lease is). */
  lastPollTime?: string;
  /** Ready (the peers are current: the last list succeeded and the spec is valid), Degraded (the last list failed or the spec is refused; reason and message say why), QuorumAtRisk (a single failure-domain loss would cost the voters their majority) and Meshed (every listed member reports a current view connected to every other; False names the first mismatch, split or broken link; Unknown while reports are missing). */
  conditions?: Condition[];
  /** Which single failure would cost the peers their majority (quorum), per failure domain. With spec.failureDomains.analysis Off only verdict is set (Off); otherwise every count, levels, domains and warnings are. */
  failureDomains?: FailureDomainsStatus;
  /** What formed, from the members' own reports (ClusterTopologyMember objects): who reports, who is connected to whom, the groups, the broken links. Readers ignore it; the operator writes it only when it changes, at most once per 15 s. */
  mesh?: MeshStatus;
}

export interface Condition {
  /** Ready, Degraded, QuorumAtRisk, ReadinessDeadlockRisk or Meshed. */
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
  reason: "NoPodIP" | "PodFinished" | "InvalidJSONPath" | "NoMatch" | "AmbiguousMatch" | "NotAString" | "InvalidNodeName" | "DuplicateNodeName" | "ExpressionTooCostly" | "NoNamespace" | "NoSubdomain" | "PodTerminating" | "PodNotReady";
  /** What to do about it. */
  message: string;
}

export interface FailureDomainLevel {
  /** Node label key, e.g. topology.kubernetes.io/zone. */
  key: string;
  /** Key of another level that qualifies this one: domains are named parent/child ("zone-a/rack-1"), so a child name reused under two parents is two domains. */
  within?: string;
  /** A shared link or concentrator (a VPN, an inter-site line): the label names the link a Node reaches the other sites through; a Node without the label depends on no such link. Its loss cuts the members behind it off from the rest; it is transport, never a vote. */
  transport?: boolean;
}

export interface FailureDomainLevelStatus {
  /** Level (Node label key). */
  key: string;
  /** The level this one is qualified by. */
  within?: string;
  /** A level of shared links: its losses cut, never remove votes. */
  transport?: boolean;
  /** Judged: counts toward the verdict. NotLabelled: no voter's Node carries the label; not judged. SharedByAll: with the default levels, every placed voter shares one domain of it (sharedDomain) above the first level that separates them; not judged. */
  state: "Judged" | "NotLabelled" | "SharedByAll";
  /** The one domain every placed voter shares (state SharedByAll). */
  sharedDomain?: string;
  /** Domains holding members. */
  domains: number;
  /** Whether every single domain of this level may be lost. */
  survivesAnySingle: "True" | "False" | "Unknown";
  /** Largest number of domains of this level that may be lost at once, worst case (a transport level: 1 if every single link may be lost, else 0). */
  maxSimultaneousFailures: number;
  /** Votes whose placement at this level is unknown. */
  unknownPlacementWeight: number;
  /** Those members (at most 20). */
  unknownPlacementMembers: string[];
  /** Members of unknown placement left out of the list. */
  unknownPlacementMembersNotListed?: number;
  /** What to change. */
  advisory?: string;
}

export interface FailureDomainsSpec {
  /** On: analyse the voters. Off: this cluster has no quorum (Phoenix, Horde, a cache): no analysis, no QuorumAtRisk warning; the Quorum column reads Off. */
  analysis?: "On" | "Off";
  /** Which peers vote. Default: every peer, one vote each. A voter's votes come from its pod annotation netzlive/votes (an integer >= 0; 0 makes it a learner), default 1. */
  voters?: VotersSpec;
  /** Levels of failure domains, outermost first. Default: region, zone, hostname (the well-known Node labels). */
  levels?: FailureDomainLevel[];
  /** Level whose domains are the sides of a network partition. Default: the first judged level whose voters sit in two or more domains. A name that is not a level is refused by the operator (InvalidSpec), not by kubectl apply. */
  partitionLevel?: string;
  /** Voters the application has when it knows more members than there are pods; the missing ones count as unknown placement, not ready. */
  expectedVoters?: number;
}

export interface FailureDomainsStatus {
  /** Voting members. */
  voters?: number;
  /** W: total votes. */
  votingWeight?: number;
  /** Members without a vote. */
  learners?: number;
  /** Q = floor(W/2)+1. */
  quorum?: number;
  /** f = W - Q: votes that may be lost. */
  faultTolerance?: number;
  /** Votes whose placement is unknown at one level or more (no Node label, unscheduled, Node gone). */
  unknownPlacementWeight?: number;
  /** Voters that expectedVoters adds beyond the peers found: unknown placement, not ready. */
  missingVoters?: number;
  /** Votes of ready members. */
  readyVotingWeight?: number;
  /** Ready votes minus Q (negative: quorum is lost now). */
  currentFaultTolerance?: number;
  /** Peers outside spec.failureDomains.voters (neither selector matches): not members of the quorum. */
  ignoredPeers?: number;
  /** Breaks if any single loss breaks quorum, AtRisk if one may, else Survives; NoVoters when W = 0; Off when the analysis is off. */
  verdict: "Survives" | "AtRisk" | "Breaks" | "NoVoters" | "Off";
  levels?: FailureDomainLevelStatus[];
  domains?: FailureDomainStatus[];
  partition?: PartitionStatus;
  /** Per link of a transport level: what its loss alone leaves on each side. */
  links?: LinkStatus[];
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
  learners: number;
  /** Votes left if this domain disappears. */
  votesLeftIfLost: number;
  /** Votes of unknown placement that could be inside, when fewer than the level's (a nested level whose known labels rule some out). */
  mayAlsoHold?: number;
  /** With every member ready. */
  verdict: "Survives" | "AtRisk" | "Breaks";
  /** Counting members not ready now as lost. */
  verdictNow: "Survives" | "AtRisk" | "Breaks";
  /** Members inside (at most 20). */
  members: string[];
  /** Members left out of the list. */
  membersNotListed?: number;
}

export interface LastFailure {
  /** HTTP status code ("403", "503", …) or "TransportError" of the first failed answer. */
  code: string;
  /** Reason (Forbidden, ServiceUnavailable, TransportError, …). */
  reason: string;
  /** What the API server or the transport said. */
  message?: string;
  /** When the lists began to fail. */
  since: string;
  /** When a list succeeded again; absent while they still fail. */
  until?: string;
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

export interface LinkStatus {
  /** The transport level. */
  level: string;
  /** The link (the label value). */
  link: string;
  /** Members behind it (at most 20). */
  members: string[];
  /** Members left out of the list. */
  membersNotListed?: number;
  /** The groups cut off when it is lost: the members behind it, one group per site. */
  cutOff: PartitionSide[];
  /** Votes not behind it: they stay connected. */
  restVotingWeight: number;
  /** Whether writes commit among them. */
  restCanCommit: "Yes" | "No" | "Maybe";
  /** Votes that may or may not be behind it, or whose site is unknown. */
  unknownPlacementWeight: number;
  /** Whether one side still commits. */
  result: "MajoritySide" | "NoMajority" | "Unknown";
  /** Survives if one side still commits, Breaks if none can, else AtRisk. */
  verdict: "Survives" | "AtRisk" | "Breaks";
}

export interface MemberPod {
  /** The pod name. */
  name: string;
  /** The pod uid (status.peers[].uid, or the downward API metadata.uid). */
  uid: string;
}

export interface MembershipSpec {
  /** Running (every running pod with an IP is a peer) or Ready (only pods whose Ready condition is True, as libcluster's endpoints lookup; others are excluded as PodNotReady). Beware: with Ready, an application whose readiness waits for its cluster never becomes ready. */
  peers?: "Running" | "Ready";
  /** Keep (a terminating pod stays a peer, flagged terminating, until it is gone) or Drop (it is excluded as PodTerminating at once). */
  terminating?: "Keep" | "Drop";
}

export interface MemberTrouble {
  /** The member (pod). */
  pod: string;
  /** Its trouble (NoStatusYet, Forbidden, ApiUnreachable, ObjectGone, StatusStale, …). */
  cause: string;
  /** Since when. */
  since: string;
}

export interface MeshGroup {
  /** Members in the group. */
  size: number;
  /** Its members, sorted (at most 20). */
  members: string[];
  /** Members left out of the list (it holds at most 20). */
  membersOmitted?: number;
}

export interface MeshStatus {
  /** Listed members (status.peers). */
  members: number;
  /** Listed members whose report is current: not stale, of the current peer list, and observed by the member itself. */
  reporting: number;
  /** Members whose current report says they are connected to every other listed member. */
  fullyConnected: number;
  /** Members in the largest group connected to each other: a connected component of the links confirmed by the reports of both ends. */
  largestGroup: number;
  /** largestGroup/members, the MESH column: 3/3 whole, 2/3 one member cut off (a wrong cookie), 2/4 a split into 2 + 2; ?/N while no report is current (none of the current list, or all stale). Absent while no member has a report. */
  summary: string;
  /** When the reporting members fall into more than one group: the groups, largest first (at most 20). */
  groups?: MeshGroup[];
  /** Groups left out of the list (it holds at most 20). */
  groupsOmitted?: number;
  /** Links a current report says are not connected, sorted by from and to (at most 20). */
  brokenLinks?: BrokenLink[];
  /** Broken links left out of the list (it holds at most 20). */
  brokenLinksOmitted?: number;
  /** Members that run under another name than the one listed for their pod (at most 20). */
  selfCheckFailures?: SelfCheckFailure[];
  /** Self-check failures left out of the list (it holds at most 20). */
  selfCheckFailuresOmitted?: number;
  /** Members whose current report names a trouble (at most 20). */
  inTrouble?: MemberTrouble[];
  /** Members in trouble left out of the list (it holds at most 20). */
  inTroubleOmitted?: number;
  /** Members whose last report is older than the renewal limit (at most 20): silent, frozen or gone. */
  stale?: StaleReport[];
  /** Stale reports left out of the list (it holds at most 20). */
  staleOmitted?: number;
  /** Members without a current view, other than stale ones (at most 20). */
  unreported?: UnreportedMember[];
  /** Members without a current view left out of the list (it holds at most 20). */
  unreportedOmitted?: number;
}

export interface NamingSpec {
  /** Annotation whose value is a JSONPath evaluated against the pod; its single match is the host part. Pods without it use hostFallback (status.podIP by default). */
  hostnameAnnotation?: string;
  /** Annotation whose value is a JSONPath evaluated against the pod; its single match is the name part. Pods without it use basename, or metadata.name when there is none. */
  nodenameAnnotation?: string;
  /** A fixed name part for pods without the nodename annotation (libcluster's kubernetes_node_basename): every such pod is <basename>@<host>. Without it, the pod name. */
  basename?: string;
  /** The host part of pods without the hostname annotation: PodIP (status.podIP), PodDNS (the pod A record, 10-1-2-3.<namespace>.pod.<clusterDomain>) or Hostname (<spec.hostname or pod name>.<spec.subdomain>.<namespace>.svc.<clusterDomain>: StatefulSet names, stable across restarts; a pod without spec.subdomain is excluded). */
  hostFallback?: "PodIP" | "PodDNS" | "Hostname";
  /** The cluster DNS domain used by the PodDNS and Hostname fallbacks. */
  clusterDomain?: string;
}

export interface NotConnectedPeer {
  /** The listed node name. */
  node: string;
  /** Refused (the connection attempt failed: a different cookie, nobody listening), Timeout (it timed out), NodeDown (it was connected and went down), NotTried (not tried yet), Invalid (the name is refused, never dialled). */
  reason: "Refused" | "Timeout" | "NodeDown" | "NotTried" | "Invalid";
}

export interface PartitionIsolation {
  /** The domain cut off. */
  domain: string;
  /** Votes inside it. */
  votingWeight: number;
  /** Whether writes commit inside it. */
  canCommit: "Yes" | "No" | "Maybe";
  /** Votes placed in the rest. */
  restVotingWeight: number;
  /** Whether writes commit in the rest. */
  restCanCommit: "Yes" | "No" | "Maybe";
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
  /** With every domain cut off from every other: whether one side still commits. */
  result: "MajoritySide" | "NoMajority" | "Unknown";
  sides: PartitionSide[];
  /** With three or more sides: each domain cut off from the rest, which stay connected. */
  isolations?: PartitionIsolation[];
}

export interface Peer {
  /** The node name agents connect to (name@host). */
  nodeName: string;
  /** Pod name. */
  pod: string;
  /** Pod UID: peers are keyed by it, so a reused IP never aliases another pod. */
  uid: string;
  /** status.podIP (may be empty when the host came from an annotation). Left out above 1000 peers. */
  podIP?: string;
  /** The Kubernetes Node the pod runs on (empty while unscheduled). Left out above 1000 peers. */
  node?: string;
  /** Where the host part came from. Left out above 1000 peers. */
  hostSource?: "Annotation" | "PodIP" | "PodDNS" | "Hostname";
  /** Where the name part came from. Left out above 1000 peers. */
  nameSource?: "Annotation" | "PodName" | "Basename";
  /** The pod is being deleted (EndpointSlice terminating); with membership.terminating Keep it stays a peer until it is gone. Absent: status.peerDefaults.terminating. */
  terminating?: boolean;
  /** EndpointSlice ready: the Ready condition is True and the pod is not terminating. Absent: status.peerDefaults.ready, or unknown without it. */
  ready?: boolean;
  /** EndpointSlice serving: the Ready condition is True, terminating or not. Absent: status.peerDefaults.serving, or unknown without it. */
  serving?: boolean;
}

export interface PeerDefaults {
  /** An entry without terminating is this. */
  terminating?: boolean;
  /** An entry without ready is this. */
  ready?: boolean;
  /** An entry without serving is this. */
  serving?: boolean;
}

export interface ReaderTroubleReport {
  /** NoStatusYet, Forbidden, ApiUnreachable, ObjectGone, StatusStale, or another CamelCase word. */
  cause: string;
  /** What the reader saw. */
  message?: string;
  /** Since when. */
  since: string;
}

export interface SelfCheck {
  /** Match; Mismatch (it runs under another name: its peers dial a name nobody answers); NotListed (its pod is not in the list: excluded, or not listed yet); Unknown (no list yet). */
  result: "Match" | "Mismatch" | "NotListed" | "Unknown";
  /** The name listed for its pod (absent unless listed). */
  expected?: string;
  /** The name it runs as (the same as node). */
  actual: string;
}

export interface SelfCheckFailure {
  /** The member (pod). */
  pod: string;
  /** The name listed for it (status.peers[].nodeName). */
  expected: string;
  /** The name its node runs as, by its report. */
  actual: string;
}

export interface StaleReport {
  /** The member (pod). */
  pod: string;
  /** When it last reported. */
  reportedAt: string;
}

export interface UnreportedMember {
  /** The member (pod). */
  pod: string;
  /** NoReport: none for this pod; OtherList: its report reflects another peer list (it has not caught up yet); NotObserved: its connector cannot see connections (exec, file). */
  reason: "NoReport" | "OtherList" | "NotObserved";
}

export interface VotersSpec {
  /** Label selector (kubectl syntax) of the peers that vote. Default: every peer. Peers matching neither this nor learnerSelector are not members of the quorum. */
  selector?: string;
  /** Label selector of the peers that replicate but do not vote (learners, observers): listed where they run, never counted. A peer matching both selectors is a learner. */
  learnerSelector?: string;
}
