import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { performance } from 'node:perf_hooks';
import type { ControlPlaneState } from '../../dev/cluster/control-plane.js';
import type { ClusterTopologyStatus } from '../../operator/api/types.generated.js';
import { WRITE_WINDOW_MS } from '../../operator/controller/controller.js';
import { StatusApplier } from '../../operator/controller/apply.js';
import type { StatusWrite } from '../../operator/controller/plan.js';
import { statusPatchOps } from '../../operator/controller/status-patch.js';
import { EventRecorder } from '../../operator/kube/event-recorder.js';
import { operatorMetrics } from '../../operator/observability/operator-metrics.js';
import { connect, type Kube, type WatchHandle } from '../../operator/kube/client.js';
import {
  freshNamespace,
  installCrd,
  kubectlOk,
  kubeconfigForToken,
  sharedCluster,
} from '../support/cluster.js';
import {
  applyObjects,
  applyTopology,
  createPod,
  grantOperatorRbac,
  restorePods,
  serviceAccountToken,
  setPodStatus,
  topologyStatus,
} from '../support/objects.js';
import { FaultProxy } from '../support/fault-proxy.js';
import { mapLimit } from '../../bench/concurrency.js';
import { statusMeaning } from '../../operator/protocol/read.js';
import { startOperator, type CtopoProcess } from '../support/operator-process.js';
import { sleep, waitFor } from '../support/wait.js';
import { operatorNamespace, proxiedOperatorNamespace } from '../support/world.js';

/**
 * Many topologies and large ones, on a real API server (issue #29): one pod watch per namespace
 * feeds every topology there and a poll restarts no watch; a topology that comes later, a pod that
 * changes topology, a selector the operator cannot read, a watch that cannot be opened; a burst
 * of changes written at most once per window; a status write when the object moved since the last.
 */

const names = (st: ClusterTopologyStatus | undefined) => (st?.peers ?? []).map((p) => p.nodeName).sort();

async function labelledPod(
  s: ControlPlaneState,
  ns: string,
  name: string,
  labels: Record<string, string>,
  ip: string,
) {
  await createPod(s, ns, name, { labels });
  await setPodStatus(s, ns, name, { ip, ready: true });
}

