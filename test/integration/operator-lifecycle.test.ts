import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import type { ControlPlaneState } from '../../dev/cluster/control-plane.js';
import { startApiserver, stopApiserver } from '../../dev/cluster/control-plane.js';
import {
  freshNamespace,
  installCrd,
  kubectlOk,
  kubeconfigForToken,
  kubeconfigForUser,
  privateCluster,
  sharedCluster,
} from '../support/cluster.js';
import {
  applyTopology,
  condition,
  createNode,
  eventsFor,
  createPod,
  grantOperatorRbac,
  seedPods,
  serviceAccountToken,
  setPodStatus,
  topologyStatus,
} from '../support/objects.js';
import { FaultProxy } from '../support/fault-proxy.js';
import { CtopoProcess, startOperator } from '../support/operator-process.js';
import { waitFor } from '../support/wait.js';
import { operatorNamespace } from '../support/world.js';

describe('configuration is checked at start', () => {
  it.each([
    ['an unknown flag', ['--bogus-flag'], /Unknown option '--bogus-flag'/],
    ['a bad number', ['--concurrency', 'lots'], /concurrency: "lots" is not a whole number/],
    ['a bad duration', ['--lease-duration', 'forever'], /leaseDuration: must match pattern/],
    ['a bad log level', ['--log-level', 'loud'], /logLevel: must be one of "error", "warn", "info", "debug"/],
  ])('refuses %s with exit 64 and a message naming it', async (_what, args, message) => {
    const p = new CtopoProcess(['operator', ...args]);
    expect(await p.wait()).toBe(64);
    expect(p.output).toMatch(message);
  });

  it('refuses an unknown key in the config file, naming the key', async () => {
    const file = join(tmpdir(), `ctopo-config-${process.pid}.yaml`);
    await writeFile(file, 'concurrency: 2\nnamespacez: [a]\n');
    const p = new CtopoProcess(['operator', '--config', file]);
    expect(await p.wait()).toBe(64);
    expect(p.output).toMatch(/unknown key "namespacez"/);
  });

  it('refuses a bad value from the environment, naming the variable', async () => {
    const p = new CtopoProcess(['operator'], { CTOPO_WATCH_NODES: 'perhaps' });
    expect(await p.wait()).toBe(64);
    expect(p.output).toMatch(/CTOPO_WATCH_NODES/);
  });
});

