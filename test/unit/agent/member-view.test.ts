import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import {
  agentView,
  linkReason,
  linksAfterRound,
  NO_LINKS,
  reportedTrouble,
  type ConnectAnswer,
  type Links,
} from '../../../operator/agent/member-view.js';

/**
 * What the sidecar puts in its member report (docs/status-protocol.md §8.2): the links after each
 * round, the reason per link, and the trouble as it began.
 */

const ok = (node: string): ConnectAnswer => ({ ok: true, node });
const no = (node: string, failure = 'Refused'): ConnectAnswer => ({ ok: false, node, failure });
const round = (connect: ConnectAnswer[], held: string[], observed?: string[]) => ({
  results: { connect },
  held,
  invalid: [],
  ...(observed ? { observed } : {}),
});

describe('the agent’s links for its report', () => {
  it('a connector failure is a link reason: Refused, Timeout, Invalid; anything else Refused', () => {
    expect(
      ['Refused', 'Timeout', 'InvalidNodeName', 'LocalNodeUnreachable', 'Error'].map(linkReason),
    ).toEqual(['Refused', 'Timeout', 'Invalid', 'Refused', 'Refused']);
  });

  it('observed: nodes() is the truth, a failed connect gives its reason, a node that dropped without one went down', () => {
    const first = linksAfterRound(NO_LINKS, round([ok('b@h'), no('c@h')], ['b@h'], ['b@h', 'x@h']));
    expect(first.connected).toEqual(['b@h', 'x@h']);
    expect([...first.reasons]).toEqual([['c@h', 'Refused']]);
    // b@h drops between rounds; the next round connects nothing (it believed b@h held)
    const second = linksAfterRound(first, round([ok('c@h')], ['b@h', 'c@h'], ['c@h']));
    expect(second.connected).toEqual(['c@h']);
    expect([...second.reasons]).toEqual([
      ['b@h', 'NodeDown'],
      ['x@h', 'NodeDown'],
    ]);
    // b@h back: its reason goes
    const third = linksAfterRound(second, round([ok('b@h')], ['b@h', 'c@h'], ['b@h', 'c@h']));
    expect([...third.reasons]).toEqual([['x@h', 'NodeDown']]);
  });

  it('not observed (exec, file): what the round holds, whatever a connect answered', () => {
    const l = linksAfterRound(NO_LINKS, round([ok('b@h'), no('c@h', 'Timeout')], ['b@h']));
    expect(l.connected).toEqual(['b@h']);
    expect([...l.reasons]).toEqual([['c@h', 'Timeout']]);
  });

  it('property: a node is connected or has a reason, never both; a failure this round is its reason', () => {
    const node = fc.constantFrom('a@h', 'b@h', 'c@h', 'd@h');
    const answer = fc.oneof(
      node.map(ok),
      fc.tuple(node, fc.constantFrom('Refused', 'Timeout', 'Error')).map(([n, f]) => no(n, f)),
    );
    const aRound = fc.record({
      connect: fc.uniqueArray(answer, { selector: (a) => a.node, maxLength: 4 }),
      observed: fc.option(fc.uniqueArray(node, { maxLength: 4 }), { nil: undefined }),
    });
    fc.assert(
      fc.property(fc.array(aRound, { maxLength: 6 }), (rounds) => {
        let l: Links = NO_LINKS;
        for (const r of rounds) {
          const held = r.connect.filter((a) => a.ok).map((a) => a.node);
          l = linksAfterRound(l, round(r.connect, held, r.observed));
          for (const n of l.connected) expect(l.reasons.has(n)).toBe(false);
          for (const a of r.connect)
            if (!a.ok && !l.connected.includes(a.node))
              expect(l.reasons.get(a.node)).toBe(linkReason(a.failure));
        }
      }),
    );
  });
});

describe('the agent’s view', () => {
  const peers = [
    { nodeName: 'a@h', pod: 'a', uid: 'uid-a' },
    { nodeName: 'b@h', pod: 'b', uid: 'uid-b' },
    { nodeName: 'c@h', pod: 'c', uid: 'uid-c' },
  ] as never[];

  it('names its pod’s uid from its own entry, says observed or not, and no view without its node name', () => {
    const links = linksAfterRound(NO_LINKS, round([ok('b@h'), no('c@h')], ['b@h']));
    const v = agentView({
      node: 'a@h',
      pod: 'a',
      list: { peers, resourceVersion: '7' },
      links,
      observed: false,
    });
    expect(v?.podUid).toBe('uid-a');
    expect(v?.view).toMatchObject({
      observed: false,
      listed: 2,
      connected: 1,
      connectedOfListed: '1/2',
      notConnected: [{ node: 'c@h', reason: 'Refused' }],
      selfCheck: { result: 'Match', expected: 'a@h', actual: 'a@h' },
      topologyResourceVersion: '7',
    });
    expect(agentView({ node: undefined, pod: 'a', links, observed: true })).toBeUndefined();
    expect(agentView({ node: 'a@h', pod: 'a', links, observed: true })?.view.selfCheck.result).toBe(
      'Unknown',
    );
  });

  it('trouble keeps the message and time it began while its cause lasts', () => {
    const t = reportedTrouble(undefined, { cause: 'StatusStale', message: '40 s ago' }, Date.UTC(2026, 0, 1));
    expect(t).toEqual({ cause: 'StatusStale', message: '40 s ago', since: '2026-01-01T00:00:00Z' });
    expect(reportedTrouble(t, { cause: 'StatusStale', message: '50 s ago' }, Date.UTC(2026, 0, 2))).toBe(t);
    expect(reportedTrouble(t, { cause: 'Forbidden', message: 'no' }, Date.UTC(2026, 0, 2))?.cause).toBe(
      'Forbidden',
    );
    expect(reportedTrouble(t, undefined, 0)).toBeUndefined();
  });
});
