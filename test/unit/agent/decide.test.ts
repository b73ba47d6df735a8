import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { decideAgentAction, TROUBLE_CAUSES, type AgentInput } from '../../../operator/agent/round.js';

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
