import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import {
  backoffDelay,
  step,
  type ReflectorInput,
  type ReflectorState,
} from '../../../operator/kube/reflector-machine.js';

type In = ReflectorInput<string>;
const run = (inputs: In[], from: ReflectorState = { phase: 'Empty' }) => {
  let state = from;
  const actions: unknown[] = [];
  for (const i of inputs) {
    const r = step<string>(state, i);
    state = r.state;
    actions.push(...r.actions);
  }
  return { state, actions };
};
const failure = (code?: number) => ({ code, reason: 'x', message: 'y' });

describe('the reflector state machine', () => {
  it('lists, then watches from the list’s resourceVersion', () => {
    const r = run([{ type: 'Start' }, { type: 'ListSucceeded', items: ['a'], rv: '10' }]);
    expect(r.state).toEqual({ phase: 'Watching', rv: '10' });
    expect(r.actions).toEqual([
      { do: 'List' },
      { do: 'Replace', items: ['a'] },
      { do: 'ReportPoll', ok: true, count: 1 },
      { do: 'Watch', rv: '10' },
    ]);
  });

  it('applies events and bookmarks, moving the resourceVersion', () => {
    const r = run(
      [
        { type: 'Event', event: 'ADDED', object: 'b', rv: '11' },
        { type: 'Bookmark', rv: '15' },
      ],
      { phase: 'Watching', rv: '10' },
    );
    expect(r.state).toEqual({ phase: 'Watching', rv: '15' });
    expect(r.actions).toEqual([{ do: 'Apply', event: 'ADDED', object: 'b' }]);
  });

  it('reports a failed list (the poll outcome) and retries after a growing backoff', () => {
    const r = run([
      { type: 'Start' },
      { type: 'ListFailed', failure: failure(403) },
      { type: 'BackoffElapsed' },
      { type: 'ListFailed', failure: failure(403) },
    ]);
    expect(r.state).toEqual({ phase: 'Backoff', attempt: 2 });
    expect(r.actions).toContainEqual({ do: 'ReportPoll', ok: false, failure: failure(403) });
    expect(r.actions).toContainEqual({ do: 'Wait', attempt: 2 });
  });

  it('resumes a normally closed watch at once from the last resourceVersion', () => {
    expect(step({ phase: 'Watching', rv: '20' }, { type: 'WatchClosed' })).toEqual({
      state: { phase: 'Watching', rv: '20' },
      actions: [
        { do: 'CountRestart', why: 'Closed' },
        { do: 'Watch', rv: '20' },
      ],
    });
  });

  it('backs off before resuming a watch the server closed at once without a word (no hot loop)', () => {
    const r = run([{ type: 'WatchClosed', early: true }, { type: 'BackoffElapsed' }], {
      phase: 'Watching',
      rv: '20',
    });
    expect(r.actions).toEqual([
      { do: 'CountRestart', why: 'Closed' },
      { do: 'Wait', attempt: 1 },
      { do: 'Watch', rv: '20' },
    ]);
    expect(r.state).toEqual({ phase: 'Watching', rv: '20' });
  });

  it('re-lists on 410 Gone', () => {
    const r = step({ phase: 'Watching', rv: '20' }, { type: 'WatchFailed', failure: failure(410) });
    expect(r.state).toEqual({ phase: 'Listing', attempt: 0 });
    expect(r.actions).toContainEqual({ do: 'List' });
  });

  it('backs off on a failed or silent watch, then resumes from the last resourceVersion', () => {
    for (const input of [{ type: 'WatchFailed', failure: failure(500) }, { type: 'IdleTimeout' }] as In[]) {
      const r = run([input, { type: 'BackoffElapsed' }], { phase: 'Watching', rv: '20' });
      expect(r.state).toEqual({ phase: 'Watching', rv: '20' });
      expect(r.actions).toEqual(
        expect.arrayContaining([{ do: 'StopWatch' }, { do: 'Wait', attempt: 1 }, { do: 'Watch', rv: '20' }]),
      );
    }
  });

  it('re-lists on every poll, from watching or from backoff; a poll during a list changes nothing', () => {
    expect(step({ phase: 'Watching', rv: '1' }, { type: 'ResyncDue' })).toEqual({
      state: { phase: 'Listing', attempt: 0 },
      actions: [{ do: 'StopWatch' }, { do: 'List' }],
    });
    expect(step({ phase: 'Backoff', attempt: 3 }, { type: 'ResyncDue' }).actions).toEqual([{ do: 'List' }]);
    expect(step({ phase: 'Listing', attempt: 0 }, { type: 'ResyncDue' }).actions).toEqual([]);
  });

  it('stops from anywhere and then ignores everything', () => {
    expect(step({ phase: 'Watching', rv: '1' }, { type: 'Stop' })).toEqual({
      state: { phase: 'Stopped' },
      actions: [{ do: 'StopWatch' }],
    });
    expect(step({ phase: 'Stopped' }, { type: 'Start' }).actions).toEqual([]);
  });

  it('never waits for nothing: from any state reached by any inputs, a poll or a backoff leads to a list or a watch', () => {
    const input: fc.Arbitrary<In> = fc.oneof(
      fc.constant<In>({ type: 'Start' }),
      fc.constant<In>({ type: 'ListSucceeded', items: [], rv: '5' }),
      fc
        .constantFrom(403, 500, undefined)
        .map<In>((code) => ({ type: 'ListFailed', failure: failure(code) })),
      fc.constant<In>({ type: 'Event', event: 'MODIFIED', object: 'x', rv: '6' }),
      fc.constant<In>({ type: 'WatchClosed' }),
      fc
        .constantFrom(410, 500, undefined)
        .map<In>((code) => ({ type: 'WatchFailed', failure: failure(code) })),
      fc.constant<In>({ type: 'IdleTimeout' }),
      fc.constant<In>({ type: 'BackoffElapsed' }),
      fc.constant<In>({ type: 'ResyncDue' }),
    );
    fc.assert(
      fc.property(fc.array(input, { maxLength: 30 }), (inputs) => {
        const { state } = run([{ type: 'Start' }, ...inputs]);
        if (state.phase === 'Listing') return; // a list is in flight: its answer comes
        const next = step<string>(
          state,
          state.phase === 'Backoff' ? { type: 'BackoffElapsed' } : { type: 'ResyncDue' },
        );
        expect(next.actions.some((a) => a.do === 'List' || a.do === 'Watch')).toBe(true);
      }),
    );
  });

  it('backoff grows to its cap, with jitter in the upper half', () => {
    expect(backoffDelay(1, 0)).toBe(250);
    expect(backoffDelay(1, 0.999)).toBeLessThanOrEqual(500);
    expect(backoffDelay(3, 0)).toBe(1000);
    expect(backoffDelay(30, 0.5, 500, 30_000)).toBe(22_500);
  });
});
