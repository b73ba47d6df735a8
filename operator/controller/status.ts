import type { ClusterTopologyStatus, ExcludedPod, Peer } from '../api/types.generated.js';
import type { ResolvedSpec } from '../api/validate.js';
import { LIGHT_PEERS_ABOVE } from '../api/schema.js';
import { settlePeers } from '../naming/index.js';
import { analyzePeers, quorumAtRiskCondition } from '../failure-domains/index.js';
import { isForbidden, type Failure } from '../kube/reflector-machine.js';
import { lastResponseOf, nextLastFailure, type PollView } from './last-response.js';
import type { PodSummary } from './pod-summary.js';
import { lightPeers } from '../protocol/publish.js';
import { withPeerDefaults } from '../protocol/read.js';
import {
  Conditions,
  failedConditions,
  listedConditions,
  listingConditions,
  refusedConditions,
} from './status-conditions.js';

/**
 * The status of one ClusterTopology as a pure function of what the operator knows:
 *
 * | the last list of pods      | peers                                                     | lastResponse      | Ready / Degraded                  |
 * |----------------------------|-----------------------------------------------------------|-------------------|-----------------------------------|
 * | 200                        | resolved from the pods (kept current by the watch)        | 200 OK            | True / False                      |
 * | 401, 403                   | `onForbidden: Disconnect` → none; `Retain` → last known    | the code          | False / True (reason Forbidden…)  |
 * | any other status           | last known                                                | the code          | False / True                      |
 * | no answer                  | last known                                                | TransportError    | False / True                      |
 * | not listed: invalid spec   | last known                                                | unchanged         | False / True (InvalidSpec)        |
 * | not listed: cross-namespace| none (nothing of another namespace is ever published)    | dropped (unknown) | False / True (CrossNamespaceDenied) |
 *
 * Only a list that once succeeded is "known"; an unknown list goes out as the status protocol's
 * "unknown" (docs/status-protocol.md §3–4): without a peers array (a failure before any success)
 * or without lastResponse (a refusal that does not keep the list) — never as an empty one, so
 * readers keep what they have. Such a status also carries no lastPollTime.
 *
 * "Last known" is the previous status's list, so an operator restart keeps it too.
 * `lastResponse.since` and each condition's `lastTransitionTime` move only when the outcome
 * changes, so recomputing the same world gives the same status, whenever and wherever.
 *
 * `lastFailure` keeps the latest run of failed lists after it ended: its first answer, `since`
 * and `until` (the first success after it). The outcome (lastResponse, lastFailure) carries over
 * from a status computed but never written (`unwritten`): while the API server is down nothing
 * can be written, and its TransportError is published once it is back.
 */

export interface StatusInput {
  generation: number;
  previous: ClusterTopologyStatus | undefined;
  now: Date;
  /** Undefined only together with a refusal (an invalid spec). */
  spec: ResolvedSpec | undefined;
  /** The namespace whose pods are listed. */
  namespace: string;
  /** Set when the topology may not be served at all (cross-namespace, invalid spec). */
  refusal?: { reason: string; message: string };
  /** The last list's outcome; undefined: not listed yet. */
  poll?: PollView;
  /** A status computed after `previous` whose write failed: its outcome carries over. */
  unwritten?: ClusterTopologyStatus;
  /** The pods the selector matches now, summarized with spec.naming (read only when the last list succeeded). */
  pods: readonly PodSummary[];
  /** Node labels by Node name; undefined for a Node that does not exist (or is not known yet). */
  nodeLabels: (node: string) => Readonly<Record<string, string>> | undefined;
  /** Above this many peers each carries the reader fields only (default LIGHT_PEERS_ABOVE). */
  lightPeersAbove?: number;
}

/**
 * The peers as written: above LIGHT_PEERS_ABOVE, each with the fields readers use only and its
 * flags against status.peerDefaults (lightPeers: the rest is most of a large status's size, and
 * the API server's work on each write grows with it).
 */
function published(
  peers: readonly Peer[],
  lightAbove: number,
): Pick<ClusterTopologyStatus, 'peers' | 'peerDefaults'> {
  return peers.length <= lightAbove ? { peers: peers as Peer[] } : lightPeers(peers);
}

/** The labels of the Node a peer runs on: from the peer, else (a large status's kept peer) from its pod. */
function nodeLabelsOf(
  peer: Peer,
  pod: PodSummary | undefined,
  nodeLabels: StatusInput['nodeLabels'],
): Readonly<Record<string, string>> | undefined {
  const node = peer.node ?? (pod?.verdict.ok ? pod.verdict.peer.node : undefined);
  return node ? nodeLabels(node) : undefined;
}

/** The peer list a status publishes, and what the analysis needs to know of it. */
interface PeerList {
  peers: Peer[];
  excluded: ExcludedPod[];
  /** Whether the list was ever listed; an unknown one is published as "unknown". */
  known: boolean;
  /** Emptied on purpose: a 401/403 under `onForbidden: Disconnect`. */
  disconnect: boolean;
  /** Readiness by pod name, for the analysis. */
  readyByPod: Map<string, boolean>;
}