describe('many topologies in one namespace: one pod watch feeds them all', () => {
  let s: ControlPlaneState;
  let ns: string;
  let op: CtopoProcess;
  const lastPoll = (name: string) =>
    op.metric('ctopo_last_successful_poll_timestamp_seconds', { namespace: ns, name });

  beforeAll(async () => {
    let kubeconfig: string;
    ({ s, ns, kubeconfig } = await operatorNamespace('scale'));
    for (const [i, group] of ['a', 'a', 'b', 'b', 'c', 'c'].entries())
      await labelledPod(s, ns, `${group}-${i}`, { group, rank: String(i) }, `10.40.0.${i + 1}`);
    for (const group of ['a', 'b', 'c'])
      await applyTopology(s, ns, group, { selector: `group=${group}`, pollingInterval: '1s' });
    op = startOperator(kubeconfig, ['--namespaces', ns, '--no-leader-elect']);
    for (const group of ['a', 'b', 'c'])
      await waitFor(
        `${group}: 2 peers`,
        async () => (await topologyStatus(s, ns, group))?.peerCount === 2,
        30_000,
      );
  });
  afterAll(async () => {
    await op?.stop();
  });

  it('holds one pod watch for the three topologies, and three polls each restart none', async () => {
    expect(await op.metric('ctopo_watches_up', { resource: 'pods' })).toBe(1);
    const restarts = await op.metricSum('ctopo_watch_restarts_total', { resource: 'pods' });
    const before = await Promise.all(['a', 'b', 'c'].map(lastPoll));
    await waitFor(
      'three more polls of every topology',
      async () => {
        const now = await Promise.all(['a', 'b', 'c'].map(lastPoll));
        return now.every((t, i) => t !== undefined && t - before[i]! >= 3);
      },
      30_000,
    );
    expect(await op.metricSum('ctopo_watch_restarts_total', { resource: 'pods' })).toBe(restarts);
    expect(await op.metric('ctopo_watches_up', { resource: 'pods' })).toBe(1);
    expect((await topologyStatus(s, ns, 'b'))?.lastResponse?.code).toBe('200');
  });

  it('a pod relabelled from one group to another leaves the one status and joins the other', async () => {
    await kubectlOk(s, ['-n', ns, 'label', 'pod', 'a-0', 'group=b', '--overwrite']);
    await waitFor(
      'a-0 moved from a to b',
      async () =>
        names(await topologyStatus(s, ns, 'a')).join() === 'a-1@10.40.0.2' &&
        names(await topologyStatus(s, ns, 'b')).includes('a-0@10.40.0.1'),
      30_000,
    );
    expect(names(await topologyStatus(s, ns, 'b'))).toEqual([
      'a-0@10.40.0.1',
      'b-2@10.40.0.3',
      'b-3@10.40.0.4',
    ]);
  });

  it('a topology added later lists the pods the namespace watch already holds', async () => {
    await applyTopology(s, ns, 'late', { selector: 'group in (b,c)', pollingInterval: '1s' });
    const st = await waitFor(
      'late: 5 peers',
      async () => {
        const x = await topologyStatus(s, ns, 'late');
        return x?.peerCount === 5 ? x : undefined;
      },
      30_000,
    );
    expect(names(st)).toEqual([
      'a-0@10.40.0.1',
      'b-2@10.40.0.3',
      'b-3@10.40.0.4',
      'c-4@10.40.0.5',
      'c-5@10.40.0.6',
    ]);
    expect(await op.metric('ctopo_watches_up', { resource: 'pods' })).toBe(1);
  });

  it('a selector the operator cannot read itself (rank>3) is served by a list and watch of its own', async () => {
    await applyTopology(s, ns, 'ranked', { selector: 'rank>3', pollingInterval: '1s' });
    const st = await waitFor(
      'ranked: 2 peers',
      async () => {
        const x = await topologyStatus(s, ns, 'ranked');
        return x?.peerCount === 2 ? x : undefined;
      },
      30_000,
    );
    expect(names(st)).toEqual(['c-4@10.40.0.5', 'c-5@10.40.0.6']);
    expect(await op.metric('ctopo_watches_up', { resource: 'pods' })).toBe(2);
  });
});

describe('a pod watch that cannot be opened: each poll lists the namespace', () => {
  let s: ControlPlaneState;
  let ns: string;
  let op: CtopoProcess;
  let proxy: FaultProxy;

  beforeAll(async () => {
    ({ s, ns } = await operatorNamespace('scale-watch'));
    const token = await serviceAccountToken(s, ns, 'operator');
    await grantOperatorRbac(s, { kind: 'ServiceAccount', name: 'operator', namespace: ns }, [ns], ns);
    proxy = await new FaultProxy(s).start();
    const kubeconfig = await kubeconfigForToken(s, `proxy-${ns}.kubeconfig`, token, proxy.url);
    await labelledPod(s, ns, 'web-0', { app: 'web' }, '10.41.0.1');
    await applyTopology(s, ns, 'web', { selector: 'app=web', pollingInterval: '1s' });
    // Watches are renewed every 2 s, so the refusal below is met soon.
    op = startOperator(kubeconfig, ['--namespaces', ns, '--no-leader-elect', '--watch-timeout', '2s']);
    await waitFor('1 peer', async () => (await topologyStatus(s, ns, 'web'))?.peerCount === 1, 30_000);
  });
  afterAll(async () => {
    await op?.stop();
    await proxy?.stop();
  });

  it('a pod that comes while every pod watch is refused joins through the polls, and the answer stays 200', async () => {
    proxy.set({ kind: 'status', code: 500 }, new RegExp(`^/api/v1/namespaces/${ns}/pods\\?.*watch=true`));
    const failed = () => op.metricSum('ctopo_watch_restarts_total', { resource: 'pods', why: 'Failed' });
    const before = await failed();
    await waitFor('the pod watch refused twice', async () => (await failed()) >= before + 2, 30_000);
    await labelledPod(s, ns, 'web-1', { app: 'web' }, '10.41.0.2');
    const st = await waitFor(
      'web-1 through a poll',
      async () => {
        const x = await topologyStatus(s, ns, 'web');
        return x?.peerCount === 2 ? x : undefined;
      },
      30_000,
    );
    expect(names(st)).toEqual(['web-0@10.41.0.1', 'web-1@10.41.0.2']);
    expect(st.lastResponse?.code).toBe('200');
    proxy.set({ kind: 'pass' });
  });
});

