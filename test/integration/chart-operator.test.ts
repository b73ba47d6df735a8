import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { ControlPlaneState } from '../../dev/cluster/control-plane.js';
import { freshNamespace, kubectl, kubectlOk, kubeconfigForToken, sharedCluster } from '../support/cluster.js';
import { CHART_DIR, EXAMPLES_DIR, helm, helmOk } from '../support/helm.js';
import {
  applyTopology,
  canI,
  eventsFor,
  patchTopologyStatus,
  serviceAccountToken,
  setPodStatus,
  topologyStatus,
} from '../support/objects.js';
import { startOperator, type CtopoProcess } from '../support/operator-process.js';
import { waitFor } from '../support/wait.js';

/**
 * The chart's least-privilege RBAC, proven on the real kube-apiserver: the operator runs out of
 * the cluster with a token of the chart's ServiceAccount and the Deployment's own arguments, does
 * its whole job on the examples' pods (peers, lease, events), and is refused everything else; an
 * agent bound by the example RoleBinding reads its one ClusterTopology and nothing more.
 */

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { fieldRef?: { fieldPath: string }; secretKeyRef?: unknown };
}
interface Container {
  name: string;
  args?: string[];
  env?: EnvVar[];
}
interface Workload {
  kind: string;
  metadata: { name: string; namespace?: string };
  spec: {
    template?: {
      metadata: { labels: Record<string, string>; annotations?: Record<string, string> };
      spec: { containers: Container[] };
    };
  };
}

async function loadExample(file: string, ns: string): Promise<Workload[]> {
  const docs = parseAllDocuments(await readFile(join(EXAMPLES_DIR, file), 'utf8'))
    .map((d) => d.toJS() as Workload | null)
    .filter((d): d is Workload => !!d);
  for (const d of docs) d.metadata.namespace = ns;
  for (const d of docs)
    for (const subj of (d as unknown as { subjects?: { namespace?: string }[] }).subjects ?? [])
      subj.namespace = ns;
  return docs;
}

/** An env list as the kubelet resolves it: downward API fields, then $(VAR) references to earlier entries. */
function resolveEnv(env: EnvVar[], fields: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of env) {
    if (e.valueFrom?.fieldRef) out[e.name] = fields[e.valueFrom.fieldRef.fieldPath]!;
    else if (e.value !== undefined)
      out[e.name] = e.value.replace(/\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (m, v: string | undefined) =>
        m === '$$' ? '$' : v !== undefined && v in out ? out[v]! : m,
      );
  }
  return out;
}

/** What rel/env.sh.eex makes of the container's environment: the RELEASE_NODE the BEAM starts with. */
function envShNodeName(file: string, env: Record<string, string>): Promise<string> {
  return new Promise((ok, fail) =>
    execFile(
      'sh',
      [
        '-c',
        '. "$1"; printf %s "$RELEASE_DISTRIBUTION $RELEASE_NODE"',
        'sh',
        join(EXAMPLES_DIR, 'rel', file),
      ],
      { env: { PATH: process.env.PATH, ...env } },
      (err, stdout) => (err ? fail(err) : ok(stdout)),
    ),
  );
}

/** `kubectl auth can-i --list` as a set of "resource:verb[names]". */
async function permissions(s: ControlPlaneState, kubeconfig: string, ns: string): Promise<Set<string>> {
  const out = await kubectlOk(s, ['auth', 'can-i', '--list', '-n', ns], { kubeconfig });
  const set = new Set<string>();
  for (const line of out.split('\n').slice(1)) {
    const m = /^(\S+)\s+\[[^\]]*\]\s+\[([^\]]*)\]\s+\[([^\]]*)\]\s*$/.exec(line);
    if (!m) continue;
    for (const verb of m[3]!.split(' ').filter(Boolean)) set.add(`${m[1]}:${verb}${m[2] ? `[${m[2]}]` : ''}`);
  }
  return set;
}
const minus = (a: Set<string>, b: Set<string>) => [...a].filter((x) => !b.has(x)).sort();