export function computeStatus(input: StatusInput): ClusterTopologyStatus {
  const { previous, now, generation, spec, poll } = input;
  const conditions = new Conditions(previous?.conditions, now, generation);

  if (input.refusal) return refusedStatus(input.refusal, previous, generation, conditions);
  if (!spec) throw new Error('computeStatus: a spec is needed unless the topology is refused');
  // Not listed yet: keep what the status says (an operator restart must not flap it).
  if (!poll) return previous ?? firstListStatus(generation, conditions);

  // 1. The answer: lastResponse and the run of failures, after the last status computed.
  const before = input.unwritten ?? previous;
  const lastResponse = lastResponseOf(before, poll);
  const lastFailure = nextLastFailure(before, poll);

  // 2. The list: resolved from the pods, or the last known one (none: onForbidden Disconnect).
  const list = poll.ok ? listedPeers(input.pods, spec) : keptPeers(previous, poll.failure, spec);

  // 3. Ready and Degraded say how the list went; ReadinessDeadlockRisk whether readiness can deadlock.
  if (poll.ok) listedConditions(conditions, list.peers.length, list.excluded, spec.membership);
  else failedConditions(conditions, poll.failure, input.namespace, list);

  // 4. The failure-domain analysis of the peers, and QuorumAtRisk from it.
  const pods = new Map(input.pods.map((p) => [p.metadata.name, p]));
  const failureDomains = analyzePeers(
    list.peers.map((p) => ({
      name: p.pod,
      nodeLabels: nodeLabelsOf(p, pods.get(p.pod), input.nodeLabels),
      ready: list.readyByPod.get(p.pod) ?? false,
      podLabels: pods.get(p.pod)?.labels,
      votes: pods.get(p.pod)?.votes,
    })),
    spec.failureDomains,
  );
  conditions.set({ type: 'QuorumAtRisk', ...quorumAtRiskCondition(failureDomains) });

  return {
    observedGeneration: generation,
    peerCount: list.peers.length,
    excludedCount: list.excluded.length,
    // No list has succeeded yet and none is kept: no peers array, the protocol's "unknown".
    ...(list.known || previous?.peers !== undefined
      ? published(list.peers, input.lightPeersAbove ?? LIGHT_PEERS_ABOVE)
      : {}),
    excluded: list.excluded,
    lastResponse,
    ...(lastFailure ? { lastFailure } : {}),
    ...(list.known ? { lastPollTime: poll.at.toISOString() } : {}),
    failureDomains,
    conditions: conditions.list,
  };
}

/**
 * Not listed at all. An invalid spec keeps the last list (a typo must not disconnect a cluster);
 * a cross-namespace topology publishes nothing. A list that is not kept goes out without
 * lastResponse, the protocol's "unknown"; neither carries lastPollTime.
 */
function refusedStatus(
  refusal: { reason: string; message: string },
  previous: ClusterTopologyStatus | undefined,
  generation: number,
  conditions: Conditions,
): ClusterTopologyStatus {
  const keep = refusal.reason !== 'CrossNamespaceDenied';
  refusedConditions(conditions, refusal);
  const peers = keep ? (previous?.peers ?? []) : [];
  const excluded = keep ? (previous?.excluded ?? []) : [];
  return {
    observedGeneration: generation,
    peerCount: peers.length,
    excludedCount: excluded.length,
    peers,
    ...(keep && peers.length && previous?.peerDefaults ? { peerDefaults: previous.peerDefaults } : {}),
    excluded,
    ...(keep && previous?.lastResponse ? { lastResponse: previous.lastResponse } : {}),
    ...(keep && previous?.lastFailure ? { lastFailure: previous.lastFailure } : {}),
    conditions: conditions.list,
  };
}

function firstListStatus(generation: number, conditions: Conditions): ClusterTopologyStatus {
  listingConditions(conditions);
  return { observedGeneration: generation, conditions: conditions.list };
}

function listedPeers(pods: readonly PodSummary[], spec: ResolvedSpec): PeerList {
  const { peers, excluded } = settlePeers(
    pods.map((p) => p.verdict),
    spec.naming,
  );
  const readyByPod = new Map(pods.map((p) => [p.metadata.name, p.ready]));
  return { peers, excluded, known: true, disconnect: false, readyByPod };
}

/**
 * The last known list after a failed list, or none under `onForbidden: Disconnect`. Only a list
 * that once succeeded (the previous status was polled) is known. Readiness is only known from a
 * fresh list: the kept peers count as ready, as they were.
 */
function keptPeers(
  previous: ClusterTopologyStatus | undefined,
  failure: Failure,
  spec: ResolvedSpec,
): PeerList {
  const disconnect = isForbidden(failure) && spec.onForbidden === 'Disconnect';
  // As the previous status meant them: a large one's flags are filled in from its peerDefaults.
  const peers = disconnect ? [] : withPeerDefaults(previous?.peers ?? [], previous?.peerDefaults);
  return {
    peers,
    excluded: disconnect ? [] : (previous?.excluded ?? []),
    known: disconnect || previous?.lastPollTime !== undefined,
    readyByPod: new Map(peers.map((p) => [p.pod, true])),
    disconnect,
  };
}