/**
 * The probes among the requests a fault proxy saw since index `from`: LISTs of limit=1 without a
 * selector (a topology's own first list has one; the namespace's list asks for 500) — cluster-wide,
 * and per namespace.
 */
function probesSeen(proxy: FaultProxy, from: number): { cluster: number; byNamespace: Map<string, number> } {
  const byNamespace = new Map<string, number>();
  let cluster = 0;
  for (const r of proxy.seen.slice(from)) {
    if (!/^GET \S*\?(\S*&)?limit=1(&|$)/.test(r) || r.includes('labelSelector=') || r.includes('watch='))
      continue;
    if (r.startsWith('GET /api/v1/pods?')) cluster++;
    const ns = /^GET \/api\/v1\/namespaces\/([^/]+)\/pods\?/.exec(r)?.[1];
    if (ns) byNamespace.set(ns, (byNamespace.get(ns) ?? 0) + 1);
  }
  return { cluster, byNamespace };
}

describe('an operator that may list pods cluster-wide polls every namespace with one probe', () => {
  let s: ControlPlaneState;
  let namespaces: string[];
  let op: CtopoProcess;
  let proxy: FaultProxy;
  let id: string;
  let subject: { kind: 'ServiceAccount'; name: string; namespace: string };
  const lastPolls = () =>
    Promise.all(
      namespaces.map((ns) =>
        op.metric('ctopo_last_successful_poll_timestamp_seconds', { namespace: ns, name: 'web' }),
      ),
    );
  const morePolls = async (n: number) => {
    const before = await lastPolls();
    await waitFor(
      `${n} more polls of both topologies`,
      async () => (await lastPolls()).every((t, i) => t !== undefined && t - before[i]! >= n),
      30_000,
    );
  };

  beforeAll(async () => {
    s = await sharedCluster();
    await installCrd(s);
    namespaces = [await freshNamespace(s, 'probe-a'), await freshNamespace(s, 'probe-b')];
    id = namespaces[0]!;
    subject = { kind: 'ServiceAccount', name: 'operator', namespace: id };
    const token = await serviceAccountToken(s, id, 'operator');
    // Pods may be listed in every namespace: the pod reader bound cluster-wide, no Role anywhere.
    await grantOperatorRbac(s, subject, [], id);
    await applyObjects(s, [
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: `${id}-pod-reader` },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: `${id}-pod-reader` },
        subjects: [subject],
      },
    ]);
    proxy = await new FaultProxy(s).start();
    const kubeconfig = await kubeconfigForToken(s, `proxy-${id}.kubeconfig`, token, proxy.url);
    for (const [i, ns] of namespaces.entries()) {
      await labelledPod(s, ns, 'web-0', { app: 'web' }, `10.44.0.${i + 1}`);
      await applyTopology(s, ns, 'web', { selector: 'app=web', pollingInterval: '1s' });
    }
    op = startOperator(kubeconfig, ['--namespaces', namespaces.join(','), '--no-leader-elect']);
    for (const ns of namespaces)
      await waitFor(
        `${ns}: 1 peer`,
        async () => (await topologyStatus(s, ns, 'web'))?.peerCount === 1,
        30_000,
      );
  });
  afterAll(async () => {
    await op?.stop();
    await proxy?.stop();
    if (id) await kubectlOk(s, ['delete', 'clusterrolebinding', `${id}-pod-reader`, '--ignore-not-found']);
  });

  it('each poll of both namespaces is one cluster-wide LIST of limit=1, none per namespace', async () => {
    const from = proxy.seen.length;
    await morePolls(3);
    const probes = probesSeen(proxy, from);
    expect(probes.byNamespace).toEqual(new Map());
    expect(probes.cluster).toBeGreaterThanOrEqual(2);
    for (const ns of namespaces) expect((await topologyStatus(s, ns, 'web'))?.lastResponse?.code).toBe('200');
  });

  it('refused cluster-wide later (403), it probes each namespace on its own, and each answer is 200 there', async () => {
    for (const ns of namespaces) await restorePods(s, ns, id, subject);
    await kubectlOk(s, ['delete', 'clusterrolebinding', `${id}-pod-reader`]);
    const from = proxy.seen.length;
    await waitFor(
      'both namespaces probed on their own',
      async () => namespaces.every((ns) => (probesSeen(proxy, from).byNamespace.get(ns) ?? 0) > 0),
      30_000,
    );
    const since = proxy.seen.length;
    await morePolls(3);
    expect(probesSeen(proxy, since).cluster).toBe(0);
    for (const ns of namespaces) expect((await topologyStatus(s, ns, 'web'))?.lastResponse?.code).toBe('200');
  });
});

