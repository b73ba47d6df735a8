import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import type { KubeObject } from '../../../operator/kube/client.js';
import { listWatch } from '../../../operator/kube/list-watch.js';
import { podsPath } from '../../../operator/kube/paths.js';
import { Reflector, type PollOutcome } from '../../../operator/kube/reflector.js';
import type { Failure } from '../../../operator/kube/reflector-machine.js';
import { FakeApiServer } from '../../support/fake-api-server.js';
import { waitFor } from '../../support/wait.js';

/**
 * The reflector with the project's client over the wire, against the in-process fake API server's
 * odd answers: a body cut short, a watch cut mid-line, headers that come too late, a watch the
 * server closes at once, a 410 in the middle of a stream. (reflector.test.ts drives the shell with
 * scripted callbacks on a fake clock; these go through HTTP.)
 */

const NS = 'shop';
const PODS = podsPath(NS);
const pod = (name: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: NS },
});
const LIST = new RegExp(`^${PODS}$`);

describe('the reflector over the wire', () => {
  let api: FakeApiServer;
  let reflector: Reflector | undefined;
  const polls: PollOutcome[] = [];
  const watchFailures: Failure[] = [];
  const start = (extra: Partial<ConstructorParameters<typeof Reflector>[0]> = {}) => {
    reflector = new Reflector({
      name: 'pods',
      ...listWatch(api.kube(), PODS, { watchTimeoutSeconds: 60 }),
      resyncMs: 600_000,
      backoff: { baseMs: 40 },
      onPoll: (p) => polls.push(p),
      onWatchFailure: (f) => watchFailures.push(f),
      ...extra,
    });
    reflector.start();
    return reflector;
  };
  const names = () =>
    reflector!
      .items()
      .map((o) => o.metadata.name)
      .sort();

  beforeEach(async () => {
    api = await FakeApiServer.start();
    polls.length = 0;
    watchFailures.length = 0;
    api.put(PODS, pod('a'));
  });
  afterEach(async () => {
    reflector?.stop();
    reflector = undefined;
    await api.close();
  });

  it('takes a list whose body is cut short for a failed poll, and lists again', async () => {
    api.fault({ path: LIST, watch: false, times: 1, fault: { kind: 'truncate' } });
    start();
    await waitFor('a good list', () => polls.some((p) => p.ok));
    expect(polls[0]).toMatchObject({ ok: false, failure: { reason: 'TransportError' } });
    expect(names()).toEqual(['a']);
    expect(api.requestsTo(PODS, false)).toHaveLength(2);
  });

  it('resumes a watch cut mid-line from the last resourceVersion, without a list', async () => {
    start();
    await waitFor('the first watch', () => api.openWatches === 1);
    api.put(PODS, pod('b'));
    await waitFor('b', () => names().length === 2);
    const seen = api.get(PODS, 'b')!.metadata.resourceVersion;
    api.fault({ path: LIST, watch: true, times: 1, fault: { kind: 'cut' } });
    api.endWatches();
    await waitFor('the cut reported', () => watchFailures.length === 1);
    expect(watchFailures[0]).toMatchObject({ reason: 'TransportError' });
    api.put(PODS, pod('c'));
    await waitFor('c', () => names().length === 3);
    const watches = api.requestsTo(PODS, true);
    // The watch after the cut asks from the last event it had; nothing was listed again.
    expect(watches[watches.length - 1]!.query.resourceVersion).toBe(seen);
    expect(api.requestsTo(PODS, false)).toHaveLength(1);
  });

  it('gives up on a watch whose headers do not come within the idle limit, and watches again', async () => {
    api.fault({ path: LIST, watch: true, times: 1, fault: { kind: 'slowHeaders', ms: 3_000 } });
    start({ idleMs: 300 });
    await waitFor('the silent watch reported', () => watchFailures.length >= 1);
    expect(watchFailures[0]).toMatchObject({ reason: 'TransportError' });
    await waitFor('a watch open again', () => api.openWatches === 1);
    api.put(PODS, pod('b'));
    await waitFor('b', () => names().length === 2);
  });

  it('waits longer before each new watch when the server closes every one at once', async () => {
    api.fault({ path: LIST, watch: true, fault: { kind: 'closeAtOnce' } });
    start();
    await waitFor('five watches', () => api.requestsTo(PODS, true).length >= 5);
    const at = api.requestsTo(PODS, true).map((r) => r.at);
    const gaps = at.slice(1).map((t, i) => t - at[i]!);
    // Attempt n waits at least half of min(cap, 40 ms × 2^(n-1)): 20, 40, 80, 160 ms at the least.
    // (Lower bounds only: a loaded machine only makes them longer.) A hot loop would not wait at all.
    expect(gaps.slice(0, 4).map((g, i) => g >= 20 * 2 ** i)).toEqual([true, true, true, true]);
    expect(watchFailures).toEqual([]); // a clean close is no failure
  });

  it('lists again after a 410 in the middle of a watch, and keeps what changed meanwhile', async () => {
    start();
    await waitFor('the first watch', () => api.openWatches === 1);
    api.fault({ path: LIST, watch: true, times: 1, fault: { kind: 'gone' } });
    api.endWatches();
    api.put(PODS, pod('b'));
    api.remove(PODS, 'a');
    await waitFor('the list after the 410', () => api.requestsTo(PODS, false).length === 2);
    await waitFor('the store as the server has it', () => names().join() === 'b');
    expect(watchFailures).toEqual([]); // a 410 is no trouble to report
  });
});
