import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { watchPeers, type PeerMember, type PeerWatch } from '../../../operator/agent/watch-peers.js';
import type { KubeObject } from '../../../operator/kube/client.js';
import { topologiesPath } from '../../../operator/kube/paths.js';
import { FakeApiServer } from '../../support/fake-api-server.js';
import { waitFor } from '../../support/wait.js';

/**
 * `watchPeers` (the library's reader) against the fake API server: the list only from a current
 * status, an empty one included; trouble to onTrouble, never as an empty list; onMembers with the
 * member states. (Against the real API server: test/integration/watch-peers.test.ts.)
 */

const NS = 'shop';
const TOPOLOGIES = topologiesPath(NS);
const peer = (pod: string, ready?: boolean) => ({
  nodeName: `${pod}@h`,
  pod,
  uid: `uid-${pod}`,
  podIP: '',
  node: '',
  hostSource: 'Annotation',
  nameSource: 'PodName',
  terminating: false,
  ...(ready === undefined ? {} : { ready, serving: ready }),
});
const topology = (peers: ReturnType<typeof peer>[] | undefined): KubeObject => ({
  metadata: { name: 'web', namespace: NS },
  spec: { selector: 'app=web', pollingInterval: '1s' },
  ...(peers ? { status: { lastResponse: { code: '200', reason: 'OK', since: '' }, peers } } : {}),
});

describe('watchPeers, against the fake API server', () => {
  let api: FakeApiServer;
  let watch: PeerWatch | undefined;
  const lists: (readonly string[])[] = [];
  const troubles: string[] = [];
  const members: (readonly PeerMember[])[] = [];
  const start = () => {
    watch = watchPeers(
      {
        namespace: NS,
        name: 'web',
        onTrouble: (cause) => troubles.push(cause),
        onMembers: (m) => members.push(m),
      },
      (peers) => lists.push(peers),
      api.kube(),
    );
  };

  beforeEach(async () => {
    api = await FakeApiServer.start();
    lists.length = 0;
    troubles.length = 0;
    members.length = 0;
  });
  afterEach(async () => {
    watch?.stop();
    watch = undefined;
    await api.close();
  });

  it('hands over the sorted names of a current list, each change once, an empty list included', async () => {
    api.put(TOPOLOGIES, topology(undefined));
    start();
    await waitFor('NoStatusYet', () => troubles.includes('NoStatusYet'));
    expect(lists).toEqual([]);
    api.put(TOPOLOGIES, topology([peer('b', true), peer('a')]));
    await waitFor('the list', () => lists.length === 1);
    expect(lists[0]).toEqual(['a@h', 'b@h']);
    expect(members[members.length - 1]).toEqual([
      { nodeName: 'a@h', pod: 'a', uid: 'uid-a', terminating: false },
      { nodeName: 'b@h', pod: 'b', uid: 'uid-b', ready: true, serving: true, terminating: false },
    ]);
    api.put(TOPOLOGIES, topology([]));
    await waitFor('the empty list', () => lists.length === 2);
    expect(lists[1]).toEqual([]);
    expect(watch!.peers).toEqual([]);
  });

  it('tells trouble to onTrouble and never hands over an empty list for it', async () => {
    api.put(TOPOLOGIES, topology([peer('a')]));
    start();
    await waitFor('the list', () => lists.length === 1);
    api.fault({
      path: new RegExp(`^${TOPOLOGIES}$`),
      fault: { kind: 'status', code: 403, reason: 'Forbidden' },
    });
    api.endWatches();
    await waitFor('Forbidden', () => troubles.includes('Forbidden'));
    api.remove(TOPOLOGIES, 'web');
    api.clearFaults();
    await waitFor('ObjectGone', () => troubles.includes('ObjectGone'));
    expect(lists).toEqual([['a@h']]);
    expect(watch!.peers).toEqual(['a@h']);
  });
});
