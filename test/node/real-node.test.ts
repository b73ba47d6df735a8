import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { readState, type ControlPlaneState } from '../../dev/cluster/control-plane.js';
import { kubectl, kubectlOk } from '../support/cluster.js';
import { CHART_DIR, EXAMPLES_DIR, helm } from '../support/helm.js';
import { waitFor } from '../support/wait.js';
import {
  beamCommand,
  erlCall,
  libraryStart,
  meshed,
  meshView as meshViewOf,
  nodeName,
  ready,
  type Pod,
} from '../support/beam-mesh.js';

/**
 * The chart and BEAM applications on a real node: real pods from the images built here
 * (tools/node/images.sh), a real kubelet, containerd, runc and CNI bridge. Run only with
 * CTOPO_REAL_NODE=1 (jest project `node`; docs/real-node.md).
 */

let s: ControlPlaneState;
const release = 'ct';
const opNs = 'ctopo-system';
const appNs = 'app';
const fullname = `${release}-cluster-topology`;

const json = async <T>(args: string[]) => JSON.parse(await kubectlOk(s, [...args, '-o', 'json'])) as T;
const pods = async (ns: string, selector: string) =>
  (await json<{ items: Pod[] }>(['-n', ns, 'get', 'pods', '-l', selector])).items;
const leaseHolder = async () =>
  (await json<{ spec: { holderIdentity?: string } }>(['-n', opNs, 'get', 'lease', fullname])).spec
    .holderIdentity;

async function metric(ip: string, name: string): Promise<number | undefined> {
  const body = await (await fetch(`http://${ip}:8080/metrics`, { signal: AbortSignal.timeout(3000) })).text();
  const line = body.split('\n').find((l) => l.startsWith(`${name} `));
  return line ? Number(line.split(' ')[1]) : undefined;
}

