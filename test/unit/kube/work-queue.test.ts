import { describe, expect, it } from '@jest/globals';
import { WorkQueue, type ReconcileOutcome } from '../../../operator/kube/work-queue.js';

const tick = (ms = 0) => new Promise((r) => setTimeout(r, ms));

describe('the work queue', () => {
  it('de-duplicates a waiting key and never runs one key twice at once (dirty keys run once more)', async () => {
    const seen: string[] = [];
    let running = 0;
    let maxParallelSameKey = 0;
    const q = new WorkQueue({
      concurrency: 4,
      reconcile: async (k) => {
        running++;
        maxParallelSameKey = Math.max(maxParallelSameKey, running);
        seen.push(k);
        await tick(20);
        running--;
        return { kind: 'Done' };
      },
    });
    q.add('a');
    q.add('a');
    await tick(5);
    q.add('a'); // while processing: dirty
    q.add('a');
    await tick(100);
    await q.idle();
    expect(seen).toEqual(['a', 'a']);
    expect(maxParallelSameKey).toBe(1);
  });

  it('bounds concurrency', async () => {
    let running = 0;
    let peak = 0;
    const q = new WorkQueue({
      concurrency: 2,
      reconcile: async () => {
        peak = Math.max(peak, ++running);
        await tick(10);
        running--;
        return { kind: 'Done' };
      },
    });
    for (const k of 'abcdef') q.add(k);
    await tick(100);
    await q.idle();
    expect(peak).toBe(2);
  });

  it('maps outcomes in one place: an error backs off per key and grows; Done forgets', async () => {
    const outcomes: ReconcileOutcome[] = [
      { kind: 'Error', error: new Error('x') },
      { kind: 'Error', error: new Error('y') },
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
    await tick(200);
    expect(times).toHaveLength(3);
    expect(times[1]! - times[0]!).toBeGreaterThanOrEqual(18);
    expect(times[2]! - times[1]!).toBeGreaterThanOrEqual(38);
    expect(errors).toEqual(['x', 'y']);
    expect(q.failuresOf('k')).toBe(0);
  });

  it('requeues after a delay; the earliest delay wins; a thrown reconcile is an error', async () => {
    let n = 0;
    const q = new WorkQueue({
      concurrency: 1,
      baseDelayMs: 10,
      reconcile: async () => (n++ === 0 ? { kind: 'RequeueAfter', ms: 30 } : { kind: 'Done' }),
    });
    q.add('k');
    await tick(10);
    expect(n).toBe(1);
    await tick(60);
    expect(n).toBe(2);
    const boom = new WorkQueue({
      concurrency: 1,
      reconcile: async () => {
        throw new Error('boom');
      },
      onError: (_k, e) => expect((e as Error).message).toBe('boom'),
    });
    boom.add('x');
    await tick(5);
    expect(boom.failuresOf('x')).toBe(1);
    boom.shutdown();
  });

  it('takes nothing after shutdown', async () => {
    let n = 0;
    const q = new WorkQueue({ concurrency: 1, reconcile: async () => (n++, { kind: 'Done' }) });
    q.shutdown();
    q.add('a');
    q.addAfter('b', 1);
    await tick(10);
    expect(n).toBe(0);
  });
});
