/**
 * The naming engine's vocabulary: its settings, the peers it produces and the exclusions it
 * reports. These shapes are API — they are what `status.peers` / `status.excluded` and
 * `ctopo resolve --output json` carry — so fields and reason names only ever get added.
 */

/** Which pod annotations hold the JSONPath expressions for the two halves of `name@host`. */
export interface NamingSettings {
  hostnameAnnotation: string;
  nodenameAnnotation: string;
}

// The defaults and reason names are defined once, with the resource's schema.
import {
  DEFAULT_HOSTNAME_ANNOTATION,
  DEFAULT_NODENAME_ANNOTATION,
  EXCLUSION_REASONS,
} from '../api/schema.js';
export { DEFAULT_HOSTNAME_ANNOTATION, DEFAULT_NODENAME_ANNOTATION, EXCLUSION_REASONS };

export const DEFAULT_NAMING_SETTINGS: Readonly<NamingSettings> = Object.freeze({
  hostnameAnnotation: DEFAULT_HOSTNAME_ANNOTATION,
  nodenameAnnotation: DEFAULT_NODENAME_ANNOTATION,
});

/** Why a selected pod is not a peer. Every excluded pod carries exactly one. */
export type ExclusionReason = (typeof EXCLUSION_REASONS)[number];

export type HostSource = 'Annotation' | 'PodIP';
export type NameSource = 'Annotation' | 'PodName';

export interface Peer {
  /** `name@host`; unique among the peers of one result, and valid by `checkNodeName`. */
  nodeName: string;
  /** metadata.name */
  pod: string;
  /** metadata.uid, or metadata.name when the input carries no uid (offline input only). */
  uid: string;
  /** status.podIP; never empty — a pod without an IP is excluded as NoPodIP. */
  podIP: string;
  /** spec.nodeName; the empty string when the pod is not scheduled. */
  node: string;
  hostSource: HostSource;
  nameSource: NameSource;
  /** metadata.deletionTimestamp is set: still a peer, until the pod is gone. */
  terminating: boolean;
}

export interface Excluded {
  /** metadata.name (empty when the input pod has none). */
  pod: string;
  reason: ExclusionReason;
  /** What went wrong and what to change, for a person. Single line, values quoted. */
  message: string;
}

export interface ResolveResult {
  /** Sorted by nodeName (code-unit order). */
  peers: Peer[];
  /** Sorted by pod, then reason, then message (code-unit order). */
  excluded: Excluded[];
}

/** One pod judged on its own (rules 1–5 of resolve.ts), before duplicates are settled. */
export type PodVerdict = { ok: true; peer: Peer } | { ok: false; excluded: Excluded };
