import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { LeaderElector } from '../../../operator/kube/leader-election.js';
import { leasesPath } from '../../../operator/kube/paths.js';
import { FakeApiServer } from '../../support/fake-api-server.js';
import { waitFor } from '../../support/wait.js';

/**
 * Leader election (kube/leader-election.ts) against the fake API server, with short timings: who
 * leads, when a held Lease is taken over, when a leader steps down, and that a released Lease is
 * taken at once. (Two operator replicas on the real API server: test/integration/chart-operator.)
 */

const NS = 'ops';
const LEASES = leasesPath(NS);
const TIMING = { leaseDurationMs: 1500, renewDeadlineMs: 1000, retryPeriodMs: 100 };

interface Seen {
  started: number;
  stopped: string[];
  problems: (string | undefined)[];
}

describe('leader election, against the fake API server', () => {
  let api: FakeApiServer;
  const electors: LeaderElector[] = [];
  const elector = (identity: string, seen: Seen) => {
    const e = new LeaderElector(api.kube(), {
      namespace: NS,
      name: 'cluster-topology',
      identity,
      ...TIMING,
      onStartedLeading: () => seen.started++,
      onStoppedLeading: (why) => seen.stopped.push(why),
      onLeaseProblem: (p) => seen.problems.push(p),
    });
    electors.push(e);
    void e.run();
    return e;
  };
  const seen = (): Seen => ({ started: 0, stopped: [], problems: [] });
  const holder = () =>
    (api.get(LEASES, 'cluster-topology')?.spec as { holderIdentity?: string } | undefined)?.holderIdentity;

  beforeEach(async () => {
    api = await FakeApiServer.start();
  });
  afterEach(async () => {
    for (const e of electors.splice(0)) await e.release();
    await api.close();
  });

  it('creates the Lease and leads; a second candidate waits', async () => {
    const a = seen();
    const b = seen();
    elector('a', a);
    await waitFor('a leads', () => a.started === 1);
    expect(holder()).toBe('a');
    elector('b', b);
    // b reads the Lease held and renewed by a several times, and does not take it.
    const reads = api.requests.length;
    await waitFor('a few rounds', () => api.requests.length > reads + 10);
    expect(b.started).toBe(0);
    expect(holder()).toBe('a');
  });

  it('takes over a Lease its holder stopped renewing, once leaseDuration has passed', async () => {
    api.put(LEASES, {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: 'cluster-topology' },
      spec: {
        holderIdentity: 'gone',
        leaseDurationSeconds: 1,
        renewTime: new Date().toISOString(),
        leaseTransitions: 2,
      },
    });
    const b = seen();
    elector('b', b);
    await waitFor('b leads', () => b.started === 1);
    expect(api.get(LEASES, 'cluster-topology')?.spec).toMatchObject({
      holderIdentity: 'b',
      leaseTransitions: 3,
    });
    // It read the unchanged Lease again and again before it took it (a candidate that took it at
    // the first look would have read it once).
    const firstPut = api.requests.findIndex((r) => r.method === 'PUT');
    expect(api.requests.slice(0, firstPut).filter((r) => r.method === 'GET').length).toBeGreaterThan(1);
  });

  it('steps down when it cannot renew within renewDeadline', async () => {
    const a = seen();
    elector('a', a);
    await waitFor('a leads', () => a.started === 1);
    api.fault({ method: 'PUT', fault: { kind: 'status', code: 500, reason: 'InternalError' } });
    await waitFor('a steps down', () => a.stopped.length === 1);
    expect(a.stopped[0]).toBe('no renewal for 1s');
    expect(a.problems).toContain(
      'writing it failed: 500 InternalError: injected by the fake API server (500)',
    );
  });

  it('gives the Lease up on release, and the next candidate takes it at once', async () => {
    const a = seen();
    const b = seen();
    const ea = elector('a', a);
    await waitFor('a leads', () => a.started === 1);
    elector('b', b);
    await ea.release();
    expect(api.get(LEASES, 'cluster-topology')?.spec).toMatchObject({
      holderIdentity: '',
      leaseDurationSeconds: 1,
    });
    await waitFor('b leads', () => b.started === 1);
  });

  it('says what keeps it from its Lease, and when that is over', async () => {
    api.fault({
      method: 'GET',
      times: 3,
      fault: { kind: 'status', code: 403, reason: 'Forbidden', message: 'no' },
    });
    const a = seen();
    elector('a', a);
    await waitFor('a leads', () => a.started === 1);
    expect(a.problems).toEqual(['reading it failed: 403 Forbidden: no', undefined]);
  });
});
