import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ControlPlaneState } from '../../dev/cluster/control-plane.js';
import { freshNamespace, installCrd, kubeconfigForToken, sharedCluster } from '../support/cluster.js';
import {
  applyTopology,
  canI,
  condition,
  createPod,
  eventsFor,
  grantOperatorRbac,
  restorePods,
  seedPods,
  revokePods,
  serviceAccountToken,
  setPodStatus,
  topologyStatus,
} from '../support/objects.js';
import { FaultProxy } from '../support/fault-proxy.js';
import { startOperator, type CtopoProcess } from '../support/operator-process.js';
import { waitFor } from '../support/wait.js';
import { operatorNamespace } from '../support/world.js';

/** The seed's error table, row by row, on a real API server. */

describe('401/403: listing pods refused (RBAC taken away for real)', () => {
  let s: ControlPlaneState;
  let ns: string;
  let op: CtopoProcess;
  let kubeconfig: string;
  const user = () => ({ kind: 'User' as const, name: `op-${ns}` });

  beforeAll(async () => {
    ({ s, ns, kubeconfig } = await operatorNamespace('forbid'));
    await seedPods(s, ns, 3, { subnet: '10.2.0' });
    await applyTopology(s, ns, 'retain', {
      selector: 'netzlive/pod-type=cluster-service',
      pollingInterval: '1s',
    });
    await applyTopology(s, ns, 'disconnect', {
      selector: 'netzlive/pod-type=cluster-service',
      pollingInterval: '1s',
      onForbidden: 'Disconnect',
    });
    op = startOperator(kubeconfig, ['--namespaces', ns, '--no-leader-elect']);
    for (const t of ['retain', 'disconnect'])
      await waitFor(`${t}: 3 peers`, async () => (await topologyStatus(s, ns, t))?.peerCount === 3, 20_000);
  });
  afterAll(async () => {
    await op?.stop();
  });

  it('Retain keeps the last list, Disconnect empties it; both say 403, Degraded, with a Warning event', async () => {
    await revokePods(s, ns, ns);
    await waitFor(
      'RBAC to take effect',
      async () => !(await canI(s, kubeconfig, ['list', 'pods', '-n', ns])),
      20_000,
    );

    const retain = await waitFor(
      'retain: 403',
      async () => {
        const st = await topologyStatus(s, ns, 'retain');
        return st?.lastResponse?.code === '403' ? st : undefined;
      },
      20_000,
    );
    expect(retain.lastResponse).toMatchObject({ code: '403', reason: 'Forbidden' });
    expect(retain.lastResponse!.message).toMatch(/forbidden/i);
    expect(retain.peers!.map((p) => p.nodeName)).toEqual([
      'web-0@10.2.0.1',
      'web-1@10.2.0.2',
      'web-2@10.2.0.3',
    ]);
    expect(condition(retain, 'Degraded')).toMatchObject({ status: 'True', reason: 'Forbidden' });
    expect(condition(retain, 'Ready')).toMatchObject({ status: 'False', reason: 'Forbidden' });

    const disconnect = await waitFor(
      'disconnect: 403 and no peers',
      async () => {
        const st = await topologyStatus(s, ns, 'disconnect');
        return st?.lastResponse?.code === '403' ? st : undefined;
      },
      20_000,
    );
    expect(disconnect.peers).toEqual([]);
    expect(disconnect.peerCount).toBe(0);
    expect(condition(disconnect, 'Degraded')?.message).toMatch(/onForbidden is Disconnect/);

    for (const t of ['retain', 'disconnect']) {
      const ev = await waitFor(
        `${t}: a Warning event`,
        async () => (await eventsFor(s, ns, t)).find((e) => e.type === 'Warning' && e.reason === 'Forbidden'),
        10_000,
      );
      expect(ev.message).toMatch(/403/);
    }
  });

  it('recovers when the permission comes back: 200, not Degraded, peers restored, a Recovered event; since moves once', async () => {
    const sinceBefore = (await topologyStatus(s, ns, 'retain'))!.lastResponse!.since;
    await restorePods(s, ns, ns, user());
    for (const t of ['retain', 'disconnect']) {
      const st = await waitFor(
        `${t}: recovered`,
        async () => {
          const x = await topologyStatus(s, ns, t);
          return x?.lastResponse?.code === '200' && x.peerCount === 3 ? x : undefined;
        },
        30_000,
      );
      expect(condition(st, 'Degraded')).toMatchObject({ status: 'False' });
      expect(condition(st, 'Ready')).toMatchObject({ status: 'True' });
      await waitFor(
        `${t}: a Recovered event`,
        async () => (await eventsFor(s, ns, t)).some((e) => e.type === 'Normal' && e.reason === 'Recovered'),
        10_000,
      );
    }
    const after = (await topologyStatus(s, ns, 'retain'))!.lastResponse!.since;
    expect(Date.parse(after)).toBeGreaterThan(Date.parse(sinceBefore));
    expect(await op.metricSum('ctopo_api_responses_total', { verb: 'GET', code: '403' })).toBeGreaterThan(0);
  });
});