const forbidden = async (
  s: ControlPlaneState,
  kubeconfig: string,
  args: string[],
  input?: string,
): Promise<string> => {
  const r = await kubectl(s, args, { kubeconfig, ...(input ? { input } : {}) });
  expect({ args, code: r.code }).toEqual({ args, code: 1 });
  expect(r.stderr).toMatch(/forbidden/i);
  return r.stderr;
};

describe('the chart RBAC on a real API server', () => {
  let s: ControlPlaneState;
  const id = randomBytes(3).toString('hex');
  const release = `ctop-${id}`;
  const releaseNs = `ctopo-system-${id}`;
  const fullname = `${release}-cluster-topology`;
  let appNs: string;
  let otherNs: string;
  let opKubeconfig: string;
  let chartArgs: string[];
  let op: CtopoProcess | undefined;
  let op2: CtopoProcess | undefined;
  const expected = new Map<string, string>(); // pod → node name, from env.sh.eex
  const identity = (n: number) => `${fullname}-replica-${n}`;

  /** The Deployment's own operator flags, with the downward API filled in as a kubelet would. */
  const operatorArgs = (n: number) =>
    chartArgs
      .filter((a) => a !== 'operator' && !/^--http-(host|port)=/.test(a))
      .map((a) => a.replace('$(POD_NAMESPACE)', releaseNs).replace('$(POD_NAME)', identity(n)));

  beforeAll(async () => {
    s = await sharedCluster();
    appNs = await freshNamespace(s, 'chart-app');
    otherNs = await freshNamespace(s, 'chart-other');
    await helmOk(
      [
        'install',
        release,
        CHART_DIR,
        '--namespace',
        releaseNs,
        '--create-namespace',
        '--set',
        `scope.namespaces={${appNs}}`,
      ],
      { kubeconfig: s.kubeconfig },
    );
    await kubectlOk(s, [
      'wait',
      '--for=condition=Established',
      '--timeout=60s',
      'crd/clustertopologies.cluster.netzlive.io',
    ]);
    const dep = JSON.parse(
      await kubectlOk(s, ['-n', releaseNs, 'get', 'deploy', fullname, '-o', 'json']),
    ) as {
      spec: { template: { spec: { serviceAccountName: string; containers: { args: string[] }[] } } };
    };
    chartArgs = dep.spec.template.spec.containers[0]!.args;
    const sa = dep.spec.template.spec.serviceAccountName;
    const token = (await kubectlOk(s, ['-n', releaseNs, 'create', 'token', sa, '--duration=2h'])).trim();
    opKubeconfig = await kubeconfigForToken(s, `chart-operator-${id}.kubeconfig`, token);
    await waitFor('the chart RBAC to reach the authorizer', () =>
      canI(s, opKubeconfig, ['list', 'pods', '-n', appNs]),
    );

    // The examples, as they are, in the app namespace: the topology, Services and workloads
    // (no controllers here, so nothing runs), then pods made from their templates as a
    // ReplicaSet / the StatefulSet controller would name them.
    const single = await loadExample('single-replica.yaml', appNs);
    const multi = await loadExample('multi-replica.yaml', appNs);
    for (const docs of [single, multi])
      await kubectlOk(s, ['apply', '-f', '-'], { input: docs.map((d) => JSON.stringify(d)).join('\n') });
    const pods: {
      name: string;
      ip: string;
      template: NonNullable<Workload['spec']['template']>;
      rel: string;
    }[] = [];
    const web = single.find((d) => d.kind === 'Deployment')!;
    pods.push({
      name: 'myname-web-6d8f9c7b5-x2x7q',
      ip: '10.3.0.10',
      template: web.spec.template!,
      rel: 'single-replica.env.sh.eex',
    });
    const api = multi.find((d) => d.kind === 'StatefulSet')!;
    for (let i = 0; i < 3; i++)
      pods.push({
        name: `myname-api-${i}`,
        ip: `10.3.0.${11 + i}`,
        template: api.spec.template!,
        rel: 'multi-replica.env.sh.eex',
      });
    for (const p of pods) {
      await kubectlOk(s, ['create', '-f', '-'], {
        input: JSON.stringify({
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: p.name, namespace: appNs, ...p.template.metadata },
          spec: p.template.spec,
        }),
      });
      await setPodStatus(s, appNs, p.name, { ip: p.ip, ready: true });
      const fields = { 'metadata.name': p.name, 'metadata.namespace': appNs, 'status.podIP': p.ip };
      const [app, agent] = p.template.spec.containers;
      // The application's own name, through env.sh.eex (HOSTNAME is the pod name)...
      const fromEnvSh = await envShNodeName(p.rel, {
        HOSTNAME: p.name,
        ...resolveEnv(app!.env ?? [], fields),
      });
      // ...and the name the agent sidecar is told the local node has.
      const agentEnv = resolveEnv(agent!.env ?? [], fields);
      expect(fromEnvSh).toBe(`name ${agentEnv.RELEASE_NODE}`);
      expect(agentEnv.RELEASE_DISTRIBUTION).toBe('name');
      expect(agent!.args).toEqual([
        'agent',
        '--topology',
        'web',
        '--connector',
        'erlang',
        '--state-file',
        '/tmp/ctopo-agent-state.json',
      ]);
      expected.set(p.name, fromEnvSh.replace(/^name /, ''));
    }
    // A matching pod in a namespace the chart does not grant: never seen.
    await kubectlOk(s, ['create', '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {
          name: 'stranger',
          namespace: otherNs,
          labels: { 'netzlive/pod-type': 'cluster-service' },
        },
        spec: { containers: [{ name: 'app', image: 'example.invalid/app' }] },
      }),
    });

    op = startOperator(opKubeconfig, operatorArgs(0));
  });

  afterAll(async () => {
    await op?.stop();
    await op2?.stop();
    await helm(['uninstall', release, '--namespace', releaseNs], { kubeconfig: s.kubeconfig });
  });

  it('runs with the Deployment’s own flags: serves the granted namespace, leader election in the release namespace', () => {
    expect(chartArgs).toEqual(
      expect.arrayContaining([
        `--namespaces=${appNs}`,
        '--leader-elect',
        '--lease-namespace=$(POD_NAMESPACE)',
        `--lease-name=${fullname}`,
        '--identity=$(POD_NAME)',
      ]),
    );
  });

  it('started with the chart’s ServiceAccount but the CLI’s own defaults, it refuses to start and names the flags (never runs silent)', async () => {
    const lone = startOperator(opKubeconfig, ['--lease-namespace', releaseNs]);
    expect(await lone.wait()).toBe(1);
    expect(lone.output).toMatch(/refusing to start/);
    expect(lone.output).toMatch(
      new RegExp(
        `may not get leases.coordination.k8s.io "cluster-topology-operator" in namespace "${releaseNs}"`,
      ),
    );
    expect(lone.output).toMatch(/--lease-name/);
    expect(lone.output).toMatch(/may not list clustertopologies.cluster.netzlive.io in all namespaces/);
    expect(lone.output).toMatch(/--namespaces/);
  });

  it('does its whole job as the chart’s ServiceAccount: the examples’ pods are peers under the names env.sh.eex gives them; lease held; events written; never a 403', async () => {
    const st = await waitFor(
      '4 peers in the example topology',
      async () => {
        const x = await topologyStatus(s, appNs, 'web');
        return x?.peerCount === 4 ? x : undefined;
      },
      30_000,
    );
    expect(st.lastResponse?.code).toBe('200');
    expect(st.excluded ?? []).toEqual([]);
    expect(Object.fromEntries(st.peers!.map((p) => [p.pod, p.nodeName]))).toEqual(
      Object.fromEntries(expected),
    );
    expect(st.peers!.find((p) => p.pod === 'myname-web-6d8f9c7b5-x2x7q')).toMatchObject({
      nodeName: 'myname-web-6d8f9c7b5-x2x7q@myname-web.netzlive.svc.cluster.local',
      hostSource: 'Annotation',
    });
    expect(st.peers!.find((p) => p.pod === 'myname-api-0')).toMatchObject({
      nodeName: 'myname-api-0@10.3.0.11',
      hostSource: 'PodIP',
    });

    const lease = JSON.parse(
      await kubectlOk(s, ['-n', releaseNs, 'get', 'lease', fullname, '-o', 'json']),
    ) as {
      spec: { holderIdentity: string };
    };
    expect(lease.spec.holderIdentity).toBe(identity(0));
    expect(await op!.metric('ctopo_leader')).toBe(1);

    const ev = await waitFor(
      'a PeersChanged event',
      async () => (await eventsFor(s, appNs, 'web')).find((e) => e.reason === 'PeersChanged'),
      15_000,
    );
    expect(ev.message).toMatch(/4 peers/);
    expect(await op!.metricSum('ctopo_api_responses_total', { code: '403' })).toBe(0);
    expect(await op!.metricSum('ctopo_api_responses_total', { code: '401' })).toBe(0);
    expect(op!.output).not.toMatch(/forbidden/i);
  });

  it('puts back a status someone else overwrote, as the chart’s ServiceAccount: the object is read afresh, never a 403', async () => {
    const before = await topologyStatus(s, appNs, 'web');
    const held = await patchTopologyStatus(s, appNs, 'web', { peers: [], peerCount: 0 });
    expect(held.peers).toEqual([]);
    const st = await waitFor(
      'the peers put back',
      async () => {
        const x = await topologyStatus(s, appNs, 'web');
        return x?.peerCount === 4 ? x : undefined;
      },
      60_000,
    );
    expect(st.peers).toEqual(before!.peers);
    expect(await op!.metricSum('ctopo_api_responses_total', { code: '403' })).toBe(0);
    expect(op!.output).not.toMatch(/forbidden/i);
  });

  it('kubectl get ctopo prints the printer columns', async () => {
    const out = await kubectlOk(s, ['-n', appNs, 'get', 'ctopo']);
    const [header, row] = out.trim().split('\n');
    expect(header!.split(/\s{2,}/)).toEqual([
      'NAME',
      'PEERS',
      'EXCLUDED',
      'API',
      'READY',
      'REASON',
      'QUORUM',
      'MESH',
      'LAST POLL',
      'AGE',
    ]);
    expect(row!.split(/\s+/).slice(0, 6)).toEqual(['web', '4', '0', '200', 'True', 'Listed']);
  });

  it('a second replica waits; when the leader stops it takes the lease over (get/update by name suffice)', async () => {
    op2 = startOperator(opKubeconfig, operatorArgs(1));
    await waitFor('replica 2 to answer', async () => (await op2!.get('/readyz')).status === 200);
    // The leader renews twice while replica 2 runs: replica 2 has tried and stayed a follower.
    const leaseSpec = async () =>
      (
        JSON.parse(await kubectlOk(s, ['-n', releaseNs, 'get', 'lease', fullname, '-o', 'json'])) as {
          spec: { holderIdentity?: string; renewTime?: string };
        }
      ).spec;
    const renewals = new Set<string>();
    const first = (await leaseSpec()).renewTime;
    await waitFor(
      'the leader to renew twice',
      async () => {
        const l = await leaseSpec();
        if (l.holderIdentity === identity(0) && l.renewTime && l.renewTime !== first)
          renewals.add(l.renewTime);
        return renewals.size >= 2;
      },
      60_000,
    );
    expect(await op2.metric('ctopo_leader')).toBe(0);
    await op!.stop();
    await waitFor(
      'replica 2 to lead',
      async () => {
        const l = JSON.parse(
          await kubectlOk(s, ['-n', releaseNs, 'get', 'lease', fullname, '-o', 'json']),
        ) as {
          spec: { holderIdentity?: string };
        };
        return l.spec.holderIdentity === identity(1);
      },
      30_000,
    );
    await waitFor('replica 2 reconciles', async () => (await op2!.metric('ctopo_leader')) === 1);
    expect(await op2.metricSum('ctopo_api_responses_total', { code: '403' })).toBe(0);
  });

  it('kubectl auth can-i --list: exactly the operator’s calls, per namespace, beyond what every identity has', async () => {
    const nobody = await kubeconfigForToken(
      s,
      `chart-nobody-${id}.kubeconfig`,
      await serviceAccountToken(s, otherNs, 'nobody'),
    );
    const nodes = ['nodes:get', 'nodes:list', 'nodes:watch'];
    expect(minus(await permissions(s, opKubeconfig, appNs), await permissions(s, nobody, appNs))).toEqual(
      [
        'clustertopologies.cluster.netzlive.io:get',
        'clustertopologies.cluster.netzlive.io:list',
        'clustertopologies.cluster.netzlive.io:watch',
        'clustertopologies.cluster.netzlive.io/status:patch',
        'clustertopologymembers.cluster.netzlive.io:list',
        'clustertopologymembers.cluster.netzlive.io:watch',
        'events:create',
        'leases.coordination.k8s.io:create',
        'leases.coordination.k8s.io:patch',
        'pods:list',
        'pods:watch',
        ...nodes,
      ].sort(),
    );
    expect(
      minus(await permissions(s, opKubeconfig, releaseNs), await permissions(s, nobody, releaseNs)),
    ).toEqual(
      [
        'leases.coordination.k8s.io:create',
        `leases.coordination.k8s.io:get[${fullname}]`,
        `leases.coordination.k8s.io:update[${fullname}]`,
        ...nodes,
      ].sort(),
    );
    expect(minus(await permissions(s, opKubeconfig, otherNs), await permissions(s, nobody, otherNs))).toEqual(
      nodes,
    );
  });

  it('is refused what it must not do: secrets, deleting pods, pods/status, pods elsewhere, topology specs, other Leases', async () => {
    const kc = opKubeconfig;
    for (const [verb, what, ns] of [
      ['get', 'secrets', appNs],
      ['list', 'secrets', releaseNs],
      ['delete', 'pods', appNs],
      ['patch', 'pods/status', appNs],
      ['update', 'pods/status', appNs],
      ['list', 'pods', otherNs],
      ['list', 'pods', releaseNs],
      ['update', 'clustertopologies.cluster.netzlive.io', appNs],
      ['create', 'clustertopologies.cluster.netzlive.io', appNs],
      ['list', 'clustertopologies.cluster.netzlive.io', otherNs],
      ['create', 'events', otherNs],
      ['update', 'leases.coordination.k8s.io/someone-else', releaseNs],
      ['patch', 'nodes', ''],
      ['get', 'configmaps', appNs],
    ] as const)
      expect({ verb, what, ns, allowed: await canI(s, kc, [verb, what, ...(ns ? ['-n', ns] : [])]) }).toEqual(
        {
          verb,
          what,
          ns,
          allowed: false,
        },
      );

    // And for real: each request reaches the API server and comes back 403.
    await forbidden(s, kc, ['-n', appNs, 'get', 'secrets']);
    await forbidden(s, kc, ['-n', appNs, 'delete', 'pod', 'myname-api-0', '--wait=false']);
    await forbidden(s, kc, [
      '-n',
      appNs,
      'patch',
      'pod',
      'myname-api-0',
      '--subresource=status',
      '--type=merge',
      '-p',
      '{"status":{"podIP":"10.9.9.9"}}',
    ]);
    await forbidden(s, kc, ['-n', otherNs, 'get', 'pods']);
    await forbidden(s, kc, ['get', 'pods', '--all-namespaces']);
    await forbidden(s, kc, [
      '-n',
      appNs,
      'patch',
      'ctopo',
      'web',
      '--type=merge',
      '-p',
      '{"spec":{"pollingInterval":"1s"}}',
    ]);
    await kubectlOk(s, ['apply', '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name: 'someone-else', namespace: releaseNs },
        spec: { holderIdentity: 'someone' },
      }),
    });
    await forbidden(s, kc, ['-n', releaseNs, 'get', 'lease', 'someone-else']);
    await forbidden(s, kc, [
      '-n',
      releaseNs,
      'patch',
      'lease',
      'someone-else',
      '--type=merge',
      '-p',
      '{"spec":{"holderIdentity":"operator"}}',
    ]);
    // The pod in the ungranted namespace never reached the status.
    expect((await topologyStatus(s, appNs, 'web'))!.peers!.map((p) => p.pod)).not.toContain('stranger');
  });
});

