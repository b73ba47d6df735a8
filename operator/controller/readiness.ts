/** What keeps the operator from being ready: a cache never listed, or a watch down over a minute. */

export interface CacheHealth {
  readonly name: string;
  /** A list has succeeded. */
  readonly synced: boolean;
  /** Since when (ms) the cache has not been watching; undefined while it is. */
  readonly downSince: number | undefined;
}

export const WATCH_DOWN_LIMIT_MS = 60_000;

export function notReady(caches: readonly CacheHealth[], now: number): string[] {
  const problems: string[] = [];
  for (const c of caches) {
    if (!c.synced) problems.push(`${c.name}: not listed yet`);
    else if (c.downSince !== undefined && now - c.downSince > WATCH_DOWN_LIMIT_MS)
      problems.push(`${c.name}: watch down for ${Math.round((now - c.downSince) / 1000)}s`);
  }
  return problems;
}
