import type { ClusterTopologyStatus, Peer, PeerDefaults } from '../api/types.generated.js';
import { API_VERSION, KIND } from '../api/schema.js';
import { createHash } from 'node:crypto';
import { canonicalJson, deepEqual } from '../api/json.js';
import { microTime } from '../kube/micro-time.js';
import { PEER_FLAGS, RENEW_EVERY_S, TOPOLOGY_LABEL, leaseDurationSeconds, leaseNameFor } from './read.js';

/**
 * The operator's side of the status protocol (docs/status-protocol.md), as pure functions: when
 * the ClusterTopology status is written (only when its content changes) and what the liveness
 * Lease holds and when it is renewed. `liveness-writer.ts` does the I/O.
 */

/**
 * The fields of `.status` the operator owns (docs/operator.md, "What the operator owns in
 * .status"): it computes each of them, and a value someone else put there is replaced at the next
 * reconcile. A field not named here is left as it is. (A test holds this list to the schema.)
 */
export const OPERATOR_STATUS_FIELDS = [
  'observedGeneration',
  'peerCount',
  'excludedCount',
  'peers',
  'peerDefaults',
  'excluded',
  'lastResponse',
  'lastFailure',
  'lastPollTime',
  'conditions',
  'failureDomains',
  'mesh',
] as const satisfies readonly (keyof ClusterTopologyStatus)[];

/** Only the fields the operator owns; undefined stays undefined. */
export function ownedStatus(s: ClusterTopologyStatus | undefined): ClusterTopologyStatus | undefined {
  if (!s) return undefined;
  const out: Record<string, unknown> = {};
  for (const k of OPERATOR_STATUS_FIELDS) if (s[k] !== undefined) out[k] = s[k];
  return out as ClusterTopologyStatus;
}

/** The owned fields but `lastPollTime`, which moves with every poll: what decides whether to write. */
function statusContent(s: ClusterTopologyStatus | undefined): unknown {
  const owned = ownedStatus(s);
  if (!owned) return undefined;
  const { lastPollTime: _t, ...rest } = owned;
  return rest;
}

/**
 * A short fingerprint of what `shouldWrite` compares: equal content, equal digest, whatever the
 * order of the keys. The operator keeps it instead of a status it wrote (megabytes at thousands of
 * peers) to notice that the object no longer holds what it wrote.
 */
export function statusDigest(s: ClusterTopologyStatus | undefined): string {
  return createHash('sha256')
    .update(canonicalJson(statusContent(s) ?? null))
    .digest('base64');
}

/**
 * Write only when the content changed: readers watch this object and receive all of it on every
 * write, so a poll that found nothing new writes nothing. Liveness goes to the Lease instead.
 * `written` is what the object holds (the operator's own last write, or what another writer put
 * there): a difference in an owned field is written back.
 */
export function shouldWrite(
  written: ClusterTopologyStatus | undefined,
  next: ClusterTopologyStatus,
): boolean {
  return !deepEqual(statusContent(written), statusContent(next));
}

/** What the writer remembers of one topology's Lease between polls. */
export interface RenewState {
  /** When this process last renewed it (ms since the epoch); undefined: not since it started. */
  renewedAt?: number;
  /** Whether the poll before this one failed (then the next success renews at once). */
  failedSince?: boolean;
}

/**
 * Whether a poll outcome renews the Lease: a successful poll renews it at once when this process
 * has not renewed it yet or the previous poll failed, else when the last renewal is RENEW_EVERY_S
 * old. A failed poll never renews (renewTime is the last SUCCESSFUL poll).
 */
export function renewDue(state: RenewState, ok: boolean, now: number): boolean {
  if (!ok) return false;
  if (state.renewedAt === undefined || state.failedSince) return true;
  return now - state.renewedAt >= RENEW_EVERY_S * 1000;
}

export interface TopologyRef {
  namespace: string;
  name: string;
  uid: string;
}

/** The Lease's spec after a successful poll at `at`. */
export function leaseSpec(holder: string, at: Date, pollingMs: number) {
  return {
    holderIdentity: holder,
    renewTime: microTime(at),
    leaseDurationSeconds: leaseDurationSeconds(pollingMs),
  };
}

/** The whole Lease object, for its creation: named, labelled and owned by the topology. */
export function leaseObject(topology: TopologyRef, holder: string, at: Date, pollingMs: number) {
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: {
      name: leaseNameFor(topology.name),
      namespace: topology.namespace,
      labels: { [TOPOLOGY_LABEL]: topology.name },
      // Deleting the topology deletes its Lease (garbage collection).
      ownerReferences: [{ apiVersion: API_VERSION, kind: KIND, name: topology.name, uid: topology.uid }],
    },
    spec: { ...leaseSpec(holder, at, pollingMs), acquireTime: microTime(at) },
  };
}

/** What most peers are: a large status writes a flag only on the entries where it differs. */
export const PEER_DEFAULTS: Readonly<Required<PeerDefaults>> = {
  terminating: false,
  ready: true,
  serving: true,
};

/**
 * A large status's peers (above LIGHT_PEERS_ABOVE): the fields readers use only, and each flag only
 * where it differs from `peerDefaults` — at 5,000 peers a third less for the API server to decode,
 * validate and encode on every write, and for every reader to receive. A flag some entry does not
 * know (kept from a status written before it existed) gets no default: its absence stays unknown.
 */
export function lightPeers(peers: readonly Peer[]): { peers: Peer[]; peerDefaults: PeerDefaults } {
  const peerDefaults: PeerDefaults = {};
  for (const k of PEER_FLAGS) if (peers.every((p) => p[k] !== undefined)) peerDefaults[k] = PEER_DEFAULTS[k];
  return {
    peerDefaults,
    peers: peers.map((p) => {
      const entry: Peer = { nodeName: p.nodeName, pod: p.pod, uid: p.uid };
      for (const k of PEER_FLAGS) if (p[k] !== undefined && p[k] !== peerDefaults[k]) entry[k] = p[k];
      return entry;
    }),
  };
}
