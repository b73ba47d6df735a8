import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import type { Kube } from '../../../operator/kube/client.js';
import { leasesPath } from '../../../operator/kube/paths.js';
import { LivenessWriter } from '../../../operator/protocol/liveness-writer.js';
import { FakeApiServer } from '../../support/fake-api-server.js';

/**
 * The liveness Lease writer (protocol/liveness-writer.ts) against the fake API server, on an
 * injected clock: it creates the Lease on the first successful poll, renews it at most once a
 * minute while polls succeed and at once after a failed one, never on a failure, and takes over a
 * Lease created meanwhile. (What the Lease holds is protocol/publish.ts, tested in read.test.ts.)
 */

const NS = 'shop';
const LEASES = leasesPath(NS);
const topology = { namespace: NS, name: 'web', uid: 'uid-web' };
const T0 = Date.UTC(2026, 11, 4, 12);

describe('the liveness Lease writer, against the fake API server', () => {
  let api: FakeApiServer;
  let kube: Kube;
  let now = T0;
  const results: string[] = [];
  const writer = () =>
    new LivenessWriter(kube, { holder: 'op-1', now: () => now, onResult: (r) => results.push(r) });
  const poll = (w: LivenessWriter, ok: boolean) => w.polled(topology, ok, new Date(now), 10_000);
  const writes = () => api.requests.filter((r) => r.method !== 'GET').map((r) => r.method);
  const renewTime = () => (api.get(LEASES, 'clustertopology.web')?.spec as { renewTime?: string }).renewTime;

  beforeEach(async () => {
    api = await FakeApiServer.start();
    kube = api.kube();
    now = T0;
    results.length = 0;
  });
  afterEach(async () => {
    await api.close();
  });

  it('creates the Lease on the first successful poll: named, labelled, owned by the topology', async () => {
    const w = writer();
    await poll(w, true);
    // A merge patch first (404: none yet), then the create.
    expect(writes()).toEqual(['PATCH', 'POST']);
    expect(api.get(LEASES, 'clustertopology.web')).toMatchObject({
      metadata: {
        labels: { 'cluster.netzlive.io/topology': 'web' },
        ownerReferences: [{ kind: 'ClusterTopology', name: 'web', uid: 'uid-web' }],
      },
      spec: { holderIdentity: 'op-1', renewTime: '2026-12-04T12:00:00.000000Z', leaseDurationSeconds: 120 },
    });
    expect(results).toEqual(['ok']);
  });

  it('renews at most once a minute while polls succeed, never on a failure, and at once after one', async () => {
    const w = writer();
    await poll(w, true);
    now = T0 + 59_000;
    await poll(w, true);
    expect(writes()).toEqual(['PATCH', 'POST']);
    now = T0 + 60_000;
    await poll(w, true);
    expect(writes()).toEqual(['PATCH', 'POST', 'PATCH']);
    expect(renewTime()).toBe('2026-12-04T12:01:00.000000Z');
    now = T0 + 61_000;
    await poll(w, false);
    expect(writes()).toHaveLength(3);
    now = T0 + 62_000;
    await poll(w, true);
    expect(writes()).toHaveLength(4);
    expect(renewTime()).toBe('2026-12-04T12:01:02.000000Z');
  });

  it('renews a Lease another replica created meanwhile (409 on create)', async () => {
    api.fault({ method: 'PATCH', times: 1, fault: { kind: 'status', code: 404, reason: 'NotFound' } });
    api.put(LEASES, { metadata: { name: 'clustertopology.web' }, spec: { holderIdentity: 'op-2' } });
    await poll(writer(), true);
    expect(writes()).toEqual(['PATCH', 'POST', 'PATCH']);
    expect(api.get(LEASES, 'clustertopology.web')?.spec).toMatchObject({ holderIdentity: 'op-1' });
  });

  it('says when a renewal fails, and tries again on the next successful poll', async () => {
    const w = writer();
    api.fault({ method: 'PATCH', times: 1, fault: { kind: 'status', code: 500, reason: 'InternalError' } });
    await poll(w, true);
    expect(results).toEqual(['error']);
    now = T0 + 1000;
    await poll(w, true);
    expect(results).toEqual(['error', 'ok']);
    expect(renewTime()).toBe('2026-12-04T12:00:01.000000Z');
  });
});