describe('topologies that cannot work are refused; the others keep working', () => {
  let s: ControlPlaneState;
  let ns: string;
  let other: string;
  let allowed: string;
  let op: CtopoProcess;

  beforeAll(async () => {
    s = await sharedCluster();
    other = await freshNamespace(s, 'other');
    allowed = await freshNamespace(s, 'allowed');
    let kubeconfig: string;
    ({ ns, kubeconfig } = await operatorNamespace('refuse', [other, allowed]));
    await seedPods(s, ns, 2, { subnet: '10.3.0' });
    await seedPods(s, other, 2, { prefix: 'secret', subnet: '10.3.0' });
    await seedPods(s, allowed, 1, { prefix: 'shared', subnet: '10.3.0' });
    await applyTopology(s, ns, 'good', {
      selector: 'netzlive/pod-type=cluster-service',
      pollingInterval: '2s',
    });
    await applyTopology(s, ns, 'cross', { selector: 'netzlive/pod-type=cluster-service', namespace: other });
    await applyTopology(s, ns, 'permitted', {
      selector: 'netzlive/pod-type=cluster-service',
      namespace: allowed,
    });
    // The API server accepts any string as a selector in the CRD; the list refuses this one.
    await applyTopology(s, ns, 'badselector', { selector: 'app in (web' });
    op = startOperator(kubeconfig, [
      '--namespaces',
      ns,
      '--no-leader-elect',
      '--allow-target-namespaces',
      allowed,
    ]);
  });
  afterAll(async () => {
    await op?.stop();
  });

  it('refuses a topology selecting pods in another namespace: Ready=False CrossNamespaceDenied, nothing of it published', async () => {
    const st = await waitFor(
      'cross refused',
      async () => {
        const x = await topologyStatus(s, ns, 'cross');
        return condition(x, 'Ready')?.reason === 'CrossNamespaceDenied' ? x : undefined;
      },
      20_000,
    );
    expect(condition(st, 'Ready')!.status).toBe('False');
    expect(condition(st, 'Ready')!.message).toContain(other);
    expect(st.peers ?? []).toEqual([]);
    // Without lastResponse (an unknown list, not an empty one: agents keep what they have,
    // docs/security.md) and without lastPollTime; and a Warning.
    expect(st.lastResponse).toBeUndefined();
    expect(st.lastPollTime).toBeUndefined();
    await waitFor('the Warning', async () =>
      (await eventsFor(s, ns, 'cross')).some(
        (e) => e.type === 'Warning' && e.reason === 'CrossNamespaceDenied',
      ),
    );
  });

  it('a listed topology turned to a namespace it may not read: the list emptied and lastResponse dropped (unknown, never an empty list)', async () => {
    await applyTopology(s, ns, 'turned', { selector: 'netzlive/pod-type=cluster-service' });
    const listed = await waitFor('turned listed', async () => {
      const x = await topologyStatus(s, ns, 'turned');
      return x?.peerCount === 2 ? x : undefined;
    });
    expect(listed.lastResponse?.code).toBe('200');
    await applyTopology(s, ns, 'turned', { selector: 'netzlive/pod-type=cluster-service', namespace: other });
    const st = await waitFor('turned refused', async () => {
      const x = await topologyStatus(s, ns, 'turned');
      return condition(x, 'Ready')?.reason === 'CrossNamespaceDenied' ? x : undefined;
    });
    expect(st.peers ?? []).toEqual([]);
    expect(st.lastResponse).toBeUndefined();
    expect(st.lastPollTime).toBeUndefined();
  });

  it('a spec the CRD accepts but the operator refuses: Ready=False InvalidSpec naming the field, the last list kept, a Warning', async () => {
    await waitFor('good listed', async () => (await topologyStatus(s, ns, 'good'))?.peerCount === 2, 20_000);
    const before = (await topologyStatus(s, ns, 'good'))!;
    await applyTopology(s, ns, 'good', {
      selector: 'netzlive/pod-type=cluster-service',
      pollingInterval: '2s',
      failureDomains: { levels: [{ key: 'topology.kubernetes.io/zone' }], partitionLevel: 'rack' },
    });
    try {
      const st = await waitFor(
        'good refused',
        async () => {
          const x = await topologyStatus(s, ns, 'good');
          return condition(x, 'Ready')?.reason === 'InvalidSpec' ? x : undefined;
        },
        20_000,
      );
      expect(condition(st, 'Ready')).toMatchObject({ status: 'False' });
      expect(condition(st, 'Ready')!.message).toContain('partitionLevel');
      expect(st.peers).toEqual(before.peers);
      expect(st.lastPollTime).toBeUndefined();
      await waitFor('the Warning', async () =>
        (await eventsFor(s, ns, 'good')).some((e) => e.type === 'Warning' && e.reason === 'InvalidSpec'),
      );
    } finally {
      await applyTopology(s, ns, 'good', {
        selector: 'netzlive/pod-type=cluster-service',
        pollingInterval: '2s',
      });
    }
    await waitFor(
      'good served again',
      async () => condition(await topologyStatus(s, ns, 'good'), 'Ready')?.status === 'True',
      20_000,
    );
  });

  it('serves another namespace when the operator is configured to allow it', async () => {
    const st = await waitFor(
      'permitted served',
      async () => {
        const x = await topologyStatus(s, ns, 'permitted');
        return x?.peerCount === 1 ? x : undefined;
      },
      20_000,
    );
    expect(st.peers![0]!.nodeName).toBe('shared-0@10.3.0.1');
  });

  it('a selector the API server refuses gives Ready=False with a reason naming it; the others keep working', async () => {
    const st = await waitFor(
      'badselector refused',
      async () => {
        const x = await topologyStatus(s, ns, 'badselector');
        return condition(x, 'Ready')?.status === 'False' ? x : undefined;
      },
      20_000,
    );
    expect(condition(st, 'Ready')!.reason).toBe('InvalidSelector');
    expect(st.lastResponse!.code).toBe('400');
    expect(condition(st, 'Ready')!.message).toMatch(
      /unable to parse requirement|found '', expected|selector/i,
    );
    const good = await waitFor(
      'good works',
      async () =>
        (await topologyStatus(s, ns, 'good'))?.peerCount === 2 ? topologyStatus(s, ns, 'good') : undefined,
      20_000,
    );
    expect(condition(good, 'Ready')!.status).toBe('True');
  });

  it('a fixed spec recovers without a restart', async () => {
    await applyTopology(s, ns, 'badselector', { selector: 'netzlive/pod-type in (cluster-service)' });
    const st = await waitFor(
      'badselector fixed',
      async () => {
        const x = await topologyStatus(s, ns, 'badselector');
        return x?.peerCount === 2 && condition(x, 'Ready')?.status === 'True' ? x : undefined;
      },
      20_000,
    );
    expect(st.observedGeneration).toBe(2);
  });
});

