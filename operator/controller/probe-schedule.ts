/**
 * When a namespace's pods are probed, and what a probe's answer means (pure; the random numbers
 * are the caller's). See `namespace-pods.ts`.
 */

/**
 * The wait before the next probe: within the last tenth of the interval, so a topology is checked
 * at least every interval and the namespaces, each with its own random phase, do not drift into
 * step.
 */
export function probeDelay(intervalMs: number, random: number): number {
  return Math.round(intervalMs * (1 - 0.1 * random));
}

/**
 * What a probe tells the topologies of its namespace: `ok` (the API server answered and the watch
 * is up: the pods held are current), `relist` (it answered, but the watch is down: list the
 * namespace, whose answer is the poll), `failed` (it did not answer 200: that answer is the poll),
 * or `wait` (the namespace's first list is still under way: it will answer for them).
 */
export function probeOutcome(
  failure: unknown,
  synced: boolean,
  watchFailing: boolean,
): 'ok' | 'relist' | 'failed' | 'wait' {
  if (failure) return 'failed';
  if (watchFailing) return 'relist';
  return synced ? 'ok' : 'wait';
}
