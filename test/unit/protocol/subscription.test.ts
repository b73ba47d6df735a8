import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import type { KubeObject } from '../../../operator/kube/client.js';
import { leasesPath, topologiesPath } from '../../../operator/kube/paths.js';
import type { Reading } from '../../../operator/protocol/read.js';
import { TopologySubscription } from '../../../operator/protocol/subscription.js';
import { FakeApiServer } from '../../support/fake-api-server.js';
import { livenessLease } from '../../support/protocol-objects.js';
import { waitFor } from '../../support/wait.js';

/**
 * The reader kit's subscription over the wire: the project's client against the in-process fake
 * API server, so what is checked is what a reader hands over when the server answers, refuses,
 * breaks a watch or says nothing while a Lease runs out. (That the real API server behaves so is
 * tested against the real one: test/integration/status-protocol.test.ts, watch-peers.test.ts.)
 */

const NS = 'shop';
const TOPOLOGIES = topologiesPath(NS);
const LEASES = leasesPath(NS);
const ok = { code: '200', reason: 'OK', since: '2026-12-04T11:00:00Z' };
const peer = (pod: string) => ({
  nodeName: `${pod}@10.0.0.1`,
  pod,
  uid: `uid-${pod}`,
  podIP: '10.0.0.1',
  node: '',
  hostSource: 'PodIP',
  nameSource: 'PodName',
  terminating: false,
});
const topology = (pods: string[] | undefined): KubeObject => ({
  apiVersion: 'cluster.netzlive.io/v1alpha1',
  kind: 'ClusterTopology',
  metadata: { name: 'web', namespace: NS },
  spec: { selector: 'app=web' },
  ...(pods ? { status: { lastResponse: ok, peers: pods.map(peer) } } : {}),
});
const lease = (agoMs: number, limitS = 120) => livenessLease(NS, 'web', agoMs, limitS);
const names = (r: Reading | undefined) => (r?.act ? r.list.names : undefined);

describe('the topology subscription, against the fake API server', () => {
  let api: FakeApiServer;
  let sub: TopologySubscription | undefined;
  const readings: Reading[] = [];
  const last = () => readings[readings.length - 1];
  const follow = () => {
    sub = new TopologySubscription(api.kube(), {
      namespace: NS,
      name: 'web',
      onReading: (r) => readings.push(r),
    });
    sub.start();
    return sub;
  };

  beforeEach(async () => {
    api = await FakeApiServer.start();
    readings.length = 0;
  });
  afterEach(async () => {
    sub?.stop();
    sub = undefined;
    await api.close();
  });

  it('hands over the list, then every change the watch brings', async () => {
    api.put(TOPOLOGIES, topology(['a', 'b']));
    api.put(LEASES, lease(1000));
    follow();
    await waitFor(
      'the first list and Lease',
      () => names(last())?.length === 2 && last()!.liveness.state === 'live',
    );
    api.put(TOPOLOGIES, topology(['a', 'b', 'c']));
    await waitFor('the watched change', () => names(last())?.length === 3);
    // One list of each object, narrowed by name; the change came over the watch, not a re-list.
    expect(api.requestsTo(TOPOLOGIES, false).map((r) => r.query.fieldSelector)).toEqual([
      'metadata.name=web',
    ]);
    expect(api.requestsTo(LEASES, false).map((r) => r.query.fieldSelector)).toEqual([
      'metadata.name=clustertopology.web',
    ]);
  });

  it('reports a refused watch at once as Forbidden, and acts again once a watch is open', async () => {
    api.put(TOPOLOGIES, topology(['a']));
    follow();
    await waitFor('the first list', () => names(last())?.length === 1);
    api.fault({
      path: new RegExp(`^${TOPOLOGIES}$`),
      watch: true,
      times: 1,
      fault: { kind: 'status', code: 403, reason: 'Forbidden' },
    });
    api.endWatches(); // the server's timeout: the reader watches again, and is refused
    await waitFor(
      'the refusal',
      () => !last()?.act && (last() as { trouble?: string }).trouble === 'Forbidden',
    );
    // No list happened in between: the watch's own answer was reported.
    expect(api.requestsTo(TOPOLOGIES, false)).toHaveLength(1);
    await waitFor('the trouble over', () => last()?.act === true);
    expect(names(last())).toEqual(['a@10.0.0.1']);
  });

  it('re-lists after a 410 in the middle of a watch, and misses no change', async () => {
    api.put(TOPOLOGIES, topology(['a']));
    follow();
    await waitFor('the first list', () => names(last())?.length === 1);
    api.fault({ path: new RegExp(`^${TOPOLOGIES}$`), watch: true, times: 1, fault: { kind: 'gone' } });
    api.endWatches();
    api.put(TOPOLOGIES, topology(['a', 'b']));
    // Under load the change can be read before the refused watch's re-list: wait for both.
    await waitFor(
      'the change after the 410, and the re-list',
      () => names(last())?.length === 2 && api.requestsTo(TOPOLOGIES, false).length >= 2,
    );
    // A 410 is no trouble: nothing but current readings since the first.
    expect(readings.slice(readings.findIndex((r) => r.act)).every((r) => r.act)).toBe(true);
  });

  it('turns stale when the Lease runs out, with no event from the server', async () => {
    api.put(TOPOLOGIES, topology(['a']));
    api.put(LEASES, lease(118_000, 120)); // two seconds left
    follow();
    await waitFor(
      'the first list, live',
      () => names(last())?.length === 1 && last()!.liveness.state === 'live',
    );
    await waitFor('both watches open', () => api.openWatches === 2);
    const requests = api.requests.length;
    await waitFor('staleness', () => (last()?.act === false ? last() : undefined));
    expect(last()).toMatchObject({ act: false, trouble: 'StatusStale', liveness: { state: 'stale' } });
    // Nothing was asked of the server, and it sent nothing: the subscription looked again by the clock.
    expect(api.requests.length).toBe(requests);
  });

  it('takes a Lease it may not read for liveness unknown, and still acts on the status', async () => {
    api.put(TOPOLOGIES, topology(['a']));
    api.fault({
      path: new RegExp(`^${LEASES}$`),
      fault: { kind: 'status', code: 403, reason: 'Forbidden', message: 'no' },
    });
    follow();
    await waitFor('the first list', () => names(last())?.length === 1);
    await waitFor('the Lease refused', () => {
      const l = last()?.liveness;
      return l?.state === 'unknown' && !l.why.includes('not read yet');
    });
    expect(last()).toMatchObject({
      act: true,
      liveness: { state: 'unknown', why: 'the liveness Lease cannot be read: 403 Forbidden: no' },
    });
  });

  it('says ObjectGone when the topology is deleted, and keeps the list it had', async () => {
    api.put(TOPOLOGIES, topology(['a']));
    follow();
    await waitFor('the first list', () => names(last())?.length === 1);
    api.remove(TOPOLOGIES, 'web');
    await waitFor('the deletion', () => last()?.act === false);
    expect(last()).toMatchObject({ act: false, trouble: 'ObjectGone' });
    expect(last()?.object).toBeUndefined();
  });

  it('a status without lastResponse is no list: NoStatusYet, with the object', async () => {
    api.put(TOPOLOGIES, topology(undefined));
    follow();
    await waitFor('the first read', () => last()?.object !== undefined);
    expect(last()).toMatchObject({ act: false, trouble: 'NoStatusYet', status: { kind: 'unknown' } });
  });
});