describe('restarting the operator changes nothing in any status', () => {
  it('keeps peers, conditions and their transition times across a restart', async () => {
    const { s, ns, kubeconfig: kc } = await operatorNamespace('restart');
    await seedPods(s, ns, 3, { subnet: '10.3.0' });
    await applyTopology(s, ns, 'web', {
      selector: 'netzlive/pod-type=cluster-service',
      pollingInterval: '1s',
    });
    const first = startOperator(kc, ['--namespaces', ns, '--no-leader-elect']);
    const before = await waitFor(
      '3 peers',
      async () =>
        (await topologyStatus(s, ns, 'web'))?.peerCount === 3 ? topologyStatus(s, ns, 'web') : undefined,
      20_000,
    );
    await first.stop();

    const rvBefore = JSON.parse(await kubectlOk(s, ['-n', ns, 'get', 'ctopo', 'web', '-o', 'json'])).metadata
      .resourceVersion;
    const second = startOperator(kc, ['--namespaces', ns, '--no-leader-elect']);
    await second.port();
    await waitFor(
      'the new operator to poll several times',
      async () => (await second.metricSum('ctopo_reconcile_total')) >= 5,
      60_000,
    );
    const after = (await topologyStatus(s, ns, 'web'))!;
    const { lastPollTime: _a, ...restBefore } = before!;
    const { lastPollTime: _b, ...restAfter } = after;
    expect(restAfter).toEqual(restBefore);
    // Nothing was written at all: the heartbeat is due only a minute after the last write.
    const rvAfter = JSON.parse(await kubectlOk(s, ['-n', ns, 'get', 'ctopo', 'web', '-o', 'json'])).metadata
      .resourceVersion;
    expect(rvAfter).toBe(rvBefore);
    expect(await second.metricSum('ctopo_status_writes_total')).toBe(0);
    await second.stop();
  });
});