/**
 * An operator (no leader election) behind a fault proxy, serving topology `web` (1 s polls) over one
 * pod at `ip`; `fault` is set on the proxy before the operator starts.
 */
async function proxiedWebTopology(
  prefix: string,
  ip: string,
  fault?: (proxy: FaultProxy, ns: string) => void,
): Promise<{ s: ControlPlaneState; ns: string; proxy: FaultProxy; op: CtopoProcess }> {
  const { s, ns, kubeconfig, proxy } = await proxiedOperatorNamespace(prefix);
  await labelledPod(s, ns, 'web-0', { app: 'web' }, ip);
  await applyTopology(s, ns, 'web', { selector: 'app=web', pollingInterval: '1s' });
  fault?.(proxy, ns);
  return { s, ns, proxy, op: startOperator(kubeconfig, ['--namespaces', ns, '--no-leader-elect']) };
}

describe('an operator that may list pods only in its namespaces probes each of them, and never cluster-wide', () => {
  let s: ControlPlaneState;
  let ns: string;
  let op: CtopoProcess;
  let proxy: FaultProxy;

  beforeAll(async () => {
    ({ s, ns, proxy, op } = await proxiedWebTopology('probe-ns', '10.45.0.1'));
    await waitFor('1 peer', async () => (await topologyStatus(s, ns, 'web'))?.peerCount === 1, 30_000);
  });
  afterAll(async () => {
    await op?.stop();
    await proxy?.stop();
  });

  it('asks first (no refused request): each poll is a LIST of limit=1 in the namespace, answered 200', async () => {
    const lastPoll = () =>
      op.metric('ctopo_last_successful_poll_timestamp_seconds', { namespace: ns, name: 'web' });
    const before = await lastPoll();
    await waitFor(
      '3 more polls',
      async () => {
        const t = await lastPoll();
        return t !== undefined && before !== undefined && t - before >= 3;
      },
      30_000,
    );
    const probes = probesSeen(proxy, 0);
    expect(probes.cluster).toBe(0);
    expect(probes.byNamespace.get(ns)).toBeGreaterThanOrEqual(2);
    expect(proxy.passed.get(403) ?? 0).toBe(0);
    expect((await topologyStatus(s, ns, 'web'))?.lastResponse?.code).toBe('200');
  });

  it('a failed poll is retried with a backoff capped at pollingInterval (1 s here), not at 30 s', async () => {
    // Uncapped, the retries would come 0.5, 1, 2, 4, 8, 16 s apart: six in 30 s.
    const before = proxy.faulted;
    proxy.set({ kind: 'status', code: 500 }, new RegExp(`^/api/v1/namespaces/${ns}/pods\\?(?!.*watch=true)`));
    try {
      await waitFor('12 failed polls', async () => proxy.faulted - before >= 12, 30_000);
    } finally {
      proxy.set({ kind: 'pass' });
    }
    await waitFor(
      'answered 200 again',
      async () => (await topologyStatus(s, ns, 'web'))?.lastResponse?.code === '200',
      30_000,
    );
  });
});

