import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { EventRecorder } from '../../../operator/kube/event-recorder.js';
import { eventsPath } from '../../../operator/kube/paths.js';
import { FakeApiServer } from '../../support/fake-api-server.js';
import { waitFor } from '../../support/wait.js';

/**
 * The Event recorder (kube/event-recorder.ts) against the fake API server: one Event per object and
 * reason per interval, the ones held back counted in the next; a refused write costs nothing.
 */

const NS = 'shop';
const EVENTS = eventsPath(NS);
const web = {
  apiVersion: 'cluster.netzlive.io/v1alpha1',
  kind: 'ClusterTopology',
  namespace: NS,
  name: 'web',
};

describe('the Event recorder, against the fake API server', () => {
  let api: FakeApiServer;
  const debug: string[] = [];
  const events = () => api.requestsTo(EVENTS).filter((r) => r.method === 'POST').length;
  const stored = (reason: string) =>
    api
      .list(EVENTS)
      .filter((e) => e.reason === reason)
      .map((e) => e.message as string);

  beforeEach(async () => {
    api = await FakeApiServer.start();
    debug.length = 0;
  });
  afterEach(async () => {
    await api.close();
  });

  it('posts one Event per reason per interval, and says in the next how many it held back', async () => {
    const rec = new EventRecorder(api.kube(), 'test', (_l, m) => debug.push(m), 300);
    const t0 = Date.now();
    rec.record(web, 'Normal', 'PeersChanged', 'first');
    rec.record(web, 'Normal', 'PeersChanged', 'second');
    rec.record(web, 'Normal', 'PeersChanged', 'third');
    rec.record(web, 'Warning', 'QuorumAtRisk', 'other reason');
    await waitFor('two Events', () => events() === 2);
    await waitFor('the interval over', () => Date.now() - t0 > 300);
    rec.record(web, 'Normal', 'PeersChanged', 'fourth');
    await waitFor('the third Event', () => events() === 3);
    expect(stored('PeersChanged')).toEqual(['first', 'fourth (2 similar events held back)']);
    expect(stored('QuorumAtRisk')).toEqual(['other reason']);
  });

  it('drops an Event it may not write, with a debug line, and goes on', async () => {
    api.fault({ method: 'POST', times: 1, fault: { kind: 'status', code: 403, reason: 'Forbidden' } });
    const rec = new EventRecorder(api.kube(), 'test', (_l, m) => debug.push(m), 0);
    rec.record(web, 'Normal', 'PeersChanged', 'refused');
    await waitFor('the debug line', () => debug.includes('could not write an event'));
    rec.record(web, 'Normal', 'PeersChanged', 'written');
    await waitFor('the second Event', () => stored('PeersChanged').length === 1);
    expect(stored('PeersChanged')).toEqual(['written']);
  });
});