/** The sum of a metric's samples over all its labels. */
async function metricSum(ip: string, name: string): Promise<number> {
  const body = await (await fetch(`http://${ip}:8080/metrics`, { signal: AbortSignal.timeout(3000) })).text();
  return body
    .split('\n')
    .filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `))
    .reduce((sum, l) => sum + Number(l.split(' ').pop()), 0);
}

beforeAll(async () => {
  const dir = process.env.CTOPO_NODE_STATE_DIR;
  if (!dir)
    throw new Error('CTOPO_NODE_STATE_DIR is not set: run with CTOPO_REAL_NODE=1 (jest project node)');
  s = (await readState(dir))!;
});

beforeAll(async () => {
  await kubectlOk(s, ['create', 'namespace', appNs]);
  const r = await helm(
    [
      'install',
      release,
      CHART_DIR,
      '--namespace',
      opNs,
      '--create-namespace',
      '--set',
      'image.repository=localhost/cluster-topology',
      '--set',
      'image.tag=dev',
      '--set',
      'image.pullPolicy=Never',
      '--set',
      `scope.namespaces={${appNs}}`,
      '--wait',
      '--timeout',
      '5m',
    ],
    { kubeconfig: s.kubeconfig },
  );
  if (r.code !== 0) throw new Error(`helm install failed: ${r.stderr}`);
}, 400_000);

afterAll(async () => {
  if (process.env.CTOPO_KEEP_TEST_STATE) return;
  // Nothing of this run stays in a dev cluster that outlives it (CTOPO_NODE_STATE_DIR given).
  await kubectl(s, ['-n', appNs, 'delete', 'pods', '--all', '--grace-period=0', '--force']);
  await kubectl(s, ['delete', 'namespace', appNs, '--timeout=120s']);
  await helm(['uninstall', release, '--namespace', opNs, '--wait'], { kubeconfig: s.kubeconfig });
  await kubectl(s, ['delete', 'namespace', opNs, '--timeout=120s']);
}, 300_000);

describe('the chart on a real node', () => {
  it('two operator pods run the locally built image and are Ready (probes answered); exactly one leads', async () => {
    const ops = await waitFor(
      'two Ready operator pods',
      async () => {
        const p = (await pods(opNs, 'app.kubernetes.io/name=cluster-topology')).filter(
          (x) => !x.metadata.deletionTimestamp,
        );
        return p.length === 2 && p.every(ready) ? p : undefined;
      },
      180_000,
    );
    const holder = await waitFor('a Lease holder', leaseHolder, 60_000);
    expect(ops.map((p) => p.metadata.name)).toContain(holder);
    const leaders = await Promise.all(ops.map((p) => metric(p.status.podIP!, 'ctopo_leader')));
    expect(leaders.sort()).toEqual([0, 1]);
  });
});

describe('the image as built', () => {
  it('runs as uid 65532 with a read-only root file system; ctopo --help and erl_call work in it', async () => {
    await kubectlOk(s, ['-n', appNs, 'apply', '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'image-check', namespace: appNs },
        spec: {
          restartPolicy: 'Never',
          containers: [
            {
              name: 'check',
              image: 'localhost/cluster-topology:dev',
              imagePullPolicy: 'Never',
              command: [
                'sh',
                '-c',
                'id -u; touch /x 2>/dev/null && echo rootfs-writable || echo rootfs-read-only; ' +
                  'node /app/bin/ctopo.js --help | head -n 1; command -v erl_call',
              ],
              securityContext: { readOnlyRootFilesystem: true, runAsNonRoot: true },
            },
          ],
        },
      }),
    });
    await waitFor(
      'the check pod to finish',
      async () => {
        const p = await json<Pod>(['-n', appNs, 'get', 'pod', 'image-check']);
        return p.status.phase === 'Succeeded' || p.status.phase === 'Failed' ? p : undefined;
      },
      120_000,
    );
    const log = await kubectlOk(s, ['-n', appNs, 'logs', 'image-check']);
    expect(log.split('\n')[0]).toBe('65532');
    expect(log).toMatch(/rootfs-read-only/);
    expect(log).toMatch(/ctopo/i);
    expect(log).toMatch(/erl_call/);
  });
});

describe('the BEAM image as built', () => {
  it('runs OTP 27 (Debian trixie) with the library compiled by it in /opt/cluster_topology/ebin', async () => {
    await kubectlOk(s, ['-n', appNs, 'apply', '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'beam-image-check', namespace: appNs },
        spec: {
          restartPolicy: 'Never',
          containers: [
            {
              name: 'check',
              image: 'localhost/ctopo-beam:dev',
              imagePullPolicy: 'Never',
              command: [
                'erl',
                '-noshell',
                '-pa',
                '/opt/cluster_topology/ebin',
                '-eval',
                'ok = application:load(cluster_topology), {ok, _} = application:ensure_all_started(cluster_topology), ' +
                  '{ok, V} = file:read_file(filename:join([code:root_dir(), "releases", erlang:system_info(otp_release), "OTP_VERSION"])), ' +
                  'io:format("otp ~s~nlibrary ~s~n", [string:trim(V), code:which(cluster_topology)]), halt().',
              ],
              securityContext: { runAsUser: 65532, runAsGroup: 65532, allowPrivilegeEscalation: false },
              env: [{ name: 'HOME', value: '/tmp' }],
            },
          ],
        },
      }),
    });
    await waitFor(
      'the BEAM check pod to finish',
      async () => {
        const p = await json<Pod>(['-n', appNs, 'get', 'pod', 'beam-image-check']);
        return p.status.phase === 'Succeeded' || p.status.phase === 'Failed' ? p : undefined;
      },
      120_000,
    );
    const log = await kubectlOk(s, ['-n', appNs, 'logs', 'beam-image-check']);
    expect(log).toMatch(/^otp 27\./m);
    expect(log).toContain('library /opt/cluster_topology/ebin/cluster_topology.beam');
  });
});

const COOKIE = 'real-node-cookie';
/** One of the three pods of the StatefulSet that joins through the OTP library. */
const viaLibrary = (p: Pod) => p.metadata.labels?.['app.kubernetes.io/name'] === 'myname-api';
/** Every pod of the topology: those three and the one that joins through the sidecar agent. */
const members = 'netzlive/pod-type=cluster-service';

/**
 * The multi-replica example with the images built here and a real BEAM in the app container: its
 * StatefulSet of three joins through the OTP library (the agent container removed, as a user of the
 * library does), and one more pod — the example's StatefulSet as it is, renamed — through the
 * sidecar agent. All four share the example's ClusterTopology, RBAC and cookie.
 */
async function beamWorkload(): Promise<string> {
  const docs = parseAllDocuments(await readFile(join(EXAMPLES_DIR, 'multi-replica.yaml'), 'utf8')).map(
    (d) => d.toJS() as Record<string, any>, // eslint-disable-line @typescript-eslint/no-explicit-any
  );
  const rbac = parseAllDocuments(await readFile(join(EXAMPLES_DIR, 'agent-rbac.yaml'), 'utf8')).map(
    (d) => d.toJS() as Record<string, any>, // eslint-disable-line @typescript-eslint/no-explicit-any
  );
  const out = [...rbac, ...docs].filter(Boolean);
  for (const d of out) d.metadata.namespace = appNs;
  for (const d of out) if (d.kind === 'RoleBinding') for (const sub of d.subjects) sub.namespace = appNs;
  const topo = out.find((d) => d.kind === 'ClusterTopology')!;
  topo.spec.pollingInterval = '2s';
  const sts = out.find((d) => d.kind === 'StatefulSet')!;
  const sidecarSts = structuredClone(sts);
  sidecarSts.metadata.name = sidecarSts.spec.serviceName = 'myname-sidecar';
  sidecarSts.spec.replicas = 1;
  sidecarSts.spec.selector.matchLabels['app.kubernetes.io/name'] = 'myname-sidecar';
  sidecarSts.spec.template.metadata.labels['app.kubernetes.io/name'] = 'myname-sidecar';
  out.push(sidecarSts);
  for (const set of [sts, sidecarSts]) {
    const pod = set.spec.template.spec;
    pod.terminationGracePeriodSeconds = 20;
    const [app, agent] = pod.containers;
    Object.assign(app, {
      image: 'localhost/ctopo-beam:dev',
      imagePullPolicy: 'Never',
      command:
        set === sts ? beamCommand('-pa', '/opt/cluster_topology/ebin', '-eval', libraryStart) : beamCommand(),
      securityContext: { runAsUser: 65532, runAsGroup: 65532, allowPrivilegeEscalation: false },
    });
    app.env.push(
      { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
      { name: 'HOME', value: '/tmp' },
    );
    if (set === sts) {
      pod.containers = [app];
      pod.volumes = pod.volumes.filter((v: { name: string }) => v.name !== 'agent-tmp');
    } else Object.assign(agent, { image: 'localhost/cluster-topology:dev', imagePullPolicy: 'Never' });
  }
  out.push({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'erlang-cookie', namespace: appNs },
    stringData: { cookie: COOKIE },
  });
  return out.map((d) => JSON.stringify(d)).join('\n');
}

interface TopologyStatus {
  peers?: { pod: string; uid?: string; nodeName: string; ready?: boolean; terminating?: boolean }[];
  lastResponse?: { code?: string; reason?: string; since?: string };
  lastPollTime?: string;
  conditions?: { type: string; status: string }[];
}
const topologyStatus = async () =>
  (await json<{ status?: TopologyStatus }>(['-n', appNs, 'get', 'clustertopology', 'web'])).status;
/** What the status says, as the operator decides whether to write it: all but lastPollTime. */
const content = (st: TopologyStatus | undefined) => JSON.stringify({ ...st, lastPollTime: undefined });

/** The status once it has not changed for 6 s (three polling intervals). */
async function settledStatus(): Promise<TopologyStatus | undefined> {
  let last = '';
  let since = Date.now();
  return waitFor(
    'the status to settle (unchanged for 6 s, and the members’ reports meshed)',
    async () => {
      const st = await topologyStatus();
      if (content(st) !== last) [last, since] = [content(st), Date.now()];
      // The mesh is written at most once per 15 s: until it says Meshed, a quiet 6 s proves nothing.
      const meshed = st?.conditions?.some((c) => c.type === 'Meshed' && c.status === 'True');
      return meshed && Date.now() - since >= 6_000 ? st : undefined;
    },
    120_000,
    1000,
  );
}

/** Each pod's view of the mesh: its node name → the node names its BEAM is connected to. */
const meshView = (list: Pod[]) => meshViewOf(list, COOKIE);

/** What the OTP library in a pod reports (cluster_topology:state/0), read through erl_call. */
async function clientReport(p: Pod): Promise<string> {
  const expr =
    '#{self_check := #{ok := Self}, trouble := Trouble, liveness := #{value := Live}, peers := Peers} = ' +
    'cluster_topology:state(), {Self, Trouble, Live, length([x || #{connected := true} <- Peers])}.\n';
  return (await erlCall(nodeName(p), COOKIE, expr, 'eval')).replace(/\s+/g, '');
}

describe('BEAM pods on a real node: three through the OTP library, one through the sidecar agent', () => {
  const isLive = (p: Pod) => !p.metadata.deletionTimestamp && ready(p) && !!p.status.podIP;
  const live = async () => (await pods(appNs, members)).filter(isLive);

  beforeAll(async () => {
    await kubectlOk(s, ['apply', '-f', '-'], { input: await beamWorkload() });
  }, 60_000);

  it('the four pods form one mesh (every BEAM is connected to the three others)', async () => {
    await waitFor(
      'four meshed pods',
      async () => {
        const l = await live();
        return l.length === 4 && meshed(l, await meshView(l)) ? true : undefined;
      },
      240_000,
      1000,
    );
  });

  it('the OTP library in each pod read its topology with the pod’s own token and CA: self check passed, no trouble, the operator live, three peers connected', async () => {
    const lib = (await live()).filter(viaLibrary);
    expect(lib).toHaveLength(3);
    const reports = await Promise.all(lib.map(clientReport));
    expect(reports).toEqual(lib.map(() => '{ok,{true,undefined,live,3}}'));
  });

  it('deleting the leader’s pod: another pod takes the Lease over; the status does not flap meanwhile', async () => {
    const before = (await leaseHolder())!;
    const settled = await settledStatus();
    expect(settled?.lastResponse?.code).toBe('200');
    expect(settled?.peers).toHaveLength(4);
    const samples: TopologyStatus[] = [];
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        samples.push((await topologyStatus())!);
        await new Promise((r) => setTimeout(r, 250));
      }
    })();
    try {
      await kubectlOk(s, ['-n', opNs, 'delete', 'pod', before, '--wait=false']);
      // The Lease is released on SIGTERM: the surviving pod or the Deployment's replacement,
      // whichever asks first, takes it.
      const after = await waitFor(
        'another holder',
        async () => {
          const h = await leaseHolder();
          return h && h !== before ? h : undefined;
        },
        60_000,
      );
      // The Deployment's replacement answers its probes before it is asked for metrics.
      const ops = await waitFor(
        'two Ready operator pods again',
        async () => {
          const p = (await pods(opNs, 'app.kubernetes.io/name=cluster-topology')).filter(
            (x) => !x.metadata.deletionTimestamp,
          );
          return p.length === 2 && p.every(ready) ? p : undefined;
        },
        90_000,
        500,
      );
      expect(ops.map((p) => p.metadata.name)).toContain(after);
      // The window closes after the new leader's third reconcile (pollingInterval 2s).
      const ip = ops.find((p) => p.metadata.name === after)!.status.podIP!;
      await waitFor(
        'the new leader’s third poll',
        async () => (await metricSum(ip, 'ctopo_reconcile_total')) >= 3,
        60_000,
        500,
      );
      const leaders = await Promise.all(ops.map((p) => metric(p.status.podIP!, 'ctopo_leader')));
      expect(leaders.filter((x) => x === 1)).toHaveLength(1);
    } finally {
      sampling = false;
      await sampler;
    }
    // Each differing sample says where it fell in the window and which fields differ, and how.
    const flaps = samples.flatMap((x, i) => {
      if (content(x) === content(settled)) return [];
      const keys = [...new Set([...Object.keys(x), ...Object.keys(settled ?? {})])].filter(
        (k) =>
          k !== 'lastPollTime' &&
          JSON.stringify(x[k as keyof TopologyStatus]) !==
            JSON.stringify(settled?.[k as keyof TopologyStatus]),
      );
      return [
        `sample ${i + 1} of ${samples.length}: ${keys.map((k) => `${k}: ${JSON.stringify(settled?.[k as keyof TopologyStatus])} -> ${JSON.stringify(x[k as keyof TopologyStatus])}`).join('; ')}`,
      ];
    });
    expect(flaps).toEqual([]);
  }, 150_000);

  it('kubectl rollout restart: sampled each second, the pods Ready before and not terminating stay meshed; the new pods join', async () => {
    const old = new Set((await live()).map(nodeName)); // the sidecar pod's included: it stays
    await kubectlOk(s, ['-n', appNs, 'rollout', 'restart', 'statefulset/myname-api']);
    const broken: string[] = [];
    const deadline = Date.now() + 300_000;
    let done = false;
    while (!done && Date.now() < deadline) {
      // One pod list a second; the stayers are asked first, so a new pod slow to answer does
      // not delay their sample.
      const l = await live();
      const stayers = l.filter((p) => old.has(nodeName(p)));
      const view = await meshView(stayers);
      for (const p of stayers)
        for (const q of stayers) {
          const seen = view.get(nodeName(p));
          if (p !== q && seen && !seen.includes(nodeName(q))) broken.push(`${nodeName(p)} ✗ ${nodeName(q)}`);
        }
      const fresh = l.filter(viaLibrary);
      if (fresh.length === 3 && fresh.every((p) => !old.has(nodeName(p))))
        done = l.length === 4 && meshed(l, await meshView(l));
      await new Promise((r) => setTimeout(r, 1000));
    }
    expect(broken).toEqual([]);
    expect(done).toBe(true);
  }, 360_000);

  it('kubectl delete pod with a grace period: terminating in the status during it, then gone and disconnected', async () => {
    const before = await live();
    const victim = before.find(viaLibrary);
    const rest = before.filter((p) => p !== victim);
    await kubectlOk(s, [
      '-n',
      appNs,
      'delete',
      'pod',
      victim!.metadata.name,
      '--grace-period=20',
      '--wait=false',
    ]);
    // The StatefulSet brings a pod of the same name back: the victim is known by its uid.
    const peerOf = async () => (await topologyStatus())?.peers?.find((x) => x.uid === victim!.metadata.uid);
    await waitFor(
      'the victim flagged terminating',
      async () => (await peerOf())?.terminating === true,
      30_000,
    );
    await waitFor('the victim gone from the status', async () => (await peerOf()) === undefined, 60_000, 500);
    await waitFor(
      'the others disconnected from it',
      async () => {
        const view = await meshView(rest);
        return rest.every((p) => !view.get(nodeName(p))?.includes(nodeName(victim!))) ? true : undefined;
      },
      90_000,
      1000,
    );
  }, 150_000);
});

describe('the operator in-cluster loses its permission to list pods', () => {
  it('the topology shows the 403 row: lastResponse 403, the peers kept', async () => {
    // The pod deleted just before has been replaced: four peers again, all ready.
    const kept = await waitFor(
      'four ready peers',
      async () => {
        const p = (await topologyStatus())?.peers;
        if (p?.length === 4 && p.every((x) => x.ready && !x.terminating)) return p;
        const all = await pods(appNs, members);
        throw new Error(
          `peers ${JSON.stringify(p?.map((x) => [x.nodeName, x.ready, x.terminating]))}; pods ${JSON.stringify(all.map((x) => [x.metadata.name, x.status.phase, ready(x), x.metadata.deletionTimestamp ?? '']))}`,
        );
      },
      120_000,
      1000,
    );
    const role = await json<{ rules: { resources?: string[]; verbs: string[] }[] }>([
      '-n',
      appNs,
      'get',
      'role',
      `${fullname}-operator`,
    ]);
    role.rules = role.rules.filter((r) => !r.resources?.includes('pods'));
    await kubectlOk(s, ['apply', '-f', '-'], { input: JSON.stringify(role) });
    const st = await waitFor(
      'lastResponse 403',
      async () => {
        const t = await topologyStatus();
        return t?.lastResponse?.code === '403' ? t : undefined;
      },
      60_000,
      1000,
    );
    // onForbidden: Retain (the example's): the last list stays, said to be 403 Forbidden.
    expect(st.lastResponse?.reason).toBe('Forbidden');
    expect(st.peers?.map((x) => x.uid)).toEqual(kept.map((x) => x.uid));
    expect(st.peers).toHaveLength(4);
  }, 240_000);
});