/** Status writes as the API server reports them: each write is one MODIFIED event of the object. */
function countWrites(
  kube: Kube,
  ns: string,
  name: string,
): Promise<{ writes: () => number; stop: () => void }> {
  let writes = 0;
  return new Promise((resolve, reject) => {
    let handle: WatchHandle | undefined;
    kube
      .watch(
        `/apis/cluster.netzlive.io/v1alpha1/namespaces/${ns}/clustertopologies`,
        { fieldSelector: `metadata.name=${name}` },
        (type) => {
          if (type === 'MODIFIED') writes++;
        },
        () => {},
        600_000,
      )
      .then((h) => {
        handle = h;
        resolve({ writes: () => writes, stop: () => handle?.abort() });
      }, reject);
  });
}

describe('a burst of changes to one topology is written at most once per window', () => {
  const PODS = 30;
  let s: ControlPlaneState;
  let ns: string;
  let op: CtopoProcess;
  let kube: Kube;

  beforeAll(async () => {
    let kubeconfig: string;
    ({ s, ns, kubeconfig } = await operatorNamespace('burst'));
    kube = connect({ kubeconfig: s.kubeconfig });
    for (let i = 0; i < PODS; i++) await labelledPod(s, ns, `web-${i}`, { app: 'web' }, `10.42.0.${i + 1}`);
    await applyTopology(s, ns, 'web', { selector: 'app=web', pollingInterval: '10m' });
    op = startOperator(kubeconfig, ['--namespaces', ns, '--no-leader-elect']);
    await waitFor(
      `${PODS} peers`,
      async () => (await topologyStatus(s, ns, 'web'))?.peerCount === PODS,
      60_000,
    );
  });
  afterAll(async () => {
    await op?.stop();
  });

  it('30 pods changing one after another: every change published, in at most one write per write window (250 ms)', async () => {
    const counter = await countWrites(kube, ns, 'web');
    try {
      await sleep(2000); // the watch's first event is the object as it is
      const before = counter.writes();
      const t0 = performance.now();
      // One pod every 50 ms, as a rolling update or a drain goes: without a window each change
      // finds the previous write done and gets one of its own.
      await Promise.all(
        Array.from({ length: PODS }, (_, i) =>
          sleep(i * 50).then(() =>
            kube.request('PATCH', `/api/v1/namespaces/${ns}/pods/web-${i}/status`, {
              body: { status: { podIP: `10.43.0.${i + 1}`, podIPs: [{ ip: `10.43.0.${i + 1}` }] } },
              contentType: 'application/merge-patch+json',
              ignoreBody: true,
            }),
          ),
        ),
      );
      const want = Array.from({ length: PODS }, (_, i) => `web-${i}@10.43.0.${i + 1}`).sort();
      await waitFor(
        'every change published',
        async () => names(await topologyStatus(s, ns, 'web')).join() === want.join(),
        60_000,
      );
      const elapsed = performance.now() - t0;
      await sleep(2 * WRITE_WINDOW_MS); // a write after the last change counts too
      const writes = counter.writes() - before;
      // Writes start at least a window apart, the first after the first change was sent and the
      // last before every change was seen.
      expect(writes).toBeGreaterThan(0);
      expect(writes).toBeLessThanOrEqual(Math.floor(elapsed / WRITE_WINDOW_MS) + 1);
      expect(writes).toBeLessThan(PODS);
    } finally {
      counter.stop();
    }
  });
});

