import type { ControlPlaneState } from '../../dev/cluster/control-plane.js';
import type { ClusterTopologyStatus } from '../../operator/api/types.generated.js';
import { kubectl, kubectlOk } from './cluster.js';

/** Pods, topologies and RBAC as plain objects on the real API server (no kubelet: tests set pod status). */

export interface PodOptions {
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  env?: { name: string; value: string }[];
  nodeName?: string;
  /** Extra containers (names), beside the `app` container. */
  extraContainers?: string[];
  /** The pod's service account (tokens bound to the pod are issued for it only). */
  serviceAccountName?: string;
}

export async function createPod(
  s: ControlPlaneState,
  ns: string,
  name: string,
  o: PodOptions = {},
): Promise<void> {
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: ns,
      labels: o.labels ?? { 'netzlive/pod-type': 'cluster-service' },
      ...(o.annotations ? { annotations: o.annotations } : {}),
    },
    spec: {
      ...(o.nodeName ? { nodeName: o.nodeName } : {}),
      ...(o.serviceAccountName ? { serviceAccountName: o.serviceAccountName } : {}),
      containers: [
        { name: 'app', image: 'example.invalid/app', ...(o.env ? { env: o.env } : {}) },
        ...(o.extraContainers ?? []).map((name) => ({ name, image: 'example.invalid/sidecar' })),
      ],
    },
  };
  await kubectlOk(s, ['create', '-f', '-'], { input: JSON.stringify(pod) });
}

/** What a kubelet would report: phase, IP, readiness. */
export async function setPodStatus(
  s: ControlPlaneState,
  ns: string,
  name: string,
  st: { ip?: string; phase?: string; ready?: boolean },
): Promise<void> {
  const status: Record<string, unknown> = { phase: st.phase ?? 'Running' };
  if (st.ip) Object.assign(status, { podIP: st.ip, podIPs: [{ ip: st.ip }] });
  if (st.ready !== undefined) status.conditions = [{ type: 'Ready', status: st.ready ? 'True' : 'False' }];
  await kubectlOk(s, [
    '-n',
    ns,
    'patch',
    'pod',
    name,
    '--subresource=status',
    '--type=merge',
    '-p',
    JSON.stringify({ status }),
  ]);
}

/** `n` running, ready pods `${prefix}-0…` with IPs `${subnet}.1…` (the default selector's label). */
export async function seedPods(
  s: ControlPlaneState,
  ns: string,
  n: number,
  o: { prefix?: string; subnet: string },
): Promise<void> {
  const prefix = o.prefix ?? 'web';
  for (let i = 0; i < n; i++) {
    await createPod(s, ns, `${prefix}-${i}`);
    await setPodStatus(s, ns, `${prefix}-${i}`, { ip: `${o.subnet}.${i + 1}`, ready: true });
  }
}

export async function deletePod(s: ControlPlaneState, ns: string, name: string): Promise<void> {
  await kubectlOk(s, ['-n', ns, 'delete', 'pod', name, '--grace-period=0', '--force', '--wait=false']);
}

export async function applyTopology(
  s: ControlPlaneState,
  ns: string,
  name: string,
  spec: Record<string, unknown>,
): Promise<void> {
  const obj = {
    apiVersion: 'cluster.netzlive.io/v1alpha1',
    kind: 'ClusterTopology',
    metadata: { name, namespace: ns },
    spec,
  };
  await kubectlOk(s, ['apply', '-f', '-'], { input: JSON.stringify(obj) });
}

export async function topologyStatus(
  s: ControlPlaneState,
  ns: string,
  name: string,
): Promise<ClusterTopologyStatus | undefined> {
  const r = await kubectl(s, ['-n', ns, 'get', 'ctopo', name, '-o', 'json']);
  if (r.code !== 0) return undefined;
  return (JSON.parse(r.stdout) as { status?: ClusterTopologyStatus }).status;
}

/**
 * Writes `status` (a merge patch) through the status subresource, as a person or another
 * controller would; returns what the object then holds.
 */
