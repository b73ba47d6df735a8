import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import {
  ApiError,
  TransportError,
  type KubeObject,
  type WatchEventType,
} from '../../../operator/kube/client.js';
import { Reflector, type ReflectorOptions } from '../../../operator/kube/reflector.js';

/**
 * The reflector's shell against an in-process fake server (lists and watches that answer as a
 * test says) on jest's fake clock: what is checked is when it lists and watches again.
 */

type Watcher = (
  onEvent: (type: WatchEventType, object: KubeObject) => void,
  onDone: (err: unknown) => void,
) => void;

function fakeServer(behaviour: { watch: Watcher; list?: () => Promise<void> }) {
  const calls = { lists: [] as number[], watches: [] as number[], aborts: 0 };
  const opts: Pick<ReflectorOptions<KubeObject>, 'list' | 'watch'> = {
    list: async () => {
      calls.lists.push(Date.now());
      await behaviour.list?.();
      return { items: [], metadata: { resourceVersion: '1' } };
    },
    watch: async (_rv, onEvent, onDone) => {
      calls.watches.push(Date.now());
      // A bound on the test: without a backoff the shell would open watches forever.
      if (calls.watches.length < 500) behaviour.watch(onEvent, onDone);
      return { abort: () => calls.aborts++ };
    },
  };
  return { calls, opts };
}

const gaps = (times: number[]) => times.slice(1).map((t, i) => t - times[i]!);
const later = (f: () => void, ms = 0) => setTimeout(f, ms);

describe('the reflector shell, on a fake clock', () => {
  let reflector: Reflector | undefined;
  beforeEach(() => {
    jest.useFakeTimers({ now: Date.UTC(2026, 11, 3, 12) });
  });
  afterEach(() => {
    reflector?.stop();
    reflector = undefined;
    jest.useRealTimers();
  });
  const start = (
    opts: Pick<ReflectorOptions<KubeObject>, 'list' | 'watch'>,
    extra: Partial<ReflectorOptions<KubeObject>> = {},
  ) => {
    reflector = new Reflector({ name: 'test', resyncMs: 600_000, ...opts, ...extra });
    reflector.start();
    return reflector;
  };

  it('counts as down while every watch fails at once, however often one is asked for', async () => {
    const server = fakeServer({
      watch: (_e, done) => queueMicrotask(() => done(new TransportError('cut'))),
    });
    const r = start(server.opts);
    const started = Date.now();
    await jest.advanceTimersByTimeAsync(120_000);
    expect(server.calls.watches.length).toBeGreaterThan(5);
    expect(r.downSince).toBe(started);
  });

  it('counts a watch that stays open a second, or speaks, as up', async () => {
    const quiet = fakeServer({ watch: () => {} });
    const r = start(quiet.opts);
    await jest.advanceTimersByTimeAsync(999);
    expect(r.downSince).toBeDefined();
    await jest.advanceTimersByTimeAsync(2);
    expect(r.downSince).toBeUndefined();
    r.stop();
    const speaking = fakeServer({
      watch: (event) =>
        queueMicrotask(() =>
          event('ADDED', { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'a', resourceVersion: '2' } }),
        ),
    });
    const r2 = start(speaking.opts);
    await jest.advanceTimersByTimeAsync(1);
    expect(r2.downSince).toBeUndefined();
  });

  it('does not re-open a watch the server closes cleanly and at once in a hot loop', async () => {
    const server = fakeServer({ watch: (_e, done) => queueMicrotask(() => done(null)) });
    start(server.opts);
    await jest.advanceTimersByTimeAsync(10_000);
    // Growing waits (≤ 0.5, 1, 2, 4, 8 s …): a handful of watches in 10 s, not hundreds.
    expect(server.calls.watches.length).toBeGreaterThan(2);
    expect(server.calls.watches.length).toBeLessThan(10);
  });

  it('resumes at once a watch that ran and then closed cleanly (the server’s timeout)', async () => {
    const server = fakeServer({ watch: (_e, done) => later(() => done(null), 30_000) });
    start(server.opts);
    await jest.advanceTimersByTimeAsync(95_000);
    expect(gaps(server.calls.watches)).toEqual([30_000, 30_000, 30_000]);
  });

  it('waits longer after each failed watch, up to the cap, and starts small again after a healthy period', async () => {
    let healthy = false;
    const server = fakeServer({
      watch: (onEvent, done) => {
        if (!healthy) return later(() => done(new TransportError('connection refused')));
        // A healthy watch: bookmarks every 10 s for 3 minutes, then the connection breaks.
        for (let t = 10_000; t <= 180_000; t += 10_000)
          later(() => onEvent('BOOKMARK', { metadata: { name: '', resourceVersion: String(t) } }), t);
        later(() => {
          healthy = false;
          done(new TransportError('reset'));
        }, 180_001);
      },
    });
    start(server.opts, { backoffCapMs: 8_000, idleMs: 60_000 });
    await jest.advanceTimersByTimeAsync(60_000);
    const failing = gaps(server.calls.watches);
    expect(failing.length).toBeGreaterThan(5);
    // The i-th wait lies in the upper half of min(cap, 0.5 s × 2^i) (a few ms of fake I/O aside).
    failing.forEach((gap, i) => {
      const ceiling = Math.min(8_000, 500 * 2 ** i);
      expect(gap).toBeGreaterThanOrEqual(ceiling / 2);
      expect(gap).toBeLessThanOrEqual(ceiling + 5);
    });

    healthy = true;
    const before = server.calls.watches.length;
    await jest.advanceTimersByTimeAsync(8_000 + 180_001 + 1_000);
    const after = server.calls.watches.slice(before);
    // The first watch after the break came at most one base delay (0.5 s) later.
    expect(after.length).toBeGreaterThanOrEqual(2);
    expect(after[1]! - after[0]!).toBeGreaterThan(180_000);
    expect(after[1]! - after[0]!).toBeLessThanOrEqual(180_001 + 500);
  });

  it('re-lists on 410 Gone at once, and backs off a failing list', async () => {
    let listFails = true;
    const server = fakeServer({
      list: async () => {
        if (listFails) throw new ApiError(500, 'InternalError', 'down');
      },
      watch: (_e, done) => later(() => done(new ApiError(410, 'Gone', 'too old')), 1_000),
    });
    start(server.opts);
    await jest.advanceTimersByTimeAsync(5_000);
    const failed = server.calls.lists.length;
    expect(failed).toBeGreaterThan(2);
    expect(failed).toBeLessThan(8);
    expect(server.calls.watches).toEqual([]);
    listFails = false;
    // The next list comes after the current (jittered, at most 8 s) backoff; 20 s leaves room
    // for several list/watch cycles whatever the jitter drew.
    await jest.advanceTimersByTimeAsync(20_000);
    // Each watch ends with 410 after 1 s: a list follows at once, then a watch.
    const lists = server.calls.lists.slice(failed + 1);
    const watches = server.calls.watches;
    expect(watches.length).toBeGreaterThan(3);
    for (let i = 0; i < lists.length; i++) expect(lists[i]! - watches[i]!).toBe(1_000);
  });

  it('takes a silent watch for dead after idleMs (a setting: tests shorten it)', async () => {
    const server = fakeServer({ watch: () => {} });
    const restarts: string[] = [];
    start(server.opts, { idleMs: 2_000, onRestart: (why) => restarts.push(why) });
    await jest.advanceTimersByTimeAsync(2_100);
    expect(restarts).toEqual(['Idle']);
    expect(server.calls.aborts).toBe(1);
  });
});