describe('agent RBAC: the example RoleBinding with resourceNames, and the chart’s agent ClusterRole', () => {
  let s: ControlPlaneState;
  const id = randomBytes(3).toString('hex');
  const release = `ctag-${id}`;
  const releaseNs = `ctopo-system-${id}`;
  let appNs: string;
  let otherNs: string;
  let agentKc: string;
  const base = '/apis/cluster.netzlive.io/v1alpha1/namespaces';

  beforeAll(async () => {
    s = await sharedCluster();
    appNs = await freshNamespace(s, 'agent-app');
    otherNs = await freshNamespace(s, 'agent-other');
    await helmOk(['install', release, CHART_DIR, '--namespace', releaseNs, '--create-namespace'], {
      kubeconfig: s.kubeconfig,
    });
    await kubectlOk(s, [
      'wait',
      '--for=condition=Established',
      '--timeout=60s',
      'crd/clustertopologies.cluster.netzlive.io',
    ]);
    for (const [ns, name] of [
      [appNs, 'web'],
      [appNs, 'other'],
      [otherNs, 'web'],
    ] as const)
      await applyTopology(s, ns, name, { selector: 'netzlive/pod-type=cluster-service' });
    // examples/agent-rbac.yaml as it is, moved into the test's namespace.
    const docs = await loadExample('agent-rbac.yaml', appNs);
    await kubectlOk(s, ['apply', '-f', '-'], { input: docs.map((d) => JSON.stringify(d)).join('\n') });
    const token = (await kubectlOk(s, ['-n', appNs, 'create', 'token', 'web-agent', '--duration=1h'])).trim();
    agentKc = await kubeconfigForToken(s, `chart-agent-${id}.kubeconfig`, token);
    await waitFor('the agent RBAC to reach the authorizer', () =>
      canI(s, agentKc, ['get', 'clustertopologies.cluster.netzlive.io/web', '-n', appNs]),
    );
  });
  afterAll(async () => {
    await helm(['uninstall', release, '--namespace', releaseNs], { kubeconfig: s.kubeconfig });
  });

  it('gets its one topology, and lists/watches it with fieldSelector metadata.name', async () => {
    const got = JSON.parse(
      await kubectlOk(s, ['-n', appNs, 'get', 'ctopo', 'web', '-o', 'json'], { kubeconfig: agentKc }),
    ) as {
      metadata: { name: string };
    };
    expect(got.metadata.name).toBe('web');
    const list = JSON.parse(
      await kubectlOk(
        s,
        ['get', '--raw', `${base}/${appNs}/clustertopologies?fieldSelector=metadata.name%3Dweb`],
        {
          kubeconfig: agentKc,
        },
      ),
    ) as { items: { metadata: { name: string } }[] };
    expect(list.items.map((i) => i.metadata.name)).toEqual(['web']);
    // A watch the server ends after 2 s: the initial ADDED event of `web`, and nothing else.
    const watch = await kubectlOk(
      s,
      [
        'get',
        '--raw',
        `${base}/${appNs}/clustertopologies?fieldSelector=metadata.name%3Dweb&watch=true&timeoutSeconds=2`,
      ],
      { kubeconfig: agentKc },
    );
    const events = watch
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; object: { metadata: { name: string } } });
    expect(events.map((e) => [e.type, e.object.metadata.name])).toEqual([['ADDED', 'web']]);
  });

  it('is refused (403, for real) another topology, a list or watch without the field selector, pods, secrets and any write', async () => {
    await forbidden(s, agentKc, ['-n', appNs, 'get', 'ctopo', 'other']);
    await forbidden(s, agentKc, ['-n', otherNs, 'get', 'ctopo', 'web']);
    await forbidden(s, agentKc, ['-n', appNs, 'get', 'ctopo']);
    await forbidden(s, agentKc, [
      'get',
      '--raw',
      `${base}/${appNs}/clustertopologies?watch=true&timeoutSeconds=1`,
    ]);
    await forbidden(s, agentKc, [
      'get',
      '--raw',
      `${base}/${appNs}/clustertopologies?fieldSelector=metadata.name%3Dother`,
    ]);
    await forbidden(s, agentKc, ['-n', appNs, 'get', 'pods']);
    await forbidden(s, agentKc, ['-n', appNs, 'get', 'secrets']);
    await forbidden(s, agentKc, [
      '-n',
      appNs,
      'patch',
      'ctopo',
      'web',
      '--type=merge',
      '-p',
      '{"spec":{"pollingInterval":"1s"}}',
    ]);
    await forbidden(s, agentKc, [
      '-n',
      appNs,
      'patch',
      'ctopo',
      'web',
      '--subresource=status',
      '--type=merge',
      '-p',
      '{"status":{"peerCount":0}}',
    ]);
  });

  it('the chart’s agent ClusterRole, bound in one namespace: reads every topology there, nothing elsewhere, no pods', async () => {
    const fullname = `${release}-cluster-topology`;
    const rules = JSON.parse(
      await kubectlOk(s, ['get', 'clusterrole', `${fullname}-agent`, '-o', 'json']),
    ) as {
      rules: unknown[];
    };
    expect(rules.rules).toEqual([
      {
        apiGroups: ['cluster.netzlive.io'],
        resources: ['clustertopologies'],
        verbs: ['get', 'list', 'watch'],
      },
      // The operator's per-topology liveness Leases (the status protocol's staleness rule).
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'list', 'watch'] },
      // Member reports: RBAC cannot tell whose; the chart's admission policy does (member-reports.test).
      {
        apiGroups: ['cluster.netzlive.io'],
        resources: ['clustertopologymembers'],
        verbs: ['create', 'update', 'patch'],
      },
    ]);
    const token = await serviceAccountToken(s, appNs, 'reader');
    await kubectlOk(s, [
      '-n',
      appNs,
      'create',
      'rolebinding',
      'reader',
      `--clusterrole=${fullname}-agent`,
      `--serviceaccount=${appNs}:reader`,
    ]);
    const kc = await kubeconfigForToken(s, `chart-reader-${id}.kubeconfig`, token);
    await waitFor('the binding to reach the authorizer', () =>
      canI(s, kc, ['list', 'clustertopologies.cluster.netzlive.io', '-n', appNs]),
    );
    const names = await kubectlOk(s, ['-n', appNs, 'get', 'ctopo', '-o', 'name'], { kubeconfig: kc });
    expect(names.trim().split('\n').sort()).toEqual([
      'clustertopology.cluster.netzlive.io/other',
      'clustertopology.cluster.netzlive.io/web',
    ]);
    await forbidden(s, kc, ['-n', otherNs, 'get', 'ctopo']);
    await forbidden(s, kc, ['-n', appNs, 'get', 'pods']);
    await forbidden(s, kc, ['-n', appNs, 'delete', 'ctopo', 'web', '--wait=false']);
  });
});
