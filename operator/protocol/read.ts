import type { ClusterTopologyStatus, ExcludedPod, Peer } from '../api/types.generated.js';
import { isForbidden } from '../kube/reflector-machine.js';

/**
 * The reader's side of the status protocol (docs/status-protocol.md), as pure functions: from
 * what a reader fetched — the ClusterTopology and its liveness Lease — and the time, to what it
 * may act on. Every reader (the agent, `watchPeers`, the CLI, `explain`, the demo) goes through
 * here; nothing else looks into `status.peers`.
 */

/** The liveness Lease of a topology: `clustertopology.<name>` in the topology's namespace. */
export const LEASE_PREFIX = 'clustertopology.';
/** The label every liveness Lease carries, with the topology's name as its value. */
export const TOPOLOGY_LABEL = 'cluster.netzlive.io/topology';
/** The operator renews a live Lease at most this often (and at once after a failure or start). */
export const RENEW_EVERY_S = 60;

export function leaseNameFor(topology: string): string {
  return `${LEASE_PREFIX}${topology}`;
}

/** THE staleness limit (docs/status-protocol.md, "Liveness"): 60 s + 3 × pollingInterval + 30 s. */
export function leaseDurationSeconds(pollingMs: number): number {
  return RENEW_EVERY_S + Math.ceil((3 * pollingMs) / 1000) + 30;
}

/** What a reader needs of a Lease; anything else in it is ignored. */
export interface LeaseView {
  metadata?: { name?: string; [k: string]: unknown };
  spec?: { holderIdentity?: string; renewTime?: string; leaseDurationSeconds?: number; [k: string]: unknown };
}

/** What the reader knows of the Lease: the object, none (404), or why it could not read it. */
export type LeaseRead =
  | { kind: 'found'; lease: LeaseView }
  | { kind: 'missing' }
  | { kind: 'unreadable'; message: string }
  /** This reader does not read the Lease (e.g. the CLI without permission to). */
  | { kind: 'unread' };

export type Liveness =
  | { state: 'live'; renewTime: string; holder?: string; limitS: number }
  | { state: 'stale'; renewTime: string; holder?: string; limitS: number; ageS: number }
  | { state: 'unknown'; why: string };

/**
 * THE ONE STALENESS RULE: the operator is live for a topology iff its Lease exists and
 * now ≤ renewTime + leaseDurationSeconds. A missing, unreadable or malformed Lease leaves liveness
 * unknown: reported, never acted on.
 */
export function livenessOf(read: LeaseRead, now: Date): Liveness {
  switch (read.kind) {
    case 'unread':
      return { state: 'unknown', why: 'the liveness Lease is not read' };
    case 'missing':
      return { state: 'unknown', why: 'the liveness Lease does not exist' };
    case 'unreadable':
      return { state: 'unknown', why: `the liveness Lease cannot be read: ${read.message}` };
    case 'found': {
      const spec = read.lease.spec ?? {};
      const renew = spec.renewTime === undefined ? NaN : Date.parse(spec.renewTime);
      const limitS = spec.leaseDurationSeconds;
      if (Number.isNaN(renew) || typeof limitS !== 'number' || !(limitS > 0))
        return { state: 'unknown', why: 'the liveness Lease has no renewTime or leaseDurationSeconds' };
      const holder = spec.holderIdentity !== undefined ? { holder: spec.holderIdentity } : {};
      const ageMs = now.getTime() - renew;
      if (ageMs <= limitS * 1000) return { state: 'live', renewTime: spec.renewTime!, ...holder, limitS };
      return {
        state: 'stale',
        renewTime: spec.renewTime!,
        ...holder,
        limitS,
        ageS: Math.floor(ageMs / 1000),
      };
    }
  }
}

/**
 * The peer list a status states: `unknown` (no `lastResponse` or no `peers` array — keep what
 * you have) or a list, possibly empty (the operator's answer — disconnect who is not on it).
 */
export type PeerList = { kind: 'unknown' } | { kind: 'list'; peers: readonly Peer[] };

export function peerListOf(status: ClusterTopologyStatus | undefined): PeerList {
  if (!status || !status.lastResponse || !Array.isArray(status.peers)) return { kind: 'unknown' };
  return { kind: 'list', peers: status.peers };
}

/** The peers' node names, this reader's own pod left out (it never dials itself). */
export function peerNodeNames(list: readonly Peer[], ownPod?: string): string[] {
  return list.filter((p) => p.pod !== ownPod).map((p) => p.nodeName);
}

/** The peer entry of one pod, if the status lists it. */
export function peerOfPod(status: ClusterTopologyStatus | undefined, pod: string): Peer | undefined {
  return Array.isArray(status?.peers) ? status.peers.find((p) => p.pod === pod) : undefined;
}

/** The exclusions of one pod (it may have more than one). */
export function exclusionsOfPod(status: ClusterTopologyStatus | undefined, pod: string): ExcludedPod[] {
  return Array.isArray(status?.excluded) ? status.excluded.filter((e) => e.pod === pod) : [];
}

/** Readers that fetched the object, with the failure of the last try, if any. */
export interface TopologyObject {
  metadata: { name: string; namespace?: string; generation?: number };
  spec?: { pollingInterval?: string; [k: string]: unknown };
  status?: ClusterTopologyStatus;
}

export interface ReadFailure {
  /** HTTP status, or undefined when there was no answer. */
  code?: number;
  reason: string;
  message: string;
}

/** What a reader has of the object: nothing yet, a failure, the object, or its absence. */
export type ObjectRead =
  | { kind: 'pending' }
  | { kind: 'failed'; failure: ReadFailure }
  | { kind: 'read'; object: TopologyObject | undefined };

export type ReaderTrouble = 'NoStatusYet' | 'Forbidden' | 'ApiUnreachable' | 'ObjectGone' | 'StatusStale';

/**
 * Everything a reader may conclude: `peers` is the list to act on, or undefined when it must keep
 * what it has (then `trouble` says why). Liveness is reported whatever the peers are: a stale
 * Lease means the status is not current (keep what you have); an unknown one is only reported.
 */
export interface Reading {
  peers: readonly Peer[] | undefined;
  liveness: Liveness;
  trouble?: { cause: ReaderTrouble; detail?: string };
}

export function readTopology(object: ObjectRead, lease: LeaseRead, now: Date): Reading {
  const liveness = livenessOf(lease, now);
  const keep = (cause: ReaderTrouble, detail?: string): Reading => ({
    peers: undefined,
    liveness,
    trouble: detail === undefined ? { cause } : { cause, detail },
  });
  switch (object.kind) {
    case 'pending':
      return keep('NoStatusYet', 'the first read is under way');
    case 'failed': {
      const f = object.failure;
      return keep(
        isForbidden(f) ? 'Forbidden' : 'ApiUnreachable',
        f.code ? `${f.code} ${f.reason}: ${f.message}` : f.message,
      );
    }
    case 'read': {
      if (!object.object) return keep('ObjectGone');
      const list = peerListOf(object.object.status);
      if (list.kind === 'unknown') return keep('NoStatusYet');
      if (liveness.state === 'stale')
        return keep(
          'StatusStale',
          `the operator last renewed its liveness Lease at ${liveness.renewTime}, ${liveness.ageS} s ago (limit ${liveness.limitS} s)`,
        );
      return { peers: list.peers, liveness };
    }
  }
}
