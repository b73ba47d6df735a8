import { parseDuration } from '../api/validate.js';
import { DEFAULT_POLLING_INTERVAL } from '../api/schema.js';
import type { ClusterTopologyStatus } from '../api/types.generated.js';
import { sanitizeCell } from '../naming/quote.js';

/**
 * Why a ClusterTopology's status may not describe the cluster as it is now; `analyze` and
 * `explain` print these beside their answer so nobody acts on a stale picture unawares:
 * - the spec changed and the operator has not caught up (observedGeneration < generation);
 * - the last list of pods failed, so peers and analysis are the last known ones;
 * - nobody refreshes it: a serving operator sets lastPollTime at least every pollingInterval
 *   (its heartbeat writes at most once a minute), so one older than twice the interval plus two
 *   minutes means no operator has polled it for a while.
 * Pure; every value taken from the status is made terminal-safe.
 */

export interface CaveatInput {
  generation?: number;
  pollingInterval?: string;
  status: Pick<ClusterTopologyStatus, 'observedGeneration' | 'lastPollTime' | 'lastResponse'>;
  now: Date;
}

const safe = sanitizeCell;

export function statusCaveats({ generation, pollingInterval, status, now }: CaveatInput): string[] {
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
  const stale = staleFor(status.lastPollTime, pollingInterval, now);
  if (stale !== undefined) notes.push(stale);
  return notes;
}

function staleFor(
  lastPollTime: string | undefined,
  pollingInterval: string | undefined,
  now: Date,
): string | undefined {
  if (lastPollTime === undefined) return undefined;
  const last = Date.parse(lastPollTime);
  if (Number.isNaN(last)) return undefined;
  const intervalMs = parseDuration(pollingInterval ?? DEFAULT_POLLING_INTERVAL) ?? 10_000;
  const age = now.getTime() - last;
  if (age <= 2 * intervalMs + 120_000) return undefined;
  return `the status was last refreshed ${describeAge(age)} ago (lastPollTime ${safe(lastPollTime)}); is the operator running and serving this namespace?`;
}

function describeAge(ms: number): string {
  const minutes = Math.floor(ms / 60_000);
  if (minutes < 120) return `${minutes} minutes`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours} hours`;
  return `${Math.floor(hours / 24)} days`;
}
