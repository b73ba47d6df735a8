import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { Backoff } from '../../../operator/kube/backoff.js';

/** A clock the test moves by hand. */
const clock = () => {
  let t = 1_000_000;
  return { now: () => t, advance: (ms: number) => (t += ms) };
};

describe('Backoff (client-go’s exponential backoff manager)', () => {
  const opts = { baseMs: 500, capMs: 30_000, resetAfterMs: 120_000 };

  it('doubles each retry up to the cap', () => {
    const c = clock();
    const b = new Backoff(opts, c.now, () => 0.999999);
    const delays: number[] = [];
    for (let i = 0; i < 10; i++) {
      const d = b.next();
      delays.push(d);
      c.advance(d);
    }
    expect(delays).toEqual([500, 1000, 2000, 4000, 8000, 16_000, 30_000, 30_000, 30_000, 30_000]);
  });

  it('jitters within the upper half of each step', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 0, max: 0.9999, noNaN: true }), { minLength: 1, maxLength: 12 }),
        (rs) => {
          const c = clock();
          let i = 0;
          const b = new Backoff(opts, c.now, () => rs[i]!);
          for (i = 0; i < rs.length; i++) {
            const ceiling = Math.min(opts.capMs, opts.baseMs * 2 ** i);
            const d = b.next();
            expect(d).toBeGreaterThanOrEqual(ceiling / 2);
            expect(d).toBeLessThanOrEqual(ceiling);
            c.advance(d);
          }
        },
      ),
    );
  });

  it('a lower ceiling (a polling interval) caps the steps, still jittered within its upper half', () => {
    const c = clock();
    const top = new Backoff(opts, c.now, () => 0.999999);
    const bottom = new Backoff(opts, c.now, () => 0);
    const tops = [1, 2, 3, 4].map(() => top.next(2000));
    const bottoms = [1, 2, 3, 4].map(() => bottom.next(2000));
    expect(tops).toEqual([500, 1000, 2000, 2000]);
    expect(bottoms).toEqual([250, 500, 1000, 1000]);
  });

  it('starts small again after a healthy period, not before', () => {
    const c = clock();
    const b = new Backoff(opts, c.now, () => 0.999999);
    for (let i = 0; i < 8; i++) b.next();
    c.advance(opts.resetAfterMs); // exactly the period since the last retry: not yet healthy long enough
    expect(b.next()).toBe(30_000);
    c.advance(opts.resetAfterMs + 1);
    expect(b.next()).toBe(500);
    expect(b.next()).toBe(1000);
  });
});