describe('a status write when the object moved since the last write', () => {
  let s: ControlPlaneState;
  let ns: string;
  let op: CtopoProcess;

  beforeAll(async () => {
    let kubeconfig: string;
    ({ s, ns, kubeconfig } = await operatorNamespace('moved'));
    await labelledPod(s, ns, 'web-0', { app: 'web' }, '10.44.0.1');
    await labelledPod(s, ns, 'web-1', { app: 'web' }, '10.44.0.2');
    await applyTopology(s, ns, 'web', { selector: 'app=web', pollingInterval: '10m' });
    op = startOperator(kubeconfig, ['--namespaces', ns, '--no-leader-elect']);
    await waitFor('2 peers', async () => (await topologyStatus(s, ns, 'web'))?.peerCount === 2, 30_000);
  });
  afterAll(async () => {
    await op?.stop();
  });

  it('lands: from the resourceVersion the cache saw, or as a merge patch after a 409', async () => {
    // Someone else changes the object (a label): its resourceVersion moves, its status does not.
    // Whether the operator's cache has seen the label before the pod change is written is a race:
    // the JSON Patch from the cached resourceVersion is taken, or refused (409, the applier tests
    // below) and sent as a merge patch. Either way the change lands.
    await kubectlOk(s, ['-n', ns, 'label', 'ctopo', 'web', 'team=blue']);
    await setPodStatus(s, ns, 'web-1', { ip: '10.44.0.9', ready: true });
    await waitFor(
      'web-1 at its new IP',
      async () => names(await topologyStatus(s, ns, 'web')).join() === 'web-0@10.44.0.1,web-1@10.44.0.9',
      30_000,
    );
    expect((await topologyStatus(s, ns, 'web'))?.peerCount).toBe(2);
  });
});

describe('the status applier on the real API server: a JSON Patch carries the resourceVersion it was computed at', () => {
  let s: ControlPlaneState;
  let ns: string;
  const peer = (pod: string, ip: string) => ({
    nodeName: `${pod}@${ip}`,
    pod,
    uid: `uid-${pod}`,
    terminating: false,
    ready: true,
    serving: true,
  });
  const write = (before: ClusterTopologyStatus | undefined, after: ClusterTopologyStatus): StatusWrite => ({
    status: after,
    patch: after,
    ...(before ? { ops: statusPatchOps(before, after)! } : {}),
    events: [],
    gauges: { peers: after.peerCount ?? 0, excluded: 0 },
  });

  beforeAll(async () => {
    ({ s, ns } = await operatorNamespace('applier'));
  });

  /** Writes two statuses, the object labelled in between or not; the PATCH answers' codes. */
  async function twoWrites(name: string, moveBetween: boolean) {
    const codes: string[] = [];
    const kube = connect({
      kubeconfig: s.kubeconfig,
      observe: (r) => r.method === 'PATCH' && codes.push(String(r.code)),
    });
    const applier = new StatusApplier(
      kube,
      new EventRecorder(kube, 'test', () => {}, 0),
      operatorMetrics(),
      () => {},
    );
    await applyTopology(s, ns, name, { selector: 'app=none', pollingInterval: '10m' });
    const ref = { namespace: ns, name };
    const first: ClusterTopologyStatus = { peerCount: 1, peers: [peer('a', '10.45.0.1')] };
    const second: ClusterTopologyStatus = {
      peerCount: 2,
      peers: [peer('a', '10.45.0.1'), peer('b', '10.45.0.2')],
    };
    const firstWrite = await applier.apply(ref, write(undefined, first));
    // No JSON Patch without a resourceVersion to base it on: a merge patch, not exact.
    expect(firstWrite).toEqual({ resourceVersion: expect.stringMatching(/^\d+$/), exact: false });
    if (moveBetween) await kubectlOk(s, ['-n', ns, 'label', 'ctopo', name, 'team=red']);
    const secondWrite = await applier.apply(ref, write(first, second), firstWrite!.resourceVersion);
    const object = JSON.parse(await kubectlOk(s, ['-n', ns, 'get', 'ctopo', name, '-o', 'json'])) as {
      metadata: { resourceVersion: string };
    };
    expect(secondWrite?.resourceVersion).toBe(object.metadata.resourceVersion);
    expect((await topologyStatus(s, ns, name))?.peers).toEqual(second.peers);
    return { codes, exact: secondWrite?.exact };
  }

  it('is taken when the object has not moved since, and the write is exact', async () => {
    expect(await twoWrites('still', false)).toEqual({ codes: ['200', '200'], exact: true });
  });

  it('is refused (409) when the object moved since, and the merge patch lands instead, not exact', async () => {
    expect(await twoWrites('moved', true)).toEqual({ codes: ['200', '409', '200'], exact: false });
  });
});