export async function patchTopologyStatus(
  s: ControlPlaneState,
  ns: string,
  name: string,
  status: Record<string, unknown>,
): Promise<ClusterTopologyStatus> {
  const out = await kubectlOk(s, [
    '-n',
    ns,
    'patch',
    'ctopo',
    name,
    '--subresource=status',
    '--type=merge',
    '-o',
    'json',
    '-p',
    JSON.stringify({ status }),
  ]);
  return (JSON.parse(out) as { status: ClusterTopologyStatus }).status;
}

/**
 * The operator's liveness Lease of `topology` made stale without waiting out its limit: its last
 * renewal dated an hour back (stop the operator first, or it renews it).
 */
export async function makeLeaseStale(s: ControlPlaneState, ns: string, topology: string): Promise<void> {
  const hourAgo = new Date(Date.now() - 3_600_000).toISOString().replace('Z', '000Z');
  await kubectlOk(s, [
    '-n',
    ns,
    'patch',
    'lease',
    `clustertopology.${topology}`,
    '--type=merge',
    '-p',
    JSON.stringify({ spec: { renewTime: hourAgo } }),
  ]);
}

export const condition = (st: ClusterTopologyStatus | undefined, type: string) =>
  st?.conditions?.find((c) => c.type === type);

export async function createNode(
  s: ControlPlaneState,
  name: string,
  labels: Record<string, string>,
): Promise<void> {
  await kubectlOk(s, ['apply', '-f', '-'], {
    input: JSON.stringify({ apiVersion: 'v1', kind: 'Node', metadata: { name, labels } }),
  });
}

export async function eventsFor(
  s: ControlPlaneState,
  ns: string,
  name: string,
): Promise<{ type: string; reason: string; message: string }[]> {
  const out = await kubectlOk(s, [
    '-n',
    ns,
    'get',
    'events',
    '--field-selector',
    `involvedObject.name=${name}`,
    '-o',
    'json',
  ]);
  return (JSON.parse(out) as { items: { type: string; reason: string; message: string }[] }).items;
}

/**
 * The operator's permissions, as the Helm chart grants them: ClusterTopologies and their
 * status, Nodes, Events, its Lease cluster-wide; pods through a RoleBinding per namespace so a
 * test can take them away (a real 403).
 */
export async function grantOperatorRbac(
  s: ControlPlaneState,
  subject: RbacSubject,
  podNamespaces: string[],
  id: string,
): Promise<void> {
  const subj = subjectRef(subject);
  const docs: unknown[] = [
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: `${id}-operator` },
      rules: [
        {
          apiGroups: ['cluster.netzlive.io'],
          resources: ['clustertopologies'],
          verbs: ['get', 'list', 'watch'],
        },
        {
          apiGroups: ['cluster.netzlive.io'],
          resources: ['clustertopologies/status'],
          verbs: ['get', 'patch', 'update'],
        },
        {
          apiGroups: ['cluster.netzlive.io'],
          resources: ['clustertopologymembers'],
          verbs: ['get', 'list', 'watch'],
        },
        { apiGroups: [''], resources: ['nodes'], verbs: ['get', 'list', 'watch'] },
        { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch'] },
        {
          apiGroups: ['coordination.k8s.io'],
          resources: ['leases'],
          verbs: ['get', 'create', 'update', 'patch'],
        },
      ],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: `${id}-operator` },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: `${id}-operator` },
      subjects: [subj],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: `${id}-pod-reader` },
      rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['list', 'watch'] }],
    },
  ];
  for (const ns of podNamespaces) docs.push(podBinding(ns, id, subj));
  await applyObjects(s, docs);
}

export interface RbacSubject {
  kind: 'User' | 'ServiceAccount';
  name: string;
  namespace?: string;
}

function subjectRef(subject: RbacSubject) {
  return subject.kind === 'User'
    ? { kind: 'User', name: subject.name, apiGroup: 'rbac.authorization.k8s.io' }
    : { kind: 'ServiceAccount', name: subject.name, namespace: subject.namespace };
}

