/**
 * Small pure statistics for the benchmarks: percentiles (nearest rank), a summary, and the
 * per-minute scaling of a count measured over a window.
 */

/**
 * The p-th percentile by the nearest-rank method: the smallest sample such that at least p % of
 * the samples are ≤ it (p in [0, 100]; p = 0 gives the minimum). NaN for no samples. Nearest
 * rank never interpolates, so p99 of 100 samples is the second largest — an observed latency,
 * not a made-up one.
 */
export function percentile(xs: readonly number[], p: number): number {
  if (!(p >= 0 && p <= 100)) throw new RangeError(`percentile: p must be within [0, 100], got ${p}`);
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * s.length));
  return s[rank - 1]!;
}

export interface Summary {
  n: number;
  min: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
}

export function summarize(xs: readonly number[]): Summary {
  const n = xs.length;
  return {
    n,
    min: n ? Math.min(...xs) : NaN,
    p50: percentile(xs, 50),
    p90: percentile(xs, 90),
    p99: percentile(xs, 99),
    max: n ? Math.max(...xs) : NaN,
    mean: n ? xs.reduce((a, b) => a + b, 0) / n : NaN,
  };
}

/** A count observed over `windowMs`, as a rate per minute. */
export function perMinute(count: number, windowMs: number): number {
  if (!(windowMs > 0)) throw new RangeError(`perMinute: window must be positive, got ${windowMs}`);
  return (count * 60_000) / windowMs;
}

/** Bytes in a human unit (binary prefixes), e.g. 1.50 MiB. */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes)) return String(bytes);
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = bytes;
  let u = 0;
  while (Math.abs(v) >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return u === 0 ? `${v.toFixed(0)} B` : `${v.toFixed(2)} ${units[u]}`;
}
