import { describe, expect, it } from '@jest/globals';
import { formatBytes, percentile, perMinute, summarize } from '../../../bench/stats.js';

describe('percentile (nearest rank)', () => {
  const hundred = Array.from({ length: 100 }, (_, i) => i + 1); // 1 … 100

  it('returns observed samples, never interpolated ones', () => {
    expect(percentile(hundred, 50)).toBe(50);
    expect(percentile(hundred, 99)).toBe(99);
    expect(percentile(hundred, 100)).toBe(100);
    expect(percentile([1, 2, 3, 4], 50)).toBe(2);
    expect(percentile([1, 2, 3, 4], 51)).toBe(3);
  });

  it('gives the minimum for p = 0 and ignores input order', () => {
    expect(percentile([5, 3, 9], 0)).toBe(3);
    expect(percentile([9, 1, 5], 100)).toBe(9);
    expect(percentile([7], 99)).toBe(7);
  });

  it('p99 of few samples is the maximum', () => {
    expect(percentile([10, 20, 30, 40, 50], 99)).toBe(50);
  });

  it('does not change its input', () => {
    const xs = [3, 1, 2];
    percentile(xs, 50);
    expect(xs).toEqual([3, 1, 2]);
  });

  it('is NaN for no samples and refuses a p outside [0, 100]', () => {
    expect(percentile([], 50)).toBeNaN();
    expect(() => percentile([1], 101)).toThrow(RangeError);
    expect(() => percentile([1], -1)).toThrow(RangeError);
    expect(() => percentile([1], NaN)).toThrow(RangeError);
  });
});

describe('summarize', () => {
  it('summarizes samples', () => {
    expect(summarize([4, 1, 3, 2])).toEqual({ n: 4, min: 1, p50: 2, p90: 4, p99: 4, max: 4, mean: 2.5 });
  });
  it('is all NaN (n = 0) for no samples', () => {
    const s = summarize([]);
    expect(s.n).toBe(0);
    expect(s.min).toBeNaN();
    expect(s.mean).toBeNaN();
  });
});

describe('perMinute', () => {
  it('scales a count over a window to a minute', () => {
    expect(perMinute(10, 30_000)).toBe(20);
    expect(perMinute(6, 60_000)).toBe(6);
    expect(perMinute(0, 1000)).toBe(0);
  });
  it('refuses an empty window', () => {
    expect(() => perMinute(1, 0)).toThrow(RangeError);
  });
});

describe('formatBytes', () => {
  it('uses binary prefixes', () => {
    expect(formatBytes(512)).toBe('512 B');
    expect(formatBytes(1536)).toBe('1.50 KiB');
    expect(formatBytes(1.5 * 1024 * 1024)).toBe('1.50 MiB');
    expect(formatBytes(NaN)).toBe('NaN');
  });
});