describe('a first list that does not answer: the topology is told Listing, then its peers', () => {
  let s: ControlPlaneState;
  let ns: string;
  let op: CtopoProcess;
  let proxy: FaultProxy;

  beforeAll(async () => {
    // Every pod request of the namespace hangs: the first lists, the probes and the watch.
    ({ s, ns, proxy, op } = await proxiedWebTopology('listing', '10.46.0.1', (p, n) =>
      p.set({ kind: 'hang' }, new RegExp(`^/api/v1/namespaces/${n}/pods`)),
    ));
  });
  afterAll(async () => {
    await op?.stop();
    await proxy?.stop();
  });

  it('Ready is Unknown with reason Listing and no peers while the first list hangs; once it answers, Listed with the pod', async () => {
    const ready = (st: ClusterTopologyStatus | undefined) => st?.conditions?.find((c) => c.type === 'Ready');
    const listing = await waitFor(
      'Ready Unknown, Listing',
      async () => {
        const st = await topologyStatus(s, ns, 'web');
        return ready(st)?.reason === 'Listing' ? st : undefined;
      },
      60_000,
    );
    expect(ready(listing)?.status).toBe('Unknown');
    expect(listing.peers ?? []).toEqual([]);
    expect(proxy.faulted).toBeGreaterThan(0);
    // The hung requests are cut and the next ones pass.
    proxy.set({ kind: 'drop' }, new RegExp(`^/api/v1/namespaces/${ns}/pods`));
    proxy.set({ kind: 'pass' });
    const listed = await waitFor(
      'Ready True with web-0',
      async () => {
        const st = await topologyStatus(s, ns, 'web');
        return ready(st)?.status === 'True' && st?.peerCount === 1 ? st : undefined;
      },
      60_000,
    );
    expect(ready(listed)?.reason).toBe('Listed');
    expect(names(listed)).toEqual(['web-0@10.46.0.1']);
  });
});

