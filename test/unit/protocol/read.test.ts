import { describe, expect, it } from '@jest/globals';
import {
  leaseDurationSeconds,
  leaseNameFor,
  livenessOf,
  statusMeaning,
  readTopology,
  type LeaseRead,
  type Reading,
} from '../../../operator/protocol/read.js';
import { leaseObject, renewDue, shouldWrite } from '../../../operator/protocol/publish.js';

const now = new Date('2026-12-03T12:00:00Z');
const ok = { code: '200', reason: 'OK', since: '2026-12-03T11:00:00Z' };
const peer = (pod: string) => ({
  nodeName: `${pod}@h`,
  pod,
  uid: `u-${pod}`,
  podIP: '10.0.0.1',
  node: '',
  hostSource: 'PodIP' as const,
  nameSource: 'PodName' as const,
  terminating: false,
});
const lease = (agoS: number, limitS = 120): LeaseRead => ({
  kind: 'found',
  lease: {
    spec: {
      holderIdentity: 'op-1',
      renewTime: new Date(now.getTime() - agoS * 1000).toISOString().replace('Z', '000Z'),
      leaseDurationSeconds: limitS,
    },
  },
});
const topo = (status: object | undefined) => ({
  kind: 'read' as const,
  object: { metadata: { name: 'web' }, ...(status ? { status } : {}) },
});

describe('the status protocol: what a reader reads', () => {
  it('an unknown list (no lastResponse, or no peers array) versus an empty one', () => {
    expect(statusMeaning(undefined).kind).toBe('unknown');
    expect(statusMeaning({ peers: [] }).kind).toBe('unknown');
    expect(statusMeaning({ lastResponse: ok }).kind).toBe('unknown');
    expect(statusMeaning({ lastResponse: ok, peers: [] })).toEqual({
      kind: 'current',
      peers: [],
      names: [],
      invalid: [],
    });
  });

  it('the one staleness rule: live iff now ≤ renewTime + leaseDurationSeconds', () => {
    expect(livenessOf(lease(120), now)).toMatchObject({ state: 'live', holder: 'op-1', limitS: 120 });
    expect(livenessOf(lease(121), now)).toMatchObject({ state: 'stale', ageS: 121, limitS: 120 });
    expect(livenessOf({ kind: 'missing' }, now)).toMatchObject({ state: 'unknown' });
    expect(livenessOf({ kind: 'unreadable', message: '403' }, now)).toMatchObject({ state: 'unknown' });
    expect(livenessOf({ kind: 'found', lease: { spec: { renewTime: 'soon' } } }, now).state).toBe('unknown');
    expect(livenessOf({ kind: 'found', lease: {} }, now).state).toBe('unknown');
  });

  it('the limit the operator writes: 60 s + 3 × pollingInterval (rounded up) + 30 s', () => {
    expect(leaseDurationSeconds(10_000)).toBe(120);
    expect(leaseDurationSeconds(1_001)).toBe(94);
    expect(leaseDurationSeconds(600_000)).toBe(1890);
    expect(leaseNameFor('web')).toBe('clustertopology.web');
  });

  it('acts on a current list, keeps on a stale Lease, and never keeps because liveness is unknown', () => {
    const status = { lastResponse: ok, peers: [peer('a'), peer('b')] };
    const names = (r: Reading) => (r.act ? r.list.names : undefined);
    const trouble = (r: Reading) => (r.act ? undefined : r.trouble);
    expect(names(readTopology(topo(status), lease(10), now))).toEqual(['a@h', 'b@h']);
    expect(names(readTopology(topo(status), { kind: 'missing' }, now))).toEqual(['a@h', 'b@h']);
    const stale = readTopology(topo(status), lease(500), now);
    expect(stale).toMatchObject({ act: false, trouble: 'StatusStale', liveness: { state: 'stale' } });
    expect(names(readTopology(topo({ lastResponse: ok, peers: [] }), lease(10), now))).toEqual([]);
    expect(trouble(readTopology(topo({ peers: [peer('a')] }), lease(10), now))).toBe('NoStatusYet');
    expect(trouble(readTopology({ kind: 'read', object: undefined }, lease(10), now))).toBe('ObjectGone');
    expect(
      trouble(
        readTopology(
          { kind: 'failed', failure: { code: 403, reason: 'Forbidden', message: 'no' } },
          lease(10),
          now,
        ),
      ),
    ).toBe('Forbidden');
  });
});

describe('the status protocol: what the operator publishes', () => {
  it('writes the status only when its content changes', () => {
    const s = { lastResponse: ok, peers: [peer('a')], lastPollTime: '2026-12-03T11:00:00Z' };
    expect(shouldWrite(s, { ...s, lastPollTime: '2026-12-03T11:59:00Z' })).toBe(false);
    expect(shouldWrite(s, { ...s, peers: [peer('b')] })).toBe(true);
  });

  it('renews the Lease at once after start or a failure, else at most once a minute; never on a failure', () => {
    expect(renewDue({}, true, 0)).toBe(true);
    expect(renewDue({}, false, 0)).toBe(false);
    expect(renewDue({ renewedAt: 0 }, true, 59_999)).toBe(false);
    expect(renewDue({ renewedAt: 0 }, true, 60_000)).toBe(true);
    expect(renewDue({ renewedAt: 0, failedSince: true }, true, 1)).toBe(true);
  });

  it('the Lease is named, labelled and owned by its topology', () => {
    const l = leaseObject({ namespace: 'ns', name: 'web', uid: 'u1' }, 'op-1', now, 10_000);
    expect(l.metadata).toMatchObject({
      name: 'clustertopology.web',
      namespace: 'ns',
      labels: { 'cluster.netzlive.io/topology': 'web' },
      ownerReferences: [{ kind: 'ClusterTopology', name: 'web', uid: 'u1' }],
    });
    expect(l.spec).toMatchObject({
      holderIdentity: 'op-1',
      renewTime: '2026-12-03T12:00:00.000000Z',
      leaseDurationSeconds: 120,
    });
  });
});
