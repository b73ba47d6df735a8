import type { Condition } from '../api/types.generated.js';

export type ConditionStatus = Condition['status'];

export interface ConditionUpdate {
  type: string;
  status: ConditionStatus;
  reason: string;
  message: string;
}

/**
 * Sets a condition the Kubernetes way: `lastTransitionTime` moves only when the status flips;
 * reason, message and observedGeneration follow the latest computation. Order is kept stable
 * (existing conditions stay where they are, new ones are appended).
 */
export function setCondition(
  conditions: readonly Condition[],
  update: ConditionUpdate,
  now: Date,
  generation: number,
): Condition[] {
  const old = conditions.find((c) => c.type === update.type);
  const next: Condition = {
    type: update.type,
    status: update.status,
    observedGeneration: generation,
    lastTransitionTime: old && old.status === update.status ? old.lastTransitionTime : now.toISOString(),
    reason: update.reason,
    message: update.message,
  };
  return old ? conditions.map((c) => (c.type === update.type ? next : c)) : [...conditions, next];
}

export function conditionOf(
  conditions: readonly Condition[] | undefined,
  type: string,
): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}