describe('leader election with two replicas', () => {
  let s: ControlPlaneState;
  let ns: string;
  let kc: string;
  const replicas: CtopoProcess[] = [];

  beforeAll(async () => {
    ({ s, ns, kubeconfig: kc } = await operatorNamespace('leader'));
    await seedPods(s, ns, 2, { subnet: '10.3.0' });
    await applyTopology(s, ns, 'web', {
      selector: 'netzlive/pod-type=cluster-service',
      pollingInterval: '1s',
    });
  });
  afterAll(async () => {
    for (const r of replicas) await r.stop('SIGKILL');
  });

  const start = (id: string) => {
    const p = startOperator(kc, ['--namespaces', ns, '--lease-namespace', ns, '--identity', id]);
    replicas.push(p);
    return p;
  };
  const leaderOf = async (a: CtopoProcess, b: CtopoProcess) => {
    const [la, lb] = [await a.metric('ctopo_leader'), await b.metric('ctopo_leader')];
    if (la === 1 && lb === 0) return a;
    if (lb === 1 && la === 0) return b;
    return undefined;
  };

  it('exactly one replica leads and writes; the other writes nothing', async () => {
    const a = start('replica-a');
    const b = start('replica-b');
    const leader = await waitFor('one leader', () => leaderOf(a, b), 30_000);
    const follower = leader === a ? b : a;
    await waitFor(
      'peers published',
      async () => (await topologyStatus(s, ns, 'web'))?.peerCount === 2,
      20_000,
    );
    await createPod(s, ns, 'web-7');
    await setPodStatus(s, ns, 'web-7', { ip: '10.3.0.77', ready: true });
    await waitFor(
      'the new pod published',
      async () => (await topologyStatus(s, ns, 'web'))?.peerCount === 3,
      20_000,
    );
    expect(await leader.metricSum('ctopo_status_writes_total')).toBeGreaterThan(0);
    expect(await follower.metricSum('ctopo_status_writes_total')).toBe(0);
    expect(await follower.metricSum('ctopo_reconcile_total')).toBe(0);
    const lease = JSON.parse(
      await kubectlOk(s, ['-n', ns, 'get', 'lease', 'cluster-topology-operator', '-o', 'json']),
    );
    expect(lease.spec.holderIdentity).toBe(leader === a ? 'replica-a' : 'replica-b');
  });

  it('when the leader dies (SIGKILL, no release), the other takes over within the lease duration', async () => {
    const [a, b] = replicas as [CtopoProcess, CtopoProcess];
    const leader = (await leaderOf(a, b))!;
    const follower = leader === a ? b : a;
    const leaseOf = async () =>
      JSON.parse(await kubectlOk(s, ['-n', ns, 'get', 'lease', 'cluster-topology-operator', '-o', 'json']));
    const before = await leaseOf();
    await leader.stop('SIGKILL');
    // A killed leader cannot release: the follower takes over once the lease runs out (15 s; the
    // time it takes is a benchmark figure, not asserted here).
    await waitFor(
      'the follower to lead',
      async () => (await follower.metric('ctopo_leader')) === 1,
      120_000,
      200,
    );
    const after = await leaseOf();
    expect(after.spec.holderIdentity).toBe(follower === a ? 'replica-a' : 'replica-b');
    expect(after.spec.leaseTransitions ?? 0).toBeGreaterThan(before.spec.leaseTransitions ?? 0);
    await deletePodAndSee(s, ns, follower);
  });

  it('a gracefully stopped leader releases the lease: a successor leads at once', async () => {
    const current = replicas.find((r) => r.exitCode === undefined)!;
    const leaseOf = async () =>
      JSON.parse(await kubectlOk(s, ['-n', ns, 'get', 'lease', 'cluster-topology-operator', '-o', 'json']));
    const holder = (await leaseOf()).spec.holderIdentity;
    const next = start('replica-c');
    await next.port();
    // The leader renews twice while replica-c runs: replica-c has tried and stayed a follower.
    const renewedAt = Date.parse((await leaseOf()).spec.renewTime);
    await waitFor(
      'the leader to renew twice',
      async () => {
        const l = await leaseOf();
        return l.spec.holderIdentity === holder && Date.parse(l.spec.renewTime) > renewedAt + 1000;
      },
      60_000,
    );
    expect(await next.metric('ctopo_leader')).toBe(0);
    expect(await current.stop('SIGTERM')).toBe(0);
    // Released on the way out: right after the process exits the lease no longer names it, long
    // before its 15 s would have run out (without a release it would still name the old leader).
    expect((await leaseOf()).spec.holderIdentity).not.toBe(holder);
    await waitFor('replica-c to lead', async () => (await next.metric('ctopo_leader')) === 1, 60_000, 200);
  });
});

