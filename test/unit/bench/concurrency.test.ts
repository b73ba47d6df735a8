import { describe, expect, it } from '@jest/globals';
import { mapLimit, pollerOffsets, Semaphore } from '../../../bench/concurrency.js';

const tick = () => new Promise<void>((r) => setImmediate(r));

describe('Semaphore', () => {
  it('admits at most `limit` holders and serves waiters in order', async () => {
    const sem = new Semaphore(2);
    await sem.acquire();
    await sem.acquire();
    const order: number[] = [];
    const third = sem.acquire().then(() => order.push(3));
    const fourth = sem.acquire().then(() => order.push(4));
    await tick();
    expect(order).toEqual([]);
    expect(sem.waiting).toBe(2);
    sem.release();
    await third;
    expect(order).toEqual([3]);
    expect(sem.inUse).toBe(2);
    sem.release();
    await fourth;
    expect(order).toEqual([3, 4]);
    sem.release();
    sem.release();
    expect(sem.inUse).toBe(0);
    expect(sem.peak).toBe(2);
    expect(() => sem.release()).toThrow(/without acquire/);
  });

  it('releases on failure in `with`', async () => {
    const sem = new Semaphore(1);
    await expect(sem.with(async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(sem.inUse).toBe(0);
    await expect(sem.with(async () => 5)).resolves.toBe(5);
  });

  it('refuses a bad limit', () => {
    expect(() => new Semaphore(0)).toThrow(RangeError);
    expect(() => new Semaphore(1.5)).toThrow(RangeError);
  });
});

describe('mapLimit', () => {
  it('keeps input order and never exceeds the limit', async () => {
    let inFlight = 0;
    let peak = 0;
    const out = await mapLimit([5, 1, 4, 2, 3, 0], 2, async (x, i) => {
      inFlight++;
      peak = Math.max(peak, inFlight);
      await new Promise((r) => setTimeout(r, x));
      inFlight--;
      return x * 10 + i;
    });
    expect(out).toEqual([50, 11, 42, 23, 34, 5]);
    expect(peak).toBe(2);
  });

  it('handles no items and a limit above the count', async () => {
    expect(await mapLimit([], 4, async () => 1)).toEqual([]);
    expect(await mapLimit([1, 2], 10, async (x) => x + 1)).toEqual([2, 3]);
  });

  it('rejects on the first failure and starts nothing after it', async () => {
    const started: number[] = [];
    await expect(
      mapLimit([0, 1, 2, 3, 4], 1, async (x) => {
        started.push(x);
        if (x === 1) throw new Error('no');
        return x;
      }),
    ).rejects.toThrow('no');
    expect(started).toEqual([0, 1]);
  });
});

describe('pollerOffsets', () => {
  it('spreads pollers evenly over one period', () => {
    expect(pollerOffsets(4, 10_000)).toEqual([0, 2500, 5000, 7500]);
    expect(pollerOffsets(0, 10_000)).toEqual([]);
    const many = pollerOffsets(1000, 10_000);
    expect(many).toHaveLength(1000);
    expect(Math.max(...many)).toBeLessThan(10_000);
  });
  it('refuses a bad count', () => {
    expect(() => pollerOffsets(-1, 1)).toThrow(RangeError);
  });
});
