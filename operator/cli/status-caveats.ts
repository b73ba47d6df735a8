import type { ClusterTopologyStatus } from '../api/types.generated.js';
import { sanitizeCell } from '../naming/quote.js';
import { livenessOf, type LeaseRead } from '../protocol/read.js';

/**
 * Why a ClusterTopology's status may not describe the cluster as it is now; `analyze` and
 * `explain` print these beside their answer so nobody acts on a stale picture unawares:
 * - the spec changed and the operator has not caught up (observedGeneration < generation);
 * - the last list of pods failed, so peers and analysis are the last known ones;
 * - nobody polls it: the operator's liveness Lease is stale, or missing — the status
 *   protocol's one staleness rule (docs/status-protocol.md), not a rule of this command's own.
 * Pure; every value taken from the status or the Lease is made terminal-safe.
 */

export interface CaveatInput {
  generation?: number;
  /** lastPollTime is not read: the status is written only when it changes (the Lease tells liveness). */
  status: Pick<ClusterTopologyStatus, 'observedGeneration' | 'lastResponse' | 'lastPollTime'>;
  /** What was read of the topology's liveness Lease (default: not read — nothing said). */
  lease?: LeaseRead;
  now: Date;
}

const safe = sanitizeCell;

export function statusCaveats({ generation, status, lease, now }: CaveatInput): string[] {
  const notes: string[] = [];
  if (
    generation !== undefined &&
    status.observedGeneration !== undefined &&
    status.observedGeneration < generation
  )
    notes.push(
      `the status is from generation ${status.observedGeneration} of the spec, which is now at ${generation}; the operator has not caught up yet`,
    );
  const r = status.lastResponse;
  if (r !== undefined && r.code !== '200')
    notes.push(
      `the last list of pods failed since ${safe(r.since)} (${safe(r.code)} ${safe(r.reason)}); the status shows the last known state`,
    );
  const live = livenessOf(lease ?? { kind: 'unread' }, now);
  if (live.state === 'stale')
    notes.push(
      `the operator last polled this topology ${describeAge(live.ageS * 1000)} ago (its liveness Lease was renewed at ${safe(live.renewTime)}, limit ${live.limitS} s); is the operator running and serving this namespace?`,
    );
  else if (live.state === 'unknown' && lease !== undefined && lease.kind !== 'unread')
    notes.push(`whether an operator polls this topology is unknown: ${safe(live.why)}`);
  return notes;
}

function describeAge(ms: number): string {
  const minutes = Math.floor(ms / 60_000);
  if (minutes < 120) return `${minutes} minutes`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours} hours`;
  return `${Math.floor(hours / 24)} days`;
}