async function deletePodAndSee(s: ControlPlaneState, ns: string, op: CtopoProcess): Promise<void> {
  await kubectlOk(s, ['-n', ns, 'delete', 'pod', 'web-7', '--grace-period=0', '--force']);
  await waitFor(
    'the new leader to publish the deletion',
    async () => (await topologyStatus(s, ns, 'web'))?.peerCount === 2,
    20_000,
  );
  expect(await op.metricSum('ctopo_status_writes_total')).toBeGreaterThan(0);
}

describe('the API server stopped and restarted', () => {
  it('while it is gone, the topology watch is retried after delays that double from 0.5 s up to 30 s, jittered, none early', async () => {
    const { state: s, stop } = await privateCluster();
    try {
      await installCrd(s);
      await kubectlOk(s, ['create', 'namespace', 'app']);
      await applyTopology(s, 'app', 'web', { selector: 'netzlive/pod-type=none', pollingInterval: '1m' });
      const op = startOperator(s.kubeconfig, [
        '--namespaces',
        'app',
        '--no-leader-elect',
        '--log-level',
        'debug',
      ]);
      try {
        await waitFor(
          'the first status',
          async () => (await topologyStatus(s, 'app', 'web'))?.lastResponse,
          20_000,
        );
        /** The retries the operator announced for its ClusterTopology list and watch: when, and the delay. */
        const retries = () =>
          op.output
            .split('\n')
            .filter((l) => l.includes('"retryInMs"') && l.includes('clustertopologies'))
            .map((l) => JSON.parse(l) as { timestamp: string; retryInMs: number })
            .map((x) => ({ at: Date.parse(x.timestamp), ms: x.retryInMs }));
        expect(retries()).toEqual([]);
        await stopApiserver(s);
        // Every attempt fails (connection refused); 8 retries reach the 30 s cap twice.
        const seen = await waitFor(
          '8 retries',
          () => (retries().length >= 8 ? retries() : undefined),
          120_000,
        );
        const ceilings = [500, 1000, 2000, 4000, 8000, 16_000, 30_000, 30_000];
        const delays = seen.slice(0, 8).map((r) => r.ms);
        // Each within the upper half of its step: the step doubles, up to the cap.
        delays.forEach((d, i) => {
          expect(d).toBeGreaterThanOrEqual(ceilings[i]! / 2);
          expect(d).toBeLessThanOrEqual(ceilings[i]!);
        });
        // Jittered: not one fixed fraction of each step.
        expect(new Set(delays.map((d, i) => d / ceilings[i]!)).size).toBeGreaterThan(1);
        // No attempt before its announced delay: the next retry is announced only after it failed.
        for (let i = 0; i + 1 < 8; i++)
          expect(seen[i + 1]!.at - seen[i]!.at).toBeGreaterThanOrEqual(delays[i]! - 5);
        expect(op.exitCode).toBeUndefined();
      } finally {
        await op.stop();
      }
    } finally {
      await stop();
    }
  }, 180_000);

  it('keeps the last list while it is gone, and recovers without an operator restart', async () => {
    const { state: s, stop } = await privateCluster();
    try {
      await installCrd(s);
      await kubectlOk(s, ['create', 'namespace', 'app']);
      await seedPods(s, 'app', 2, { subnet: '10.3.0' });
      await applyTopology(s, 'app', 'web', {
        selector: 'netzlive/pod-type=cluster-service',
        pollingInterval: '1s',
      });
      const op = startOperator(s.kubeconfig, ['--namespaces', 'app', '--no-leader-elect']);
      try {
        await waitFor(
          '2 peers',
          async () => (await topologyStatus(s, 'app', 'web'))?.peerCount === 2,
          20_000,
        );
        const errorsBefore = await op.metricSum('ctopo_api_responses_total', { code: 'TransportError' });
        const stoppedAt = Date.now();
        await stopApiserver(s);
        await waitFor(
          'transport errors while the API server is gone',
          async () =>
            (await op.metricSum('ctopo_api_responses_total', { code: 'TransportError' })) >= errorsBefore + 3,
          60_000,
        );
        expect(op.exitCode).toBeUndefined();
        const restartedAt = Date.now();
        await startApiserver(s);
        const backAt = Date.now() / 1000;
        // Once it is back, the last list is still there and fresh changes flow again.
        const st = (await topologyStatus(s, 'app', 'web'))!;
        expect(st.peers!.map((p) => p.nodeName)).toEqual(['web-0@10.3.0.1', 'web-1@10.3.0.2']);
        // A poll after the restart succeeded (the operator's own record; the status is written
        // only when its content changes).
        await waitFor(
          'a successful poll after the restart',
          async () =>
            ((await op.metric('ctopo_last_successful_poll_timestamp_seconds', {
              namespace: 'app',
              name: 'web',
            })) ?? 0) > backAt,
          120_000,
        );
        const back = await waitFor(
          'the status to say 200, not Degraded',
          async () => {
            const x = await topologyStatus(s, 'app', 'web');
            return x?.lastResponse?.code === '200' && condition(x, 'Degraded')?.status === 'False'
              ? x
              : undefined;
          },
          60_000,
        );
        // Nothing could be written while the API server was gone: the outage is published with
        // the recovery — its first answer (TransportError), when it began and when it ended —
        // and the peers went through it unchanged (Retain).
        expect(back.lastFailure).toMatchObject({ code: 'TransportError', reason: 'TransportError' });
        expect(back.lastFailure!.message).toBeTruthy();
        const since = Date.parse(back.lastFailure!.since);
        const until = Date.parse(back.lastFailure!.until!);
        expect(since).toBeGreaterThanOrEqual(stoppedAt);
        expect(since).toBeLessThan(restartedAt);
        expect(until).toBeGreaterThanOrEqual(restartedAt);
        expect(back.peers!.map((p) => p.nodeName)).toEqual(['web-0@10.3.0.1', 'web-1@10.3.0.2']);
        const wide = await kubectlOk(s, ['-n', 'app', 'get', 'ctopo', 'web', '-o', 'wide']);
        const [header, row] = wide.trim().split('\n');
        // By the column's offset: a blank cell (MESH, while no member reports) shifts whitespace splits.
        const at = header!.indexOf('LAST FAILURE');
        expect(at).toBeGreaterThan(0);
        expect(row!.slice(at).split(/\s+/)[0]).toBe('TransportError');
        await createPod(s, 'app', 'web-5');
        await setPodStatus(s, 'app', 'web-5', { ip: '10.3.0.55' });
        await waitFor(
          'a new pod after the restart',
          async () => (await topologyStatus(s, 'app', 'web'))?.peerCount === 3,
          30_000,
        );
        expect(op.exitCode).toBeUndefined();
        expect(await op.metricSum('ctopo_watch_restarts_total')).toBeGreaterThan(0);
      } finally {
        await op.stop();
      }
    } finally {
      await stop();
    }
  });
});