describe('other statuses and dropped connections, through a fault-injecting proxy', () => {
  let s: ControlPlaneState;
  let ns: string;
  let op: CtopoProcess;
  let proxy: FaultProxy;
  let podLists: RegExp;

  beforeAll(async () => {
    s = await sharedCluster();
    await installCrd(s);
    ns = await freshNamespace(s, 'faults');
    const token = await serviceAccountToken(s, ns, 'operator');
    await grantOperatorRbac(s, { kind: 'ServiceAccount', name: 'operator', namespace: ns }, [ns], ns);
    proxy = await new FaultProxy(s).start();
    const kubeconfig = await kubeconfigForToken(s, `proxy-${ns}.kubeconfig`, token, proxy.url);
    await seedPods(s, ns, 2, { subnet: '10.2.0' });
    await applyTopology(s, ns, 'web', {
      selector: 'netzlive/pod-type=cluster-service',
      pollingInterval: '1s',
    });
    // The polls: lists of this namespace's pods (not the watch, not the status writes).
    podLists = new RegExp(`^/api/v1/namespaces/${ns}/pods\\?(?!.*watch=true)`);
    // A request without an answer is given up after 5 s here (30 s by default): the hang test waits that out.
    op = startOperator(kubeconfig, ['--namespaces', ns, '--no-leader-elect', '--request-timeout', '5s']);
    await waitFor('2 peers', async () => (await topologyStatus(s, ns, 'web'))?.peerCount === 2, 20_000);
  });
  afterAll(async () => {
    await op?.stop();
    await proxy?.stop();
  });

  const expectKept = async (code: string, timeoutMs = 20_000) => {
    const st = await waitFor(
      `lastResponse ${code}`,
      async () => {
        const x = await topologyStatus(s, ns, 'web');
        return x?.lastResponse?.code === code ? x : undefined;
      },
      timeoutMs,
    );
    // The list the last successful poll saw, whatever earlier tests added to it.
    expect(st.peers!.map((p) => p.nodeName)).toEqual(
      expect.arrayContaining(['web-0@10.2.0.1', 'web-1@10.2.0.2']),
    );
    expect(st.peerCount).toBeGreaterThanOrEqual(2);
    expect(condition(st, 'Degraded')?.status).toBe('True');
    return st;
  };

  it.each([500, 503])('HTTP %i: the last list is kept, Degraded, the code shown', async (code) => {
    proxy.set({ kind: 'status', code }, podLists);
    const st = await expectKept(String(code));
    expect(st.lastResponse!.message).toContain('injected by the fault proxy');
    expect(condition(st, 'Degraded')?.reason).toBe('ListFailed');
    proxy.set({ kind: 'pass' });
    await waitFor(
      'recovery',
      async () => (await topologyStatus(s, ns, 'web'))?.lastResponse?.code === '200',
      20_000,
    );
  });

  it('dropped connections: TransportError, the last list kept; recovery without a restart', async () => {
    const restartsBefore = await op.metricSum('ctopo_watch_restarts_total');
    proxy.set({ kind: 'drop' }, podLists); // also cuts every open connection, the watches too
    const st = await expectKept('TransportError');
    expect(st.lastResponse!.reason).toBe('TransportError');
    expect(condition(st, 'Degraded')?.reason).toBe('TransportError');
    proxy.set({ kind: 'pass' });
    await waitFor(
      'recovery',
      async () => (await topologyStatus(s, ns, 'web'))?.lastResponse?.code === '200',
      20_000,
    );
    expect(await op.metricSum('ctopo_watch_restarts_total')).toBeGreaterThan(restartsBefore);
    // The watch is back: a new pod shows up.
    await createPod(s, ns, 'web-9');
    await setPodStatus(s, ns, 'web-9', { ip: '10.2.0.9' });
    await waitFor(
      'web-9 joins',
      async () => (await topologyStatus(s, ns, 'web'))?.peers?.some((p) => p.nodeName === 'web-9@10.2.0.9'),
      20_000,
    );
    expect(op.exitCode).toBeUndefined();
  });

  it('a hanging API server: the list times out as a transport error, then recovers', async () => {
    proxy.set({ kind: 'hang' }, podLists);
    const st = await expectKept('TransportError', 60_000);
    expect(st.lastResponse!.message).toMatch(/no answer within 5s/);
    proxy.set({ kind: 'pass' });
    await waitFor(
      'recovery',
      async () => (await topologyStatus(s, ns, 'web'))?.lastResponse?.code === '200',
      60_000,
    );
  }, 120_000);
});
