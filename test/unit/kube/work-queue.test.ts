// No real time passes in these tests: reconciles finish when the test says so (a gate), and
// delays run on jest's fake clock, so a loaded machine cannot change what they see.
import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { WorkQueue, type ReconcileOutcome } from '../../../operator/kube/work-queue.js';

/** A reconcile that runs until the test opens its gate. */
function gated() {
  const open: (() => void)[] = [];
  return {
    wait: () => new Promise<void>((r) => open.push(r)),
    openAll: () => open.splice(0).forEach((r) => r()),
    get waiting() {
      return open.length;
    },
  };
}

// Lets promise callbacks (the queue's own continuations) run; no timers involved.
const settle = async () => {
  for (let k = 0; k < 10; k++) await Promise.resolve();
};

describe('the work queue', () => {
  it('de-duplicates a waiting key and never runs one key twice at once (dirty keys run once more)', async () => {
    const seen: string[] = [];
    let running = 0;
    let maxParallelSameKey = 0;
    const gate = gated();
    const q = new WorkQueue({
      concurrency: 4,
      reconcile: async (k) => {
        running++;
        maxParallelSameKey = Math.max(maxParallelSameKey, running);
        seen.push(k);
        await gate.wait();
        running--;
        return { kind: 'Done' };
      },
    });
    q.add('a');
    q.add('a');
    await settle();
    expect(seen).toEqual(['a']);
    q.add('a'); // while processing: dirty
    q.add('a');
    await settle();
    expect(seen).toEqual(['a']);
    gate.openAll();
    await settle();
    expect(seen).toEqual(['a', 'a']);
    gate.openAll();
    await q.idle();
    expect(seen).toEqual(['a', 'a']);
    expect(maxParallelSameKey).toBe(1);
  });

  it('bounds concurrency', async () => {
    let running = 0;
    let peak = 0;
    const gate = gated();
    const done: string[] = [];
    const q = new WorkQueue({
      concurrency: 2,
      reconcile: async (k) => {
        peak = Math.max(peak, ++running);
        await gate.wait();
        running--;
        done.push(k);
        return { kind: 'Done' };
      },
    });
    for (const k of 'abcdef') q.add(k);
    await settle();
    expect(gate.waiting).toBe(2);
    while (done.length < 6) {
      gate.openAll();
      await settle();
    }
    await q.idle();
    expect(peak).toBe(2);
    expect(done.sort().join('')).toBe('abcdef');
  });

  describe('on a fake clock', () => {
    beforeEach(() => {
      jest.useFakeTimers({ now: 1_000_000 });
    });
    afterEach(() => {
      jest.useRealTimers();
    });

    it('maps outcomes in one place: an error backs off per key and grows; Done forgets', async () => {
      const outcomes: ReconcileOutcome[] = [
        { kind: 'Error', error: new Error('x') },
        { kind: 'Error', error: new Error('y') },
        { kind: 'Error', error: new Error('z') },
        { kind: 'Done' },
      ];
      const times: number[] = [];
      const errors: string[] = [];
      const q = new WorkQueue({
        concurrency: 1,
        baseDelayMs: 20,
        reconcile: async () => (times.push(Date.now()), outcomes.shift()!),
        onError: (_k, e) => errors.push((e as Error).message),
      });
      q.add('k');
      await settle();
      expect(times).toEqual([1_000_000]);
      expect(q.failuresOf('k')).toBe(1);
      await jest.advanceTimersByTimeAsync(19);
      expect(times).toHaveLength(1);
      await jest.advanceTimersByTimeAsync(1);
      expect(times).toEqual([1_000_000, 1_000_020]);
      expect(q.failuresOf('k')).toBe(2);
      await jest.advanceTimersByTimeAsync(39);
      expect(times).toHaveLength(2);
      await jest.advanceTimersByTimeAsync(1);
      expect(times).toEqual([1_000_000, 1_000_020, 1_000_060]);
      expect(q.failuresOf('k')).toBe(3);
      await jest.advanceTimersByTimeAsync(79);
      expect(times).toHaveLength(3);
      await jest.advanceTimersByTimeAsync(1);
      expect(times).toEqual([1_000_000, 1_000_020, 1_000_060, 1_000_140]);
      expect(errors).toEqual(['x', 'y', 'z']);
      expect(q.failuresOf('k')).toBe(0);
      await jest.advanceTimersByTimeAsync(10_000);
      expect(times).toHaveLength(4);
    });

    it('requeues after a delay; the earliest delay wins; a thrown reconcile is an error', async () => {
      let n = 0;
      const q = new WorkQueue({
        concurrency: 1,
        baseDelayMs: 10,
        reconcile: async () => (n++ === 0 ? { kind: 'RequeueAfter', ms: 30 } : { kind: 'Done' }),
      });
      q.add('k');
      await settle();
      expect(n).toBe(1);
      q.addAfter('k', 50); // later than the pending 30 ms: ignored
      await jest.advanceTimersByTimeAsync(29);
      expect(n).toBe(1);
      await jest.advanceTimersByTimeAsync(1);
      expect(n).toBe(2);
      await jest.advanceTimersByTimeAsync(100);
      expect(n).toBe(2);

      q.addAfter('k', 40);
      q.addAfter('k', 15); // earlier: wins
      await jest.advanceTimersByTimeAsync(15);
      expect(n).toBe(3);
      await jest.advanceTimersByTimeAsync(100);
      expect(n).toBe(3);

      const messages: string[] = [];
      const boom = new WorkQueue({
        concurrency: 1,
        reconcile: async () => {
          throw new Error('boom');
        },
        onError: (_k, e) => messages.push((e as Error).message),
      });
      boom.add('x');
      await settle();
      expect(messages).toEqual(['boom']);
      expect(boom.failuresOf('x')).toBe(1);
      boom.shutdown();
    });

    it('takes nothing after shutdown', async () => {
      let n = 0;
      const q = new WorkQueue({ concurrency: 1, reconcile: async () => (n++, { kind: 'Done' }) });
      q.shutdown();
      q.add('a');
      q.addAfter('b', 1);
      await jest.advanceTimersByTimeAsync(1000);
      expect(n).toBe(0);
    });
  });
});
