/**
 * The naming engine's vocabulary: its settings, the peers it produces and the exclusions it
 * reports. These shapes are API — they are what `status.peers` / `status.excluded` and
 * `ctopo resolve --output json` carry — so fields and reason names only ever get added.
 */

/**
 * How a pod's node name is made: which pod annotations hold the JSONPath expressions for the two
 * halves of `name@host`, and what each half is when its annotation is absent.
 */
export interface NamingSettings {
  hostnameAnnotation: string;
  nodenameAnnotation: string;
  /** The name part of pods without the nodename annotation; absent: the pod name. */
  basename?: string;
  /** The host part of pods without the hostname annotation; absent: PodIP. */
  hostFallback?: HostFallback;
  /** The DNS domain of PodDNS and Hostname names; absent: cluster.local. */
  clusterDomain?: string;
}

/** Which selected pods are peers, by their state (spec.membership). */
export interface MembershipSettings {
  /** Running: every running pod with an IP; Ready: only pods whose Ready condition is True. */
  peers: MembershipPeers;
  /** Keep: a terminating pod stays a peer, flagged; Drop: it is excluded at once. */
  terminating: MembershipTerminating;
}

/** Everything one pod's verdict depends on besides the pod. */
export interface ResolveSettings extends NamingSettings {
  /** Absent: Running and Keep. */
  membership?: MembershipSettings;
}

// The defaults and reason names are defined once, with the resource's schema.
import {
  DEFAULT_CLUSTER_DOMAIN,
  DEFAULT_HOSTNAME_ANNOTATION,
  DEFAULT_NODENAME_ANNOTATION,
  EXCLUSION_REASONS,
  HOST_FALLBACKS,
  MEMBERSHIP_PEERS,
  MEMBERSHIP_TERMINATING,
} from '../api/schema.js';
import type { ExcludedPod, Peer as PublishedPeer } from '../api/types.generated.js';
export {
  DEFAULT_CLUSTER_DOMAIN,
  DEFAULT_HOSTNAME_ANNOTATION,
  DEFAULT_NODENAME_ANNOTATION,
  EXCLUSION_REASONS,
  HOST_FALLBACKS,
  MEMBERSHIP_PEERS,
  MEMBERSHIP_TERMINATING,
};
/**
 * A peer as resolved: the generated API type with every field (status.peers and `ctopo resolve`
 * carry it; a large topology's status leaves out what readers do not use).
 */
export type Peer = PublishedPeer &
  Required<Pick<PublishedPeer, 'podIP' | 'node' | 'hostSource' | 'nameSource'>>;
export type HostFallback = (typeof HOST_FALLBACKS)[number];
export type MembershipPeers = (typeof MEMBERSHIP_PEERS)[number];
export type MembershipTerminating = (typeof MEMBERSHIP_TERMINATING)[number];

export const DEFAULT_NAMING_SETTINGS: Readonly<NamingSettings> = Object.freeze({
  hostnameAnnotation: DEFAULT_HOSTNAME_ANNOTATION,
  nodenameAnnotation: DEFAULT_NODENAME_ANNOTATION,
});

/** Why a selected pod is not a peer. Every excluded pod carries exactly one. */
export type ExclusionReason = (typeof EXCLUSION_REASONS)[number];

export type HostSource = Peer['hostSource'];
export type NameSource = Peer['nameSource'];

export const DEFAULT_MEMBERSHIP: Readonly<MembershipSettings> = Object.freeze({
  peers: 'Running',
  terminating: 'Keep',
});

/** A selected pod that is not a peer: the generated API type. Every excluded pod carries one reason. */
export type Excluded = ExcludedPod;

export interface ResolveResult {
  /** Sorted by nodeName (code-unit order). */
  peers: Peer[];
  /** Sorted by pod, then reason, then message (code-unit order). */
  excluded: Excluded[];
}

/** One pod judged on its own (rules 1–5 of resolve.ts), before duplicates are settled. */
export type PodVerdict = { ok: true; peer: Peer } | { ok: false; excluded: Excluded };