describe('silence is an error: an operator that cannot work says so', () => {
  let s: ControlPlaneState;
  beforeAll(async () => {
    s = await sharedCluster();
    await installCrd(s);
  });

  it('an identity that may not read topologies or its Lease is refused at start, naming the flags', async () => {
    const ns = await freshNamespace(s, 'nobody');
    const kc = await kubeconfigForUser(s, `nobody-${ns}`);
    const p = startOperator(kc, ['--namespaces', ns]);
    expect(await p.wait()).toBe(1);
    expect(p.output).toMatch(/refusing to start/);
    expect(p.output).toMatch(
      new RegExp(`may not list clustertopologies.cluster.netzlive.io in namespace "${ns}"`),
    );
    expect(p.output).toMatch(/--namespaces/);
    expect(p.output).toMatch(/may not get leases.coordination.k8s.io "cluster-topology-operator"/);
    expect(p.output).toMatch(/--lease-name/);
  });

  it('a Lease that cannot be created is a warning, a /readyz line and a metric, until it can', async () => {
    const missing = `lease-home-${process.pid}-${Date.now() % 100000}`;
    const served = await freshNamespace(s, 'lonely');
    const p = startOperator(s.kubeconfig, [
      '--namespaces',
      served,
      '--lease-namespace',
      missing,
      '--identity',
      'lonely',
    ]);
    try {
      await waitFor(
        'the lease problem metric',
        async () => (await p.metric('ctopo_lease_problem')) === 1,
        20_000,
      );
      const ready = await p.get('/readyz');
      expect(ready.status).toBe(503);
      expect(ready.body).toMatch(
        new RegExp(`lease ${missing}/cluster-topology-operator: .*creating it failed.*404`),
      );
      expect(p.output).toMatch(/"level":"warn".*creating it failed/);
      expect(await p.metric('ctopo_leader')).toBe(0);
      await kubectlOk(s, ['create', 'namespace', missing]);
      await waitFor(
        'leadership once the namespace exists',
        async () => (await p.metric('ctopo_leader')) === 1,
        20_000,
      );
      expect(await p.metric('ctopo_lease_problem')).toBe(0);
      await waitFor(
        '/readyz without the lease line',
        async () => !/lease/.test((await p.get('/readyz')).body),
      );
    } finally {
      await p.stop();
      await kubectlOk(s, ['delete', 'namespace', missing, '--wait=false', '--ignore-not-found']);
    }
  });
});

