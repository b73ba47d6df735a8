import { describe, expect, it } from '@jest/globals';
import { ApiError, type Kube, type KubeObject, type WatchEventType } from '../../../operator/kube/client.js';
import { TopologyReader } from '../../../operator/agent/topology-reader.js';
import { waitFor } from '../../support/wait.js';

/** A Kube whose list answers at once and whose watches the test ends by hand. */
function fakeKube() {
  const watches: {
    path: string;
    onDone: (err: unknown) => void;
    onEvent: (t: WatchEventType, o: KubeObject) => void;
  }[] = [];
  const object = { metadata: { name: 'web', namespace: 'ns', resourceVersion: '5' }, status: {} };
  const kube: Kube = {
    server: 'https://fake',
    namespace: 'ns',
    request: () => Promise.reject(new Error('unused')),
    list: <T>(path: string, _q: unknown, keep: (o: KubeObject) => T) =>
      Promise.resolve({
        metadata: { resourceVersion: '5' },
        items: (path.includes('leases') ? [] : [object]).map(keep),
      }),
    watch: (path, _q, onEvent, onDone) => {
      watches.push({ path, onDone, onEvent });
      return Promise.resolve({ abort: () => {} });
    },
    close: () => {},
  };
  return { kube, watches };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('the topology reader', () => {
  it('reports a broken watch at once, not at the next list, and clears it when the watch is open again', async () => {
    const { kube, watches } = fakeKube();
    let changes = 0;
    const reader = new TopologyReader(kube, 'ns', 'web', () => changes++);
    reader.start();
    try {
      for (let i = 0; i < 10 && watches.length < 2; i++) await tick();
      expect(reader.state()).toMatchObject({ kind: 'read', object: { metadata: { name: 'web' } } });
      expect(reader.leaseState()).toEqual({ kind: 'missing' });
      const seen = changes;
      const ct = watches.find((w) => w.path.includes('clustertopologies'))!;
      ct.onDone(new ApiError(403, 'Forbidden', 'watch refused'));
      // At once: no list has happened since.
      expect(reader.state()).toEqual({
        kind: 'failed',
        failure: { code: 403, reason: 'Forbidden', message: 'watch refused' },
      });
      expect(changes).toBeGreaterThan(seen);
      // A 410 is no trouble: it only re-lists.
      // The reflector watches again after its backoff; once that watch is open, the trouble is over.
      await waitFor(
        'a second watch of the topology',
        () => watches.filter((w) => w.path.includes('clustertopologies')).length > 1,
        10_000,
        20,
      );
      await tick();
      expect(reader.state().kind).toBe('read');
    } finally {
      reader.stop();
    }
  });

  it('takes a Lease it may not read for unreadable (liveness unknown), not for trouble', async () => {
    const { kube } = fakeKube();
    const refusing: Kube = {
      ...kube,
      list: (path, q, keep) =>
        path.includes('leases')
          ? Promise.reject(new ApiError(403, 'Forbidden', 'no'))
          : kube.list(path, q, keep),
    };
    const reader = new TopologyReader(refusing, 'ns', 'web', () => {});
    reader.start();
    try {
      for (let i = 0; i < 10; i++) await tick();
      expect(reader.leaseState()).toEqual({ kind: 'unreadable', message: '403 Forbidden: no' });
      expect(reader.state().kind).toBe('read');
    } finally {
      reader.stop();
    }
  });
});
