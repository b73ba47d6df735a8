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

  it('notes a status nobody refreshes: older than twice the polling interval plus two minutes', () => {
    // Default interval 10s: the limit is 2m20s.
    expect(statusCaveats({ status: { lastPollTime: '2026-03-01T11:57:41Z' }, now })).toEqual([]);
    expect(statusCaveats({ status: { lastPollTime: '2026-03-01T11:57:00Z' }, now })).toEqual([
      'the status was last refreshed 3 minutes ago (lastPollTime 2026-03-01T11:57:00Z); is the operator running and serving this namespace?',
    ]);
    // A 10-minute interval allows 22 minutes.
    expect(
      statusCaveats({ status: { lastPollTime: '2026-03-01T11:40:00Z' }, pollingInterval: '10m', now }),
    ).toEqual([]);
    expect(
      statusCaveats({ status: { lastPollTime: '2026-02-27T11:00:00Z' }, pollingInterval: '10m', now })[0],
    ).toContain('last refreshed 2 days ago');
    expect(statusCaveats({ status: { lastPollTime: '2026-03-01T07:00:00Z' }, now })[0]).toContain(
      'last refreshed 5 hours ago',
    );
  });

  it('ignores what it cannot read, and escapes what it prints', () => {
    expect(statusCaveats({ status: { lastPollTime: 'yesterday' }, now })).toEqual([]);
    const status = { lastResponse: { code: '403', reason: 'Forbidden\u001b[2J', since: 'x' } };
    expect(statusCaveats({ status, now })[0]).toContain('Forbidden\\u001b[2J');
  });
});
