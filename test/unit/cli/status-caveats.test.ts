import { describe, expect, it } from '@jest/globals';
import { statusCaveats } from '../../../operator/cli/status-caveats.js';

const now = new Date('2026-03-01T12:00:00Z');
const fresh = {
  lastPollTime: '2026-03-01T11:59:50Z',
  lastResponse: { code: '200', reason: 'OK', since: '2026-03-01T10:00:00Z' },
};

describe('statusCaveats', () => {
  it('has nothing to say about a fresh, successful, current status', () => {
    expect(statusCaveats({ status: { ...fresh, observedGeneration: 2 }, generation: 2, now })).toEqual([]);
  });

  it('notes a spec the operator has not caught up with', () => {
    expect(statusCaveats({ status: { ...fresh, observedGeneration: 1 }, generation: 3, now })).toEqual([
      'the status is from generation 1 of the spec, which is now at 3; the operator has not caught up yet',
    ]);
  });

  it('notes a failed last list', () => {
    const status = {
      ...fresh,
      lastResponse: { code: 'TransportError', reason: 'TransportError', since: '2026-03-01T11:58:00Z' },
    };
    expect(statusCaveats({ status, now })).toEqual([
      'the last list of pods failed since 2026-03-01T11:58:00Z (TransportError TransportError); the status shows the last known state',
    ]);
  });

  it("notes a topology nobody polls: the liveness Lease's one staleness rule", () => {
    const lease = (renewTime: string, leaseDurationSeconds = 120) => ({
      kind: 'found' as const,
      lease: { spec: { renewTime, leaseDurationSeconds, holderIdentity: 'op-1' } },
    });
    // Renewed 2 minutes ago with a 120 s limit: live, nothing to say (now ≤ renewTime + duration).
    expect(statusCaveats({ status: fresh, lease: lease('2026-03-01T11:58:00.000000Z'), now })).toEqual([]);
    expect(statusCaveats({ status: fresh, lease: lease('2026-03-01T11:57:59.000000Z'), now })).toEqual([
      'the operator last polled this topology 2 minutes ago (its liveness Lease was renewed at 2026-03-01T11:57:59.000000Z, limit 120 s); is the operator running and serving this namespace?',
    ]);
    // A 10-minute interval's Lease allows 60 + 1800 + 30 s.
    expect(statusCaveats({ status: fresh, lease: lease('2026-03-01T11:40:00.000000Z', 1890), now })).toEqual(
      [],
    );
    expect(
      statusCaveats({ status: fresh, lease: lease('2026-02-27T11:00:00.000000Z', 1890), now })[0],
    ).toContain('last polled this topology 2 days ago');
    expect(statusCaveats({ status: fresh, lease: lease('2026-03-01T07:00:00.000000Z'), now })[0]).toContain(
      'last polled this topology 5 hours ago',
    );
    // lastPollTime alone no longer means anything about liveness (the status is written only on change).
    expect(statusCaveats({ status: { ...fresh, lastPollTime: '2026-03-01T07:00:00Z' }, now })).toEqual([]);
  });

  it('says when liveness is unknown: the Lease missing or unreadable; nothing when it was not read', () => {
    expect(statusCaveats({ status: fresh, lease: { kind: 'missing' }, now })).toEqual([
      'whether an operator polls this topology is unknown: the liveness Lease does not exist',
    ]);
    expect(
      statusCaveats({ status: fresh, lease: { kind: 'unreadable', message: '403 Forbidden' }, now })[0],
    ).toContain('cannot be read: 403 Forbidden');
    expect(statusCaveats({ status: fresh, lease: { kind: 'unread' }, now })).toEqual([]);
  });

  it('ignores what it cannot read, and escapes what it prints', () => {
    const garbled = {
      kind: 'found' as const,
      lease: { spec: { renewTime: 'yesterday', leaseDurationSeconds: 1 } },
    };
    expect(statusCaveats({ status: fresh, lease: garbled, now })[0]).toContain('unknown');
    const status = { lastResponse: { code: '403', reason: 'Forbidden\u001b[2J', since: 'x' } };
    expect(statusCaveats({ status, now })[0]).toContain('Forbidden\\u001b[2J');
  });
});