describe('a topology above 1,000 peers: each flag only where it differs from status.peerDefaults', () => {
  const BIG = 1002; // web-1000 is not ready, web-1001 is terminating; the rest are ready
  let s: ControlPlaneState;
  let ns: string;
  let op: CtopoProcess;
  let kube: Kube;
  const topology = async () =>
    kube.request<{ status?: ClusterTopologyStatus }>(
      'GET',
      `/apis/cluster.netzlive.io/v1alpha1/namespaces/${ns}/clustertopologies/big`,
    );
  const entry = (st: ClusterTopologyStatus | undefined, pod: string) => st?.peers?.find((p) => p.pod === pod);

  beforeAll(async () => {
    let kubeconfig: string;
    ({ s, ns, kubeconfig } = await operatorNamespace('large'));
    kube = connect({ kubeconfig: s.kubeconfig });
    const pods = `/api/v1/namespaces/${ns}/pods`;
    await mapLimit(
      Array.from({ length: BIG }, (_, i) => i),
      16,
      async (i) => {
        const name = `web-${i}`;
        await kube.request('POST', pods, {
          body: {
            apiVersion: 'v1',
            kind: 'Pod',
            metadata: {
              name,
              labels: { app: 'big' },
              ...(i === 1001 ? { finalizers: ['example.com/hold'] } : {}),
            },
            spec: { containers: [{ name: 'app', image: 'registry.invalid/app:1' }] },
          },
          ignoreBody: true,
        });
        const ip = `10.50.${i >> 8}.${i & 255}`;
        await kube.request('PATCH', `${pods}/${name}/status`, {
          body: {
            status: {
              phase: 'Running',
              podIP: ip,
              podIPs: [{ ip }],
              conditions: [{ type: 'Ready', status: i === 1000 ? 'False' : 'True' }],
            },
          },
          contentType: 'application/merge-patch+json',
          ignoreBody: true,
        });
      },
    );
    // Held by its finalizer: deleted, so terminating, and still there.
    await kube.request('DELETE', `${pods}/web-1001`, { ignoreBody: true });
    await applyTopology(s, ns, 'big', {
      selector: 'app=big',
      pollingInterval: '10m',
      membership: { peers: 'Running' },
    });
    op = startOperator(kubeconfig, ['--namespaces', ns, '--no-leader-elect']);
    await waitFor(
      `${BIG} peers, web-1001 terminating`,
      async () => {
        const st = (await topology()).status;
        return st?.peerCount === BIG && entry(st, 'web-1001')?.terminating === true;
      },
      120_000,
    );
  }, 300_000);
  afterAll(async () => {
    await op?.stop();
  });

  it('writes a ready pod that is not terminating as nodeName, pod and uid alone; a reader reads every flag back', async () => {
    const { status } = await topology();
    expect(status?.peerDefaults).toEqual({ terminating: false, ready: true, serving: true });
    expect(Object.keys(entry(status, 'web-7')!).sort()).toEqual(['nodeName', 'pod', 'uid']);
    expect(entry(status, 'web-1000')).toEqual({
      nodeName: 'web-1000@10.50.3.232',
      pod: 'web-1000',
      uid: expect.any(String),
      ready: false,
      serving: false,
    });
    expect(entry(status, 'web-1001')).toEqual({
      nodeName: 'web-1001@10.50.3.233',
      pod: 'web-1001',
      uid: expect.any(String),
      terminating: true,
      ready: false,
    });
    const meaning = statusMeaning(status);
    if (meaning.kind !== 'current') throw new Error(`not current: ${JSON.stringify(meaning)}`);
    const flags = (pod: string) => {
      const p = meaning.peers.find((x) => x.pod === pod)!;
      return [p.terminating, p.ready, p.serving];
    };
    expect(flags('web-7')).toEqual([false, true, true]);
    expect(flags('web-1000')).toEqual([false, false, false]);
    expect(flags('web-1001')).toEqual([true, false, true]);
  });

  it('back at 1,000 peers: every entry writes its flags again and peerDefaults is gone', async () => {
    const pods = `/api/v1/namespaces/${ns}/pods`;
    await kube.request('DELETE', `${pods}/web-1000`, { ignoreBody: true });
    await kube.request('PATCH', `${pods}/web-1001`, {
      body: { metadata: { finalizers: null } },
      contentType: 'application/merge-patch+json',
      ignoreBody: true,
    });
    await waitFor('1000 peers', async () => (await topology()).status?.peerCount === 1000, 60_000);
    const { status } = await topology();
    expect(status?.peerDefaults).toBeUndefined();
    const unflagged = status!.peers!.filter(
      (p) =>
        typeof p.terminating !== 'boolean' || typeof p.ready !== 'boolean' || typeof p.serving !== 'boolean',
    );
    expect(unflagged).toEqual([]);
  });
});
