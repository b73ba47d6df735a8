import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { StatusApplier } from '../../../operator/controller/apply.js';
import type { StatusWrite } from '../../../operator/controller/plan.js';
import { EventRecorder } from '../../../operator/kube/event-recorder.js';
import { eventsPath, topologiesPath } from '../../../operator/kube/paths.js';
import type { Kube } from '../../../operator/kube/client.js';
import { operatorMetrics, type OperatorMetrics } from '../../../operator/observability/operator-metrics.js';
import { FakeApiServer } from '../../support/fake-api-server.js';
import { waitFor } from '../../support/wait.js';

/**
 * The controller's applier (controller/apply.ts) against the fake API server: without a known
 * resourceVersion it patches /status with the plan's merge patch, and only once that write
 * succeeded sets the gauges and records the Events, resolving with the object's new
 * resourceVersion; a topology deleted meanwhile is no error (undefined); any other failure goes
 * back to the queue. (The JSON Patch with its resourceVersion precondition is proven on the real
 * API server: test/integration/operator-scale.test.ts.)
 */

const NS = 'shop';
const TOPOLOGIES = topologiesPath(NS);
const ref = { namespace: NS, name: 'web', uid: 'uid-web' };
const write = (peers: number): StatusWrite => ({
  status: { peerCount: peers },
  patch: { peerCount: peers, lastPollTime: '2026-12-04T12:00:00Z' },
  events: [{ type: 'Normal', reason: 'PeersChanged', message: `${peers} peers` }],
  gauges: { peers, excluded: 1 },
});

describe('the status applier, against the fake API server', () => {
  let api: FakeApiServer;
  let kube: Kube;
  let metrics: OperatorMetrics;
  let applier: StatusApplier;
  const text = () => metrics.registry.metrics();

  beforeEach(async () => {
    api = await FakeApiServer.start();
    kube = api.kube();
    metrics = operatorMetrics();
    applier = new StatusApplier(
      kube,
      new EventRecorder(kube, 'cluster-topology', () => {}, 0),
      metrics,
      () => {},
    );
  });
  afterEach(async () => {
    await api.close();
  });

  it('merge-patches the status, then sets the gauges and records the Events', async () => {
    api.put(TOPOLOGIES, {
      metadata: { name: 'web' },
      spec: { selector: 'app=web' },
      status: { peerCount: 1, peers: [] },
    });
    const written = await applier.apply(ref, write(3));
    const patch = api.requests.find((r) => r.method === 'PATCH')!;
    expect(patch.path).toBe(`${TOPOLOGIES}/web/status`);
    // A merge patch: what it does not name stays.
    expect(api.get(TOPOLOGIES, 'web')).toMatchObject({
      spec: { selector: 'app=web' },
      status: { peerCount: 3, peers: [], lastPollTime: '2026-12-04T12:00:00Z' },
    });
    // The object's resourceVersion after the write, which the next JSON Patch is conditioned on.
    // Not exact: a merge patch lands on whatever the object held.
    expect(written).toEqual({
      resourceVersion: api.get(TOPOLOGIES, 'web')!.metadata.resourceVersion,
      exact: false,
    });
    expect(await text()).toContain('ctopo_peers{namespace="shop",name="web"} 3');
    await waitFor('the Event', () => api.requestsTo(eventsPath(NS)).length === 1);
  });

  it('takes a topology deleted meanwhile for gone (undefined), with no gauge and no Event', async () => {
    expect(await applier.apply(ref, write(3))).toBeUndefined();
    expect(await text()).not.toContain('ctopo_peers{');
    expect(await text()).toContain('ctopo_status_writes_total{result="error"} 1');
    expect(api.requestsTo(eventsPath(NS))).toEqual([]);
  });

  it('throws any other failure for the queue to retry, and sets nothing', async () => {
    api.put(TOPOLOGIES, { metadata: { name: 'web' }, status: {} });
    api.fault({ method: 'PATCH', fault: { kind: 'status', code: 500, reason: 'InternalError' } });
    await expect(applier.apply(ref, write(3))).rejects.toMatchObject({ code: 500 });
    expect(await text()).not.toContain('ctopo_peers{');
    expect(api.requestsTo(eventsPath(NS))).toEqual([]);
  });
});
