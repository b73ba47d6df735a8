import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFile } from 'node:fs/promises';
import type { ControlPlaneState } from '../../dev/cluster/control-plane.js';
import {
  applyTopology,
  condition,
  createPod,
  deletePod,
  setPodStatus,
  topologyStatus,
} from '../support/objects.js';
import { startOperator, type CtopoProcess } from '../support/operator-process.js';
import { waitFor } from '../support/wait.js';
import { nodeFlagsOf } from '../../bench/proc.js';
import { operatorNamespace } from '../support/world.js';

const EXTERNAL_DNS_PATH = "$.spec.containers[?(@.name >= '0')].env[?(@.name == 'EXTERNAL_DNS')].value";
const HOST = 'netzlive/hostname-naming-jsonpath';
const NAME = 'netzlive/nodename-naming-jsonpath';

describe('the operator publishes peers and exclusions in .status (real API server)', () => {
  let s: ControlPlaneState;
  let ns: string;
  let op: CtopoProcess;

  beforeAll(async () => {
    let kubeconfig: string;
    ({ s, ns, kubeconfig } = await operatorNamespace('naming'));
    // A poll every 10 minutes: anything the status shows within seconds came through the watch.
    await applyTopology(s, ns, 'web', {
      selector: 'netzlive/pod-type=cluster-service',
      pollingInterval: '10m',
    });
    op = startOperator(kubeconfig, ['--namespaces', ns, '--no-leader-elect']);
    await op.port();
  });
  afterAll(async () => {
    await op?.stop();
  });

  const status = () => topologyStatus(s, ns, 'web');
  const peerNames = async () => (await status())?.peers?.map((p) => p.nodeName) ?? [];
  const excludedOf = async (pod: string) => (await status())?.excluded?.find((e) => e.pod === pod);

  it('starts with an empty, successful first poll', async () => {
    const st = await waitFor('a first status', async () =>
      (await status())?.lastResponse ? status() : undefined,
    );
    expect(st!.lastResponse).toMatchObject({ code: '200', reason: 'OK' });
    expect(condition(st, 'Ready')?.status).toBe('True');
    expect(condition(st, 'Degraded')?.status).toBe('False');
    expect(st!.peers).toEqual([]);
  });

  it("resolves the single-replica set-up: host from EXTERNAL_DNS through the annotation's JSONPath", async () => {
    await createPod(s, ns, 'myname-web-0', {
      annotations: { [HOST]: EXTERNAL_DNS_PATH },
      env: [{ name: 'EXTERNAL_DNS', value: 'myname-web.netzlive.svc.cluster.local' }],
    });
    await setPodStatus(s, ns, 'myname-web-0', { ip: '10.1.0.5', ready: true });
    await waitFor(
      'the single-replica peer',
      async () => (await peerNames()).includes('myname-web-0@myname-web.netzlive.svc.cluster.local'),
      15_000,
    );
    const peer = (await status())!.peers!.find((p) => p.pod === 'myname-web-0')!;
    expect(peer).toMatchObject({
      hostSource: 'Annotation',
      nameSource: 'PodName',
      podIP: '10.1.0.5',
      terminating: false,
    });
    expect(peer.uid).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('resolves the several-replica set-up: no annotations, pod IP fallback (no silent drop)', async () => {
    for (const [i, ip] of [
      [0, '10.1.1.10'],
      [1, '10.1.1.11'],
    ] as const) {
      await createPod(s, ns, `redispatch-${i}`);
      await setPodStatus(s, ns, `redispatch-${i}`, { ip, ready: true });
    }
    await waitFor(
      'both replicas as peers',
      async () => {
        const names = await peerNames();
        return names.includes('redispatch-0@10.1.1.10') && names.includes('redispatch-1@10.1.1.11');
      },
      15_000,
    );
    const st = (await status())!;
    expect(st.peers!.map((p) => p.nodeName)).toEqual([...st.peers!.map((p) => p.nodeName)].sort());
    expect(st.peers!.find((p) => p.pod === 'redispatch-0')).toMatchObject({
      hostSource: 'PodIP',
      nameSource: 'PodName',
    });
  });

  it('shows every exclusion reason in .status, each with a message naming what to change', async () => {
    const cases: [
      string,
      Parameters<typeof createPod>[3],
      Parameters<typeof setPodStatus>[3] | undefined,
      string,
    ][] = [
      ['no-ip', {}, undefined, 'NoPodIP'],
      ['finished', {}, { ip: '10.1.2.2', phase: 'Succeeded' }, 'PodFinished'],
      [
        'bad-jsonpath',
        { annotations: { [HOST]: '$.spec.containers[' } },
        { ip: '10.1.2.3' },
        'InvalidJSONPath',
      ],
      [
        'no-match',
        { annotations: { [HOST]: "$.metadata.labels['not-there']" } },
        { ip: '10.1.2.4' },
        'NoMatch',
      ],
      [
        'ambiguous',
        { annotations: { [HOST]: '$.spec.containers[*].name' }, extraContainers: ['sidecar'] },
        { ip: '10.1.2.5' },
        'AmbiguousMatch',
      ],
      [
        'not-a-string',
        { annotations: { [HOST]: '$.spec.terminationGracePeriodSeconds' } },
        { ip: '10.1.2.6' },
        'NotAString',
      ],
      [
        'invalid-name',
        {
          labels: { 'netzlive/pod-type': 'cluster-service', erlname: 'has.dots' },
          annotations: { [NAME]: '$.metadata.labels.erlname' },
        },
        { ip: '10.1.2.7' },
        'InvalidNodeName',
      ],
    ];
    for (const [name, opts, st] of cases) {
      await createPod(s, ns, name, opts);
      if (st) await setPodStatus(s, ns, name, st);
    }
    for (const [name, , , reason] of cases) {
      const e = await waitFor(
        `${name} excluded as ${reason}`,
        async () => {
          const x = await excludedOf(name);
          return x?.reason === reason ? x : undefined;
        },
        15_000,
      );
      expect(e.message.length).toBeGreaterThan(20);
    }
    expect((await excludedOf('bad-jsonpath'))!.message).toContain(HOST);
    expect((await excludedOf('ambiguous'))!.message).toMatch(/app.*sidecar|sidecar.*app/);
  });

  it('excludes the shared-DNS-name trap of multi-replica set-ups as DuplicateNodeName, naming the fix', async () => {
    for (const i of [0, 1]) {
      await createPod(s, ns, `shared-${i}`, {
        annotations: { [HOST]: EXTERNAL_DNS_PATH },
        env: [{ name: 'EXTERNAL_DNS', value: 'shared.netzlive.svc.cluster.local' }],
      });
      await setPodStatus(s, ns, `shared-${i}`, { ip: `10.1.3.${i + 1}` });
    }
    // Both carry the same host; the names differ (pod names), so both are peers...
    await waitFor(
      'both shared-DNS pods listed',
      async () =>
        (await peerNames()).filter((n) => n.endsWith('@shared.netzlive.svc.cluster.local')).length === 2,
      15_000,
    );
    // ...until the name part is the same too, which is what a shared DNS name with a fixed node name gives.
    for (const i of [2, 3]) {
      await createPod(s, ns, `dup-${i}`, {
        labels: { 'netzlive/pod-type': 'cluster-service', erlname: 'web' },
        annotations: { [HOST]: EXTERNAL_DNS_PATH, [NAME]: '$.metadata.labels.erlname' },
        env: [{ name: 'EXTERNAL_DNS', value: 'shared.netzlive.svc.cluster.local' }],
      });
      await setPodStatus(s, ns, `dup-${i}`, { ip: `10.1.3.${i + 1}` });
    }
    for (const pod of ['dup-2', 'dup-3']) {
      const e = await waitFor(
        `${pod} DuplicateNodeName`,
        async () => ((await excludedOf(pod))?.reason === 'DuplicateNodeName' ? excludedOf(pod) : undefined),
        15_000,
      );
      expect(e!.message).toContain('web@shared.netzlive.svc.cluster.local');
    }
    expect(await peerNames()).not.toContain('web@shared.netzlive.svc.cluster.local');
  });

  it('reflects a pod getting an IP, an annotation change and a deletion long before the next poll (10 min): only the watch explains it', async () => {
    await createPod(s, ns, 'late-ip');
    await waitFor(
      'late-ip excluded as NoPodIP',
      async () => (await excludedOf('late-ip'))?.reason === 'NoPodIP',
      15_000,
    );
    // The poll is every 10 minutes: while the time of the last successful poll stays what it is
    // now, every change below reached the status through the watch.
    const pollOf = () =>
      op.metric('ctopo_last_successful_poll_timestamp_seconds', { namespace: ns, name: 'web' });
    const pollBefore = await pollOf();
    expect(pollBefore).toBeGreaterThan(0);
    await setPodStatus(s, ns, 'late-ip', { ip: '10.1.4.1' });
    await waitFor('late-ip joins', async () => (await peerNames()).includes('late-ip@10.1.4.1'), 60_000);

    const { kubectlOk } = await import('../support/cluster.js');
    await kubectlOk(s, [
      '-n',
      ns,
      'annotate',
      'pod',
      'late-ip',
      `${NAME}=$.metadata.labels['netzlive/pod-type']`,
    ]);
    await waitFor(
      'the annotation change',
      async () => (await peerNames()).includes('cluster-service@10.1.4.1'),
      10_000,
    );

    await deletePod(s, ns, 'late-ip');
    await waitFor(
      'the deleted pod to leave',
      async () => !(await peerNames()).includes('cluster-service@10.1.4.1'),
      10_000,
    );
    expect(await pollOf()).toBe(pollBefore);
    const st = (await status())!;
    expect(st.excluded!.some((e) => e.pod === 'late-ip')).toBe(false);
  });

  it('keeps a terminating pod a peer, flagged, until it is gone', async () => {
    const { kubectlOk } = await import('../support/cluster.js');
    await createPod(s, ns, 'leaving');
    // A finalizer keeps the pod (with deletionTimestamp) in the API, as a kubelet's graceful stop would.
    await kubectlOk(s, [
      '-n',
      ns,
      'patch',
      'pod',
      'leaving',
      '--type=merge',
      '-p',
      '{"metadata":{"finalizers":["example.com/hold"]}}',
    ]);
    await setPodStatus(s, ns, 'leaving', { ip: '10.1.5.1' });
    await waitFor('leaving joins', async () => (await peerNames()).includes('leaving@10.1.5.1'), 15_000);
    await kubectlOk(s, ['-n', ns, 'delete', 'pod', 'leaving', '--wait=false']);
    const peer = await waitFor(
      'leaving flagged terminating',
      async () => (await status())?.peers?.find((p) => p.pod === 'leaving' && p.terminating),
      15_000,
    );
    expect(peer.nodeName).toBe('leaving@10.1.5.1');
    await kubectlOk(s, [
      '-n',
      ns,
      'patch',
      'pod',
      'leaving',
      '--type=merge',
      '-p',
      '{"metadata":{"finalizers":null}}',
    ]);
    await waitFor('leaving gone', async () => !(await peerNames()).includes('leaving@10.1.5.1'), 15_000);
  });

  it('re-judges every pod when spec.naming changes (the operator keeps verdicts, not pods)', async () => {
    const CUSTOM = 'example.com/host-jsonpath';
    await createPod(s, ns, 'renamed', {
      annotations: {
        [CUSTOM]: "$.metadata.annotations['example.com/dns']",
        'example.com/dns': 'renamed.example',
      },
    });
    await setPodStatus(s, ns, 'renamed', { ip: '10.1.6.1' });
    await waitFor(
      'renamed under the default naming',
      async () => (await peerNames()).includes('renamed@10.1.6.1'),
      15_000,
    );

    const spec = { selector: 'netzlive/pod-type=cluster-service', pollingInterval: '10m' };
    await applyTopology(s, ns, 'web', { ...spec, naming: { hostnameAnnotation: CUSTOM } });
    await waitFor(
      'the host from the newly named annotation',
      async () => (await peerNames()).includes('renamed@renamed.example'),
      15_000,
    );
    // The seed's annotation is no longer the hostname annotation: that pod falls back to its IP.
    expect(await peerNames()).toContain('myname-web-0@10.1.0.5');

    await applyTopology(s, ns, 'web', spec);
    await waitFor(
      'the default naming again',
      async () => {
        const names = await peerNames();
        return (
          names.includes('renamed@10.1.6.1') &&
          names.includes('myname-web-0@myname-web.netzlive.svc.cluster.local')
        );
      },
      15_000,
    );
    await deletePod(s, ns, 'renamed');
    await waitFor('renamed gone', async () => !(await peerNames()).includes('renamed@10.1.6.1'), 15_000);
  });

  it('counts peers and exclusions in kubectl get ctopo and in metrics', async () => {
    const { kubectlOk } = await import('../support/cluster.js');
    const st = (await status())!;
    const table = await kubectlOk(s, ['-n', ns, 'get', 'ctopo', 'web']);
    expect(table).toMatch(new RegExp(`\\nweb\\s+${st.peerCount}\\s+${st.excludedCount}\\s+200\\s+True\\s`));
    expect(await op.metric('ctopo_peers', { namespace: ns, name: 'web' })).toBe(st.peerCount);
    expect(await op.metric('ctopo_excluded_pods', { namespace: ns, name: 'web' })).toBe(st.excludedCount);
    expect((await op.get('/readyz')).status).toBe(200);
    // Four streams: ClusterTopologies, member reports, Nodes, and this namespace's pods — none
    // leaked by restarts (the naming change above re-registered the topology on the namespace's
    // one pod watch).
    expect(await op.metricSum('ctopo_watches_up')).toBe(4);
    expect(await op.metric('ctopo_watches_up', { resource: 'pods' })).toBe(1);
    // bin/ctopo.js re-executed the operator with its runtime flags (a small young generation).
    expect(await nodeFlagsOf(op.child.pid!)).toEqual(['--max-semi-space-size=2']);
    // … and with glibc's arenas capped (its environment as the kernel holds it).
    const environ = (await readFile(`/proc/${op.child.pid!}/environ`, 'utf8')).split('\0');
    expect(environ).toContain('MALLOC_ARENA_MAX=2');
  });
});
