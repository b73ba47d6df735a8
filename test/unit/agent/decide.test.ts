import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import {
  compareSelfName,
  decideAgentAction,
  isStatusStale,
  TROUBLE_CAUSES,
  type AgentInput,
} from '../../../operator/agent/round.js';

describe('decideAgentAction: the agent never disconnects because of its own trouble', () => {
  it.each(TROUBLE_CAUSES.map((c) => [c]))('%s keeps what the agent has, and says why', (cause) => {
    const action = decideAgentAction({ kind: 'trouble', cause });
    expect(action).toMatchObject({ action: 'keep', cause });
    if (action.action === 'keep') expect(action.message).toMatch(/^keeping the current connections: /);
  });

  it('adds the detail to the message', () => {
    const action = decideAgentAction({ kind: 'trouble', cause: 'ApiUnreachable', detail: 'ECONNREFUSED' });
    expect(action.action === 'keep' && action.message).toContain('(ECONNREFUSED)');
  });

  it('a real status starts a round with its peers', () => {
    expect(decideAgentAction({ kind: 'status', peers: ['a@1.2.3.4', 'b@1.2.3.5'] })).toEqual({
      action: 'round',
      desired: ['a@1.2.3.4', 'b@1.2.3.5'],
    });
  });

  it('an empty peer list in a real status (e.g. onForbidden: Disconnect) does start a round: everyone leaves', () => {
    expect(decideAgentAction({ kind: 'status', peers: [] })).toEqual({ action: 'round', desired: [] });
  });

  it('exhaustively: round iff status, keep iff trouble', () => {
    const inputs: AgentInput[] = [
      { kind: 'status', peers: [] },
      { kind: 'status', peers: ['a@h'] },
      ...TROUBLE_CAUSES.map((cause) => ({ kind: 'trouble' as const, cause })),
    ];
    for (const i of inputs) expect(decideAgentAction(i).action).toBe(i.kind === 'status' ? 'round' : 'keep');
  });

  it('property: trouble never yields a round, whatever the detail', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...TROUBLE_CAUSES),
        fc.option(fc.string(), { nil: undefined }),
        (cause, detail) => {
          const input: AgentInput =
            detail === undefined ? { kind: 'trouble', cause } : { kind: 'trouble', cause, detail };
          expect(decideAgentAction(input).action).toBe('keep');
        },
      ),
    );
  });

  it('property: a status always yields a round with exactly its peers (a copy)', () => {
    fc.assert(
      fc.property(fc.array(fc.string()), (peers) => {
        const a = decideAgentAction({ kind: 'status', peers });
        expect(a).toEqual({ action: 'round', desired: peers });
        if (a.action === 'round') expect(a.desired).not.toBe(peers);
      }),
    );
  });
});

describe('isStatusStale', () => {
  const now = new Date('2026-10-09T12:00:00Z');
  it('is stale when missing, unparseable or too old', () => {
    expect(isStatusStale(undefined, now, 60_000)).toBe(true);
    expect(isStatusStale('yesterday', now, 60_000)).toBe(true);
    expect(isStatusStale('2026-10-09T11:58:59Z', now, 60_000)).toBe(true);
  });
  it('is fresh within the limit (including the boundary and a clock slightly ahead)', () => {
    expect(isStatusStale('2026-10-09T11:59:00Z', now, 60_000)).toBe(false);
    expect(isStatusStale('2026-10-09T12:00:05Z', now, 60_000)).toBe(false);
  });
});

describe('compareSelfName', () => {
  it('accepts equal names', () => {
    expect(compareSelfName('web-0@10.0.0.1', 'web-0@10.0.0.1')).toEqual({ ok: true });
  });
  it('fails loudly, naming both, when they differ', () => {
    const r = compareSelfName('web-0@10.0.0.1', 'web-0@web.netzlive.svc.cluster.local');
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.problem).toContain('"web-0@10.0.0.1"');
      expect(r.problem).toContain('"web-0@web.netzlive.svc.cluster.local"');
    }
  });
  it('reports an unknown side', () => {
    expect(compareSelfName(undefined, 'a@b').ok).toBe(false);
    expect(compareSelfName('a@b', undefined).ok).toBe(false);
  });
});
