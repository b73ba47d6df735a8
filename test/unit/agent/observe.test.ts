import { describe, expect, it } from '@jest/globals';
import {
  agentInputFrom as inputOf,
  checkSelf,
  pollingMsOf,
  selfEntry,
} from '../../../operator/agent/observe.js';
import { decideAgentAction } from '../../../operator/agent/round.js';
import {
  leaseDurationSeconds as leaseDurationSecondsFor,
  readTopology,
  type LeaseRead,
  type ObjectRead,
  type TopologyObject,
} from '../../../operator/protocol/read.js';

const now = new Date('2026-12-02T12:00:00Z');
const peer = (pod: string, nodeName: string) => ({
  nodeName,
  pod,
  uid: `u-${pod}`,
  podIP: '10.0.0.1',
  node: '',
  hostSource: 'PodIP' as const,
  nameSource: 'PodName' as const,
  terminating: false,
});
/** What the agent makes of a read of the object and the Lease at `now`. */
const agentInputFrom = (read: ObjectRead, at: Date, ownPod?: string, lease: LeaseRead = { kind: 'unread' }) =>
  inputOf(readTopology(read, lease, at), ownPod);
const topo = (status: TopologyObject['status'], pollingInterval = '10s'): TopologyObject => ({
  metadata: { name: 'web', namespace: 'ns' },
  spec: { selector: 'app=web', pollingInterval },
  status,
});
const fresh = (peers: ReturnType<typeof peer>[], agoMs = 1000) => ({
  peers,
  lastResponse: { code: '200', reason: 'OK', since: now.toISOString() },
  lastPollTime: new Date(now.getTime() - agoMs).toISOString(),
});

describe('what the agent makes of what it read', () => {
  it('acts on a current status, an empty peer list included', () => {
    expect(
      agentInputFrom({ kind: 'read', object: topo(fresh([peer('a', 'a@h'), peer('b', 'b@h')])) }, now),
    ).toEqual({ kind: 'status', peers: ['a@h', 'b@h'] });
    expect(agentInputFrom({ kind: 'read', object: topo(fresh([])) }, now)).toEqual({
      kind: 'status',
      peers: [],
    });
  });

  it.each([
    ['nothing read yet', { kind: 'pending' } as const, 'NoStatusYet'],
    [
      'a 403',
      { kind: 'failed', failure: { code: 403, reason: 'Forbidden', message: 'no' } } as const,
      'Forbidden',
    ],
    [
      'a 401',
      { kind: 'failed', failure: { code: 401, reason: 'Unauthorized', message: 'no' } } as const,
      'Forbidden',
    ],
    [
      'a 500',
      { kind: 'failed', failure: { code: 500, reason: 'InternalError', message: 'boom' } } as const,
      'ApiUnreachable',
    ],
    [
      'no answer',
      { kind: 'failed', failure: { reason: 'TransportError', message: 'ECONNREFUSED' } } as const,
      'ApiUnreachable',
    ],
    ['the object gone', { kind: 'read', object: undefined } as const, 'ObjectGone'],
    ['no status yet', { kind: 'read', object: topo(undefined) } as const, 'NoStatusYet'],
  ])('keeps its connections on %s', (_what, read, cause) => {
    const input = agentInputFrom(read, now);
    expect(input).toMatchObject({ kind: 'trouble', cause });
    expect(decideAgentAction(input).action).toBe('keep');
  });

  it("takes a status for stale by the liveness Lease's one rule, never for empty; an unknown liveness is not acted on", () => {
    const lease = (agoS: number, leaseDurationSeconds = leaseDurationSecondsFor(10_000)) => ({
      kind: 'found' as const,
      lease: {
        spec: { renewTime: new Date(now.getTime() - agoS * 1000).toISOString(), leaseDurationSeconds },
      },
    });
    expect(leaseDurationSecondsFor(10_000)).toBe(120);
    expect(leaseDurationSecondsFor(1500)).toBe(95); // 4.5 s rounded up
    const read = { kind: 'read' as const, object: topo(fresh([peer('a', 'a@h')], 3_600_000)) };
    // An hour-old lastPollTime does not matter: the status is written only when it changes.
    expect(agentInputFrom(read, now, undefined, lease(120)).kind).toBe('status');
    expect(agentInputFrom(read, now, undefined, lease(121))).toMatchObject({
      kind: 'trouble',
      cause: 'StatusStale',
    });
    expect(decideAgentAction(agentInputFrom(read, now, undefined, lease(121))).action).toBe('keep');
    expect(agentInputFrom(read, now, undefined, lease(200, leaseDurationSecondsFor(60_000))).kind).toBe(
      'status',
    );
    for (const unknown of [
      { kind: 'missing' as const },
      { kind: 'unreadable' as const, message: '403' },
      { kind: 'unread' as const },
    ])
      expect(agentInputFrom(read, now, undefined, unknown)).toEqual({ kind: 'status', peers: ['a@h'] });
  });

  it('reads the polling interval from the spec, falling back to 10 s', () => {
    expect(pollingMsOf(topo(undefined, '1m30s'))).toBe(90_000);
    expect(pollingMsOf(topo(undefined, 'bogus'))).toBe(10_000);
    expect(pollingMsOf(undefined)).toBe(10_000);
  });
});

describe('the self check', () => {
  const status = {
    peers: [peer('web-0', 'web-0@10.0.0.1')],
    excluded: [{ pod: 'web-1', reason: 'NoPodIP' as const, message: 'no IP yet' }],
  };
  it('passes when the computed name is the real one', () => {
    expect(checkSelf(selfEntry(status, 'web-0'), 'web-0@10.0.0.1', 'web-0').ok).toBe(true);
  });
  it('fails on a mismatch, naming both names and the fix', () => {
    const c = checkSelf(selfEntry(status, 'web-0'), 'web-0@web.svc', 'web-0');
    expect(c).toMatchObject({ ok: false, reason: 'NameMismatch' });
    expect(c.message).toContain('web-0@10.0.0.1');
    expect(c.message).toContain('web-0@web.svc');
    expect(c.message).toContain('RELEASE_NODE');
  });
  it('says why its own pod is excluded', () => {
    expect(checkSelf(selfEntry(status, 'web-1'), 'web-1@x', 'web-1')).toMatchObject({
      ok: false,
      reason: 'Excluded',
      message: expect.stringContaining('NoPodIP'),
    });
  });
  it('says when its pod is not selected, and when its real name is unknown', () => {
    expect(checkSelf(selfEntry(status, 'other'), 'o@x', 'other')).toMatchObject({
      ok: false,
      reason: 'NotSelected',
    });
    expect(checkSelf(selfEntry(status, 'web-0'), undefined, 'web-0')).toMatchObject({
      ok: false,
      reason: 'NameUnknown',
    });
  });
});

describe("the agent's own entry", () => {
  it('is never a peer to dial, even under a name the node does not have', () => {
    const st = fresh([peer('a', 'a@h'), peer('me', 'wrong@h')]);
    expect(agentInputFrom({ kind: 'read', object: topo(st) }, now, 'me')).toEqual({
      kind: 'status',
      peers: ['a@h'],
    });
  });
});
