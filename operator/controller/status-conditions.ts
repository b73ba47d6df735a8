import type { Condition, ExcludedPod } from '../api/types.generated.js';
import type { ResolvedSpec } from '../api/validate.js';
import { READINESS_DEADLOCK_CONDITION, readinessDeadlockRisk } from '../naming/readiness-deadlock.js';
import { isForbidden, type Failure } from '../kube/reflector-machine.js';
import { setCondition, type ConditionUpdate } from './conditions.js';
import { truncate } from '../failure-domains/text.js';

/**
 * The conditions of a ClusterTopology status for each outcome of a reconcile (the table in
 * `status.ts`): Ready and Degraded say how listing went, QuorumAtRisk what the analysis found
 * (set by `status.ts` from it), ReadinessDeadlockRisk whether pod readiness can deadlock.
 */

/** The conditions of a status being computed: each set moves lastTransitionTime only on a flip. */
export class Conditions {
  list: Condition[];
  constructor(
    previous: readonly Condition[] | undefined,
    private readonly now: Date,
    private readonly generation: number,
  ) {
    this.list = [...(previous ?? [])];
  }
  set(update: ConditionUpdate): void {
    this.list = setCondition(this.list, update, this.now, this.generation);
  }
  has(type: string): boolean {
    return this.list.some((c) => c.type === type);
  }
}

/** Refused (cross-namespace, invalid spec): not listed, no analysis. */
export function refusedConditions(
  conditions: Conditions,
  refusal: { reason: string; message: string },
): void {
  conditions.set({ type: 'Ready', status: 'False', ...refusal });
  conditions.set({ type: 'Degraded', status: 'True', ...refusal });
  conditions.set({
    type: 'QuorumAtRisk',
    status: 'Unknown',
    reason: refusal.reason,
    message: 'No analysis while the topology is refused.',
  });
}

/** Before the first list. */
export function listingConditions(conditions: Conditions): void {
  conditions.set({
    type: 'Ready',
    status: 'Unknown',
    reason: 'Listing',
    message: 'The first list of pods is under way.',
  });
}

/** After a successful list; ReadinessDeadlockRisk says whether pod readiness can deadlock. */
export function listedConditions(
  conditions: Conditions,
  peers: number,
  excluded: readonly ExcludedPod[],
  membership: ResolvedSpec['membership'],
): void {
  conditions.set({
    type: 'Ready',
    status: 'True',
    reason: 'Listed',
    message: `${peers} peers, ${excluded.length} excluded.`,
  });
  conditions.set({
    type: 'Degraded',
    status: 'False',
    reason: 'ListSucceeded',
    message: 'The last list of pods succeeded.',
  });
  // Present while membership.peers is Ready; turned False (not removed) when it goes back.
  const deadlock = readinessDeadlockRisk(membership, peers, excluded);
  if (deadlock.status === 'True' || conditions.has(READINESS_DEADLOCK_CONDITION))
    conditions.set({ type: READINESS_DEADLOCK_CONDITION, ...deadlock });
}

/** After a failed list: why, and what became of the peers (`list`: the kept list, or none). */
export function failedConditions(
  conditions: Conditions,
  failure: Failure,
  namespace: string,
  list: { peers: readonly unknown[]; known: boolean; disconnect: boolean },
): void {
  const kept = list.disconnect
    ? 'onForbidden is Disconnect: the peer list is empty, so agents disconnect.'
    : list.known
      ? `Keeping the last known ${list.peers.length} peers.`
      : 'No list of pods has succeeded yet; agents keep the connections they have.';
  const what =
    failure.code === undefined
      ? 'The API server did not answer'
      : `The API server answered ${failure.code} ${failure.reason}`;
  const reason =
    failure.code === undefined
      ? 'TransportError'
      : isForbidden(failure)
        ? 'Forbidden'
        : failure.code === 400
          ? 'InvalidSelector'
          : 'ListFailed';
  const message = `${what} to the list of pods in ${namespace}: ${truncate(failure.message, 500)} ${kept}`;
  conditions.set({ type: 'Ready', status: 'False', reason, message });
  conditions.set({ type: 'Degraded', status: 'True', reason, message });
}