/**
 * A reader's least privilege: a Role `name` that may read the named ClusterTopologies (with
 * `leases`, their liveness Leases too) and nothing else, and its RoleBinding to `subject`.
 */
export function readerRbac(o: {
  namespace: string;
  name: string;
  topologies: string[];
  verbs: string[];
  leases?: boolean;
  subject: RbacSubject;
}): [role: object, binding: object] {
  const rules = [
    {
      apiGroups: ['cluster.netzlive.io'],
      resources: ['clustertopologies'],
      resourceNames: o.topologies,
      verbs: o.verbs,
    },
  ];
  if (o.leases)
    rules.push({
      apiGroups: ['coordination.k8s.io'],
      resources: ['leases'],
      resourceNames: o.topologies.map((t) => `clustertopology.${t}`),
      verbs: o.verbs,
    });
  const metadata = { name: o.name, namespace: o.namespace };
  return [
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata, rules },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata,
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: o.name },
      subjects: [subjectRef(o.subject)],
    },
  ];
}

/**
 * What a reporting reader needs besides `readerRbac` (docs/status-protocol.md §8.5, as the chart's
 * reader ClusterRole grants it): a Role `name` that may create, update and patch member reports,
 * and its RoleBinding to `subject`.
 */
export function memberReportRbac(o: {
  namespace: string;
  name: string;
  subject: RbacSubject;
}): [role: object, binding: object] {
  const metadata = { name: o.name, namespace: o.namespace };
  return [
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata,
      rules: [
        {
          apiGroups: ['cluster.netzlive.io'],
          resources: ['clustertopologymembers'],
          verbs: ['create', 'update', 'patch'],
        },
      ],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata,
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: o.name },
      subjects: [subjectRef(o.subject)],
    },
  ];
}

/** `kubectl apply` of objects given as plain values. */
export async function applyObjects(s: ControlPlaneState, docs: unknown[]): Promise<void> {
  await kubectlOk(s, ['apply', '-f', '-'], { input: docs.map((d) => JSON.stringify(d)).join('\n') });
}

function podBinding(ns: string, id: string, subj: unknown) {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name: `${id}-pod-reader`, namespace: ns },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: `${id}-pod-reader` },
    subjects: [subj],
  };
}

export async function revokePods(s: ControlPlaneState, ns: string, id: string): Promise<void> {
  await kubectlOk(s, ['-n', ns, 'delete', 'rolebinding', `${id}-pod-reader`]);
}

export async function restorePods(
  s: ControlPlaneState,
  ns: string,
  id: string,
  subject: RbacSubject,
): Promise<void> {
  await applyObjects(s, [podBinding(ns, id, subjectRef(subject))]);
}

/** Asks the API server whether `kubeconfig`'s identity may do something (RBAC reaches the authorizer through informers). */
export async function canI(s: ControlPlaneState, kubeconfig: string, args: string[]): Promise<boolean> {
  return canIAnswer(args, await kubectl(s, ['auth', 'can-i', ...args], { kubeconfig }));
}

/**
 * `kubectl auth can-i` answers yes (exit 0) or no (exit 1); anything else — an unreachable
 * server, a rejected token, a typo in the resource — is not an answer, so it throws rather
 * than read as "no" (a "permission gone" check must not pass because kubectl failed).
 */
export function canIAnswer(
  args: readonly string[],
  r: { code: number; stdout: string; stderr: string },
): boolean {
  const answer = r.stdout.trim();
  if (r.code === 0 && answer === 'yes') return true;
  if (r.code === 1 && answer === 'no') return false;
  throw new Error(
    `kubectl auth can-i ${args.join(' ')} gave no answer (exit ${r.code}): ${r.stderr.trim() || answer}`,
  );
}

/** A service account and a token for it (TokenRequest; no controller needed). */
export async function serviceAccountToken(s: ControlPlaneState, ns: string, name: string): Promise<string> {
  await kubectl(s, ['-n', ns, 'create', 'serviceaccount', name]);
  return (await kubectlOk(s, ['-n', ns, 'create', 'token', name, '--duration=2h'])).trim();
}