describe('a fresh operator waits for the Nodes before it publishes', () => {
  it('publishes no interim placement while its Node list is unanswered (restart or handover)', async () => {
    const s = await sharedCluster();
    await installCrd(s);
    const ns = await freshNamespace(s, 'nodewait');
    const token = await serviceAccountToken(s, ns, 'operator');
    await grantOperatorRbac(s, { kind: 'ServiceAccount', name: 'operator', namespace: ns }, [ns], ns);
    const proxy = await new FaultProxy(s).start();
    const kc = await kubeconfigForToken(s, `nodewait-${ns}.kubeconfig`, token, proxy.url);
    for (let i = 0; i < 3; i++) {
      const node = `${ns}-n${i}`;
      await createNode(s, node, {
        'topology.kubernetes.io/zone': `${ns}-z${i}`,
        'kubernetes.io/hostname': node,
      });
      await createPod(s, ns, `web-${i}`, { nodeName: node });
      await setPodStatus(s, ns, `web-${i}`, { ip: `10.9.0.${i + 1}`, ready: true });
    }
    await applyTopology(s, ns, 'web', {
      selector: 'netzlive/pod-type=cluster-service',
      pollingInterval: '1s',
    });
    const zonesKnown = async () => {
      const st = await topologyStatus(s, ns, 'web');
      return JSON.stringify(st?.failureDomains ?? {}).includes(`${ns}-z2`) ? st : undefined;
    };
    const first = startOperator(kc, ['--namespaces', ns, '--no-leader-elect']);
    const before = await waitFor('the zones in the analysis', zonesKnown, 60_000);
    await first.stop();
    const rv = async () =>
      JSON.parse(await kubectlOk(s, ['-n', ns, 'get', 'ctopo', 'web', '-o', 'json'])).metadata
        .resourceVersion;
    const rvBefore = await rv();

    // The Node list hangs (well within the request timeout); pods are listed as usual.
    proxy.set({ kind: 'hang' }, /^\/api\/v1\/nodes/);
    const second = startOperator(kc, ['--namespaces', ns, '--no-leader-elect']);
    try {
      await second.port();
      await waitFor(
        'the new operator to list the pods several times',
        async () => (await second.metricSum('ctopo_reconcile_total')) >= 5,
        60_000,
      );
      expect(await second.metricSum('ctopo_status_writes_total')).toBe(0);
      expect(await rv()).toBe(rvBefore);
      const { lastPollTime: _a, ...restBefore } = before;
      const { lastPollTime: _b, ...restAfter } = (await topologyStatus(s, ns, 'web'))!;
      expect(restAfter).toEqual(restBefore);
    } finally {
      await second.stop();
      await proxy.stop();
    }
  }, 180_000);
});
