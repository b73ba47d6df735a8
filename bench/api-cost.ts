/**
 * What the API server served in a measured window, from two scrapes of its own /metrics:
 * requests per verb (`apiserver_request_total`) and response bytes per verb
 * (`apiserver_response_sizes_sum`) for pods, plus the ClusterTopology status writes and the
 * total over every resource. Pure: two parsed scrapes and the window's length in.
 *
 * The API server counts a request when it ends, so a WATCH shows up when it closes; and it
 * records no response size for WATCH (watch events are not in `apiserver_response_sizes`).
 */
import { counterDelta, sumWhere, type LabelFilter, type Sample } from './prometheus.js';
import { perMinute } from './stats.js';

export interface WindowCost {
  ms: number;
  /** Requests on resource=pods (subresource "": not status writes) per verb, in the window. */
  podRequests: Record<string, number>;
  /** Response bytes on resource=pods per verb, in the window. */
  podBytes: Record<string, number>;
  /** PATCH/PUT of clustertopologies/status. */
  statusWrites: number;
  /** Requests on every resource (non-resource URLs such as /metrics excluded). */
  allResourceRequests: number;
}

const toRecord = (m: Map<string, number>) => Object.fromEntries([...m].filter(([, v]) => v > 0));

export function windowCost(before: readonly Sample[], after: readonly Sample[], ms: number): WindowCost {
  const pods = { resource: 'pods', subresource: (v: string | undefined) => !v };
  const statusWrites = counterDelta(before, after, 'apiserver_request_total', 'verb', {
    resource: 'clustertopologies',
    subresource: 'status',
  });
  const all = counterDelta(before, after, 'apiserver_request_total', 'resource', {
    resource: (v) => !!v,
  });
  return {
    ms,
    podRequests: toRecord(counterDelta(before, after, 'apiserver_request_total', 'verb', pods)),
    podBytes: toRecord(counterDelta(before, after, 'apiserver_response_sizes_sum', 'verb', pods)),
    statusWrites: (statusWrites.get('PATCH') ?? 0) + (statusWrites.get('UPDATE') ?? 0),
    allResourceRequests: [...all.values()].reduce((a, b) => a + b, 0),
  };
}

/** LIST requests on pods per minute in a window. */
export const listsPerMinute = (w: WindowCost) => perMinute(w.podRequests.LIST ?? 0, w.ms);
/** LIST response bytes on pods per minute in a window. */
export const listBytesPerMinute = (w: WindowCost) => perMinute(w.podBytes.LIST ?? 0, w.ms);

/**
 * Pairs the i-th window of one side with the i-th of the other and divides: how many times
 * more the per-pod pollers cost than the operator. Infinity when the operator made none.
 */
export function ratios(numerators: readonly number[], denominators: readonly number[]): number[] {
  const n = Math.min(numerators.length, denominators.length);
  return Array.from({ length: n }, (_, i) => numerators[i]! / denominators[i]!);
}

/**
 * The mean of a Prometheus histogram or summary between two scrapes (Δ`_sum` ÷ Δ`_count`) over
 * the series passing `filter`; NaN when nothing was observed in between.
 */
export function meanBetween(
  before: readonly Sample[],
  after: readonly Sample[],
  base: string,
  filter: LabelFilter = {},
): { count: number; mean: number } {
  const count = sumWhere(after, `${base}_count`, filter) - sumWhere(before, `${base}_count`, filter);
  const sum = sumWhere(after, `${base}_sum`, filter) - sumWhere(before, `${base}_sum`, filter);
  return { count, mean: count > 0 ? sum / count : NaN };
}
