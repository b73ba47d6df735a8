import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { agentStep, START, type AgentEffect, type AgentState } from '../../../operator/agent/step.js';
import { readTopology, type LeaseRead, type ObjectRead } from '../../../operator/protocol/read.js';

/** The agent's step (agent/step.ts): what one reading makes it say, set and hand its round loop. */

const now = Date.parse('2026-12-04T12:00:00Z');
const ok = { code: '200', reason: 'OK', since: '2026-12-04T11:00:00Z' };
const peer = (pod: string, nodeName = `${pod}@h`) => ({
  nodeName,
  pod,
  uid: `u-${pod}`,
  podIP: '',
  node: '',
  hostSource: 'PodIP' as const,
  nameSource: 'PodName' as const,
  terminating: false,
});
const current = (peers = [peer('me'), peer('b')]): ObjectRead => ({
  kind: 'read',
  object: {
    metadata: { name: 'web' },
    status: { lastResponse: ok, peers, lastPollTime: '2026-12-04T11:59:00Z' },
  },
});
const lease = (agoS: number): LeaseRead => ({
  kind: 'found',
  lease: { spec: { renewTime: new Date(now - agoS * 1000).toISOString(), leaseDurationSeconds: 120 } },
});
const forbidden: ObjectRead = { kind: 'failed', failure: { code: 403, reason: 'Forbidden', message: 'no' } };
const step = (state: AgentState, read: ObjectRead, l: LeaseRead = lease(10), ctx = {}) =>
  agentStep(state, readTopology(read, l, new Date(now)), { podName: 'me', realName: 'me@h', now, ...ctx });
const logs = (effects: AgentEffect[]) =>
  effects.flatMap((e) => (e.do === 'log' ? [`${e.level} ${e.message}`] : []));

describe("the agent's step", () => {
  it('acts on a current list: the gauges, the poll time, the self check, then the round without its own entry', () => {
    const { state, effects } = step(START, current());
    expect(effects).toEqual([
      { do: 'gauges', trouble: undefined, liveness: 'live' },
      expect.objectContaining({ do: 'log', message: 'operator liveness live' }),
      { do: 'lastStatus', seconds: Date.parse('2026-12-04T11:59:00Z') / 1000 },
      { do: 'selfCheck', ok: true },
      { do: 'log', level: 'info', message: 'pod me is peer me@h' },
      { do: 'submit', input: { kind: 'status', peers: ['b@h'] } },
    ]);
    expect(state).toMatchObject({ statusSeen: true, troubleMessage: '', self: { ok: true } });
    // The next reading the same: nothing to say.
    expect(logs(step(state, current()).effects)).toEqual([]);
  });

  it('keeps on trouble and says it once; the self check is not made without a list', () => {
    const first = step(START, forbidden);
    expect(first.effects).toContainEqual({ do: 'gauges', trouble: 'Forbidden', liveness: 'live' });
    expect(first.effects[first.effects.length - 1]).toMatchObject({
      do: 'submit',
      input: { kind: 'trouble', cause: 'Forbidden' },
    });
    expect(first.effects.some((e) => e.do === 'selfCheck')).toBe(false);
    expect(first.state.troubleMessage).toContain('refused to show the ClusterTopology');
    expect(logs(step(first.state, forbidden, lease(10), { now: now + 1000 }).effects)).toEqual([]);
    const over = step(first.state, current(), lease(10), { now: now + 5000 });
    expect(logs(over.effects)).toContain('info trouble over after 5 s: acting on the status again');
  });

  it('says a failing self check on every reading, with an Event each time, and once when it passes again', () => {
    const wrong = current([peer('me', 'me@elsewhere'), peer('b')]);
    const a = step(START, wrong);
    const b = step(a.state, wrong);
    for (const s of [a, b]) {
      expect(s.effects).toContainEqual({ do: 'selfCheck', ok: false });
      expect(s.effects).toContainEqual(
        expect.objectContaining({ do: 'event', reason: 'SelfCheckNameMismatch' }),
      );
    }
    const fixed = step(b.state, current());
    expect(logs(fixed.effects)).toEqual(['info pod me is peer me@h']);
  });

  it('out of a pod: no self check, said once', () => {
    const a = step(START, current(), lease(10), { podName: '' });
    const b = step(a.state, current(), lease(10), { podName: '' });
    expect(logs(a.effects)).toContain(
      "warn self check off: this agent does not know its pod's name (--pod-name, $POD_NAME or $HOSTNAME)",
    );
    expect(logs(b.effects)).toEqual([]);
    expect(a.effects.some((e) => e.do === 'selfCheck')).toBe(false);
  });

  it('over any run of readings: one submit per step, last; a trouble line per change of cause; liveness said per change', () => {
    const reads: [string, ObjectRead, LeaseRead][] = [
      ['ok', current(), lease(10)],
      ['stale', current(), lease(500)],
      ['forbidden', forbidden, lease(10)],
      ['gone', { kind: 'read', object: undefined }, lease(10)],
      ['missing lease', current(), { kind: 'missing' }],
    ];
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: reads.length - 1 }), { maxLength: 30 }), (picks) => {
        let state = START;
        let t = now;
        let causes = 0;
        let lastCause: string | undefined;
        let livenessChanges = 0;
        let lastLiveness: string | undefined;
        let troubleLines = 0;
        let livenessLines = 0;
        for (const i of picks) {
          const [, read, l] = reads[i]!;
          const r = readTopology(read, l, new Date(t));
          const s = agentStep(state, r, { podName: 'me', realName: 'me@h', now: t });
          expect(s.effects.filter((e) => e.do === 'submit')).toHaveLength(1);
          expect(s.effects[s.effects.length - 1]!.do).toBe('submit');
          const cause = r.act ? undefined : r.trouble;
          if (cause !== undefined && cause !== lastCause) causes++;
          lastCause = cause;
          if (r.liveness.state !== lastLiveness) livenessChanges++;
          lastLiveness = r.liveness.state;
          for (const e of s.effects)
            if (
              e.do === 'log' &&
              e.level === 'warn' &&
              e.meta?.cause !== undefined &&
              !e.message.startsWith('still')
            )
              troubleLines++;
            else if (e.do === 'log' && e.message.startsWith('operator liveness')) livenessLines++;
          state = s.state;
          t += 1000;
        }
        expect(troubleLines).toBe(causes);
        expect(livenessLines).toBe(livenessChanges);
      }),
    );
  });
});
