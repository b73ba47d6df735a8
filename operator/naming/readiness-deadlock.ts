/**
 * The ReadinessDeadlockRisk condition: with `spec.membership.peers: Ready` only pods whose Ready
 * condition is True are peers, so an application whose readiness waits for its cluster to form
 * can never become ready — no pod is a peer, so none ever joins, so none is ever ready.
 *
 * | membership.peers | what the pods show                             | condition                        |
 * |------------------|------------------------------------------------|----------------------------------|
 * | Ready            | no peer, one or more pods excluded PodNotReady | True, NoPodReady (maybe stuck)   |
 * | Ready            | anything else                                  | True, ReadyPodsOnly (a warning)  |
 * | Running          | —                                              | False, RunningPodsArePeers, only when the condition was there before (absent otherwise) |
 */
import type { Excluded, MembershipSettings } from './types.js';

export const READINESS_DEADLOCK_CONDITION = 'ReadinessDeadlockRisk';

export interface ConditionVerdict {
  status: 'True' | 'False';
  reason: string;
  message: string;
}

export function readinessDeadlockRisk(
  membership: MembershipSettings,
  peerCount: number,
  excluded: readonly Excluded[],
): ConditionVerdict {
  if (membership.peers === 'Running')
    return {
      status: 'False',
      reason: 'RunningPodsArePeers',
      message: 'spec.membership.peers is Running: a running pod with an IP is a peer, ready or not.',
    };
  const notReady = excluded.filter((e) => e.reason === 'PodNotReady').length;
  if (peerCount === 0 && notReady > 0)
    return {
      status: 'True',
      reason: 'NoPodReady',
      message: `spec.membership.peers is Ready and none of the ${notReady} pods that would be peers is ready, so the cluster has no members. If the application's readiness waits for its cluster to form, no pod can ever become ready: make the readiness probe independent of clustering, or set spec.membership.peers to Running.`,
    };
  return {
    status: 'True',
    reason: 'ReadyPodsOnly',
    message: `spec.membership.peers is Ready: only ready pods are peers${notReady > 0 ? ` (${notReady} not ready now)` : ''}. An application whose readiness waits for its cluster to form never becomes ready this way; its readiness probe must not depend on clustering.`,
  };
}
