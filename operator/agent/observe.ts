import type { ClusterTopologyStatus, ExcludedPod, Peer } from '../api/types.generated.js';
import { parseDuration } from '../api/duration.js';
import {
  exclusionsOfPod,
  peerNodeNames,
  peerOfPod,
  type Reading,
  type TopologyObject,
} from '../protocol/read.js';
import type { AgentInput } from './round.js';

/**
 * What the agent makes of what it read about its one ClusterTopology and its liveness Lease (the
 * status protocol's `Reading`, `protocol/read.ts`) — pure, so every case of "the agent never
 * disconnects because of its own trouble" is a unit test:
 *
 * | what the agent read                              | input to the round loop        |
 * |--------------------------------------------------|--------------------------------|
 * | nothing yet (the first read is under way)        | trouble NoStatusYet            |
 * | the read or the watch failed: 401/403            | trouble Forbidden              |
 * | the read or the watch failed: other, no answer   | trouble ApiUnreachable         |
 * | the object does not exist                        | trouble ObjectGone             |
 * | the object has no status from the operator       | trouble NoStatusYet            |
 * | a status it cannot take whole (a wrong type)     | trouble NoStatusYet            |
 * | the liveness Lease is stale (the one rule)       | trouble StatusStale            |
 * | a status, Lease live or liveness unknown         | its peers (even none)          |
 *
 * The staleness rule is the protocol's, stated once in docs/status-protocol.md.
 */

export const DEFAULT_POLLING_MS = 10_000;

export function pollingMsOf(object: TopologyObject | undefined): number {
  const ms = object?.spec?.pollingInterval ? parseDuration(object.spec.pollingInterval) : undefined;
  return ms !== undefined && ms >= 1000 ? ms : DEFAULT_POLLING_MS;
}

/**
 * `ownPod`: this agent's pod. Its own entry is never a peer to dial, whatever name the operator
 * computed for it (a wrong one is the self check's business).
 */
export function agentInputFrom(reading: Reading, ownPod?: string): AgentInput {
  if (!reading.act)
    return reading.detail === undefined
      ? { kind: 'trouble', cause: reading.trouble }
      : { kind: 'trouble', cause: reading.trouble, detail: reading.detail };
  return { kind: 'status', peers: peerNodeNames(reading.list.peers, ownPod) };
}

/** Where this pod stands in the status: its peer entry, its exclusion, or absent. */
export type SelfEntry =
  { kind: 'peer'; peer: Peer } | { kind: 'excluded'; excluded: ExcludedPod } | { kind: 'absent' };

export function selfEntry(status: ClusterTopologyStatus | undefined, podName: string): SelfEntry {
  const peer = peerOfPod(status, podName);
  if (peer) return { kind: 'peer', peer };
  const excluded = exclusionsOfPod(status, podName)[0];
  if (excluded) return { kind: 'excluded', excluded };
  return { kind: 'absent' };
}

export type SelfCheck =
  | { ok: true; message: string }
  | { ok: false; reason: 'NameMismatch' | 'Excluded' | 'NotSelected' | 'NameUnknown'; message: string };

/**
 * The first cause of a silent non-cluster: the name the operator computed for this pod
 * (what every peer will dial) is not the name the local node really has.
 */
export function checkSelf(entry: SelfEntry, realName: string | undefined, podName: string): SelfCheck {
  switch (entry.kind) {
    case 'absent':
      return {
        ok: false,
        reason: 'NotSelected',
        message: `pod ${podName} is neither a peer nor excluded: the topology's selector does not select it (check its labels and namespace)`,
      };
    case 'excluded':
      return {
        ok: false,
        reason: 'Excluded',
        message: `pod ${podName} is excluded by the operator (${entry.excluded.reason}): ${entry.excluded.message}`,
      };
    case 'peer':
      if (realName === undefined)
        return {
          ok: false,
          reason: 'NameUnknown',
          message: `the local node's real name is unknown (set RELEASE_NODE or --node-name); the operator computed ${entry.peer.nodeName}`,
        };
      if (entry.peer.nodeName !== realName)
        return {
          ok: false,
          reason: 'NameMismatch',
          message: `the operator computed the node name ${entry.peer.nodeName} for pod ${podName}, but the local node is ${realName}: peers dial a name that does not exist. Make the naming annotations and the release's node name (rel/env.sh.eex, RELEASE_NODE) agree.`,
        };
      return { ok: true, message: `pod ${podName} is peer ${realName}` };
  }
}
