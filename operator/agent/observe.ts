import type { ClusterTopologyStatus, ExcludedPod, Peer } from '../api/types.generated.js';
import { parseDuration } from '../api/validate.js';
import type { Failure } from '../kube/reflector-machine.js';
import { HEARTBEAT_MS } from '../controller/status.js';
import { isStatusStale, type AgentInput } from './round.js';

/**
 * What the agent makes of what it read about its one ClusterTopology — a pure function, so
 * every case of "the agent never disconnects because of its own trouble" is a unit test:
 *
 * | what the agent read                          | input to the round loop        |
 * |----------------------------------------------|--------------------------------|
 * | nothing yet (the first read is under way)    | trouble NoStatusYet            |
 * | the read failed: 401/403                     | trouble Forbidden              |
 * | the read failed: other status or no answer   | trouble ApiUnreachable         |
 * | the object does not exist                    | trouble ObjectGone             |
 * | the object has no status from the operator   | trouble NoStatusYet            |
 * | lastPollTime older than the stale limit      | trouble StatusStale            |
 * | a current status                             | its peers (even none)          |
 *
 * The stale limit allows for the operator writing an unchanged status only once a minute:
 * a minute, plus three polling intervals, plus 30 s.
 */

export interface TopologyView {
  metadata: { name: string; namespace?: string; generation?: number };
  spec?: { pollingInterval?: string };
  status?: ClusterTopologyStatus;
}

export type ReadState =
  | { kind: 'pending' }
  | { kind: 'failed'; failure: Failure }
  | { kind: 'read'; object: TopologyView | undefined };

export const DEFAULT_POLLING_MS = 10_000;

export function pollingMsOf(object: TopologyView | undefined): number {
  const ms = object?.spec?.pollingInterval ? parseDuration(object.spec.pollingInterval) : undefined;
  return ms !== undefined && ms >= 1000 ? ms : DEFAULT_POLLING_MS;
}

export function staleLimitMs(pollingMs: number): number {
  return HEARTBEAT_MS + 3 * pollingMs + 30_000;
}

/**
 * `ownPod`: this agent's pod. Its own entry is never a peer to dial, whatever name the operator
 * computed for it (a wrong one is the self check's business).
 */
export function agentInputFrom(read: ReadState, now: Date, ownPod?: string): AgentInput {
  switch (read.kind) {
    case 'pending':
      return { kind: 'trouble', cause: 'NoStatusYet', detail: 'the first read is under way' };
    case 'failed': {
      const f = read.failure;
      const forbidden = f.code === 401 || f.code === 403;
      return {
        kind: 'trouble',
        cause: forbidden ? 'Forbidden' : 'ApiUnreachable',
        detail: f.code ? `${f.code} ${f.reason}: ${f.message}` : f.message,
      };
    }
    case 'read': {
      const o = read.object;
      if (!o) return { kind: 'trouble', cause: 'ObjectGone' };
      const st = o.status;
      if (!st || !st.lastResponse || !Array.isArray(st.peers))
        return { kind: 'trouble', cause: 'NoStatusYet' };
      const limit = staleLimitMs(pollingMsOf(o));
      if (isStatusStale(st.lastPollTime, now, limit))
        return {
          kind: 'trouble',
          cause: 'StatusStale',
          detail: `lastPollTime ${st.lastPollTime ?? 'missing'} is older than ${Math.round(limit / 1000)} s`,
        };
      return { kind: 'status', peers: st.peers.filter((p) => p.pod !== ownPod).map((p) => p.nodeName) };
    }
  }
}

/** Where this pod stands in the status: its peer entry, its exclusion, or absent. */
export type SelfEntry =
  { kind: 'peer'; peer: Peer } | { kind: 'excluded'; excluded: ExcludedPod } | { kind: 'absent' };

export function selfEntry(status: ClusterTopologyStatus | undefined, podName: string): SelfEntry {
  const peer = status?.peers?.find((p) => p.pod === podName);
  if (peer) return { kind: 'peer', peer };
  const excluded = status?.excluded?.find((e) => e.pod === podName);
  if (excluded) return { kind: 'excluded', excluded };
  return { kind: 'absent' };
}

export type SelfCheck =
  | { ok: true; message: string }
  | { ok: false; reason: 'NameMismatch' | 'Excluded' | 'NotSelected' | 'NameUnknown'; message: string };

/**
 * The seed's first cause of a silent non-cluster: the name the operator computed for this pod
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
