import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { EXAMPLES_DIR } from './helm.js';

/**
 * BEAM pods on the real node and what their VMs say, for the real node's tests: the examples'
 * multi-replica StatefulSet turned into pods that join through the OTP library, and each VM's
 * nodes() read with erl_call from this machine (the host reaches pod IPs through the node's link).
 */

export interface Pod {
  metadata: { name: string; uid: string; deletionTimestamp?: string; labels?: Record<string, string> };
  status: {
    phase?: string;
    podIP?: string;
    conditions?: { type: string; status: string }[];
    containerStatuses?: { name: string; ready: boolean; restartCount: number }[];
  };
}

export const ready = (p: Pod) =>
  p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;
/** The node name the examples give a pod: <pod name>@<pod IP>. */
export const nodeName = (p: Pod) => `${p.metadata.name}@${p.status.podIP}`;

/** A bare BEAM as the app container: the node name of rel/multi-replica.env.sh.eex, the cookie. */
export const beamCommand = (...extra: string[]) => [
  'sh',
  '-c',
  'exec erl -name "$POD_NAME@$POD_IP" -setcookie "$RELEASE_COOKIE" -noshell ' +
    '-kernel inet_dist_listen_min 9100 inet_dist_listen_max 9100 "$@"',
  'erl',
  ...extra,
];

/**
 * The OTP library as an application starts it: a child in a supervision tree (here the kernel's,
 * as this BEAM has no application of its own). In a pod it takes the namespace, the API address,
 * the token and the CA from the pod; the image holds the library in /opt/cluster_topology/ebin.
 */
export const libraryStart =
  '{ok, _} = application:ensure_all_started(cluster_topology), ' +
  '{ok, _} = supervisor:start_child(kernel_sup, cluster_topology:child_spec(#{name => <<"web">>})).';

/**
 * examples/multi-replica.yaml and examples/agent-rbac.yaml in `namespace`: the topology (polled
 * every 2 s), its RBAC, the cookie, and the StatefulSet's three pods running a BEAM with the OTP
 * library (the BEAM image built for the node's tests; the agent container removed, as a user of
 * the library does). As newline-separated JSON documents for kubectl apply.
 */
export async function libraryWorkload(namespace: string, cookie: string): Promise<string> {
  const load = async (f: string) =>
    parseAllDocuments(await readFile(join(EXAMPLES_DIR, f), 'utf8')).map(
      (d) => d.toJS() as Record<string, any>, // eslint-disable-line @typescript-eslint/no-explicit-any
    );
  const out = [...(await load('agent-rbac.yaml')), ...(await load('multi-replica.yaml'))].filter(Boolean);
  for (const d of out) d.metadata.namespace = namespace;
  for (const d of out) if (d.kind === 'RoleBinding') for (const sub of d.subjects) sub.namespace = namespace;
  out.find((d) => d.kind === 'ClusterTopology')!.spec.pollingInterval = '2s';
  const pod = out.find((d) => d.kind === 'StatefulSet')!.spec.template.spec;
  pod.terminationGracePeriodSeconds = 20;
  const [app] = pod.containers;
  Object.assign(app, {
    image: 'localhost/ctopo-beam:dev',
    imagePullPolicy: 'Never',
    command: beamCommand('-pa', '/opt/cluster_topology/ebin', '-eval', libraryStart),
    securityContext: { runAsUser: 65532, runAsGroup: 65532, allowPrivilegeEscalation: false },
  });
  app.env.push(
    { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
    { name: 'HOME', value: '/tmp' },
  );
  pod.containers = [app];
  pod.volumes = pod.volumes.filter((v: { name: string }) => v.name !== 'agent-tmp');
  out.push({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'erlang-cookie', namespace },
    stringData: { cookie },
  });
  return out.map((d) => JSON.stringify(d)).join('\n');
}

/**
 * erl_call from this machine to a pod's BEAM node: `apply` runs `Module Function [Args]`, `eval`
 * evaluates Erlang expressions.
 */
export function erlCall(
  node: string,
  cookie: string,
  call: string,
  how: 'apply' | 'eval' = 'apply',
): Promise<string> {
  return new Promise((ok, fail) => {
    const child = execFile(
      'erl_call',
      [
        '-name',
        `probe${process.pid}@10.87.0.1`,
        '-c',
        cookie,
        '-n',
        node,
        ...(how === 'apply' ? ['-a', call] : ['-e']),
      ],
      { timeout: 10_000 },
      (err, stdout) => (err ? fail(err) : ok(stdout.trim())),
    );
    if (how === 'eval') child.stdin!.end(call);
    else child.stdin!.end();
  });
}

/** Each pod's view of the mesh: its node name → the node names its BEAM is connected to (undefined: no answer). */
export async function meshView(list: Pod[], cookie: string): Promise<Map<string, string[] | undefined>> {
  const view = new Map<string, string[] | undefined>();
  await Promise.all(
    list.map(async (p) => {
      try {
        const out = await erlCall(nodeName(p), cookie, 'erlang nodes');
        view.set(
          nodeName(p),
          [...out.matchAll(/'([^']+)'/g)].map((m) => m[1]!),
        );
      } catch {
        view.set(nodeName(p), undefined);
      }
    }),
  );
  return view;
}

/** Whether every pod of `list` is connected to every other one. */
export const meshed = (list: Pod[], view: Map<string, string[] | undefined>) =>
  list.every((p) => list.every((q) => p === q || view.get(nodeName(p))?.includes(nodeName(q))));
