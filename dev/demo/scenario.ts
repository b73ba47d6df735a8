/**
 * The demo's world, as plain objects: the two usual naming set-ups (one replica named by a
 * stable DNS name, several named by pod IP), one pod of each kind of trouble, and Nodes over two
 * sites (site A's two nodes on one hypervisor), whose quorum verdicts are known in advance.
 */

export const NAMESPACE = 'netzlive';
export const TOPOLOGY = 'web';
export const SITE = 'example.com/site';
export const HYPERVISOR = 'example.com/hypervisor';
const HOST_ANNOTATION = 'netzlive/hostname-naming-jsonpath';
const NAME_ANNOTATION = 'netzlive/nodename-naming-jsonpath';
const EXTERNAL_DNS_PATH = "$.spec.containers[?(@.name >= '0')].env[?(@.name == 'EXTERNAL_DNS')].value";
const LABELS = { 'netzlive/pod-type': 'cluster-service' };

export const nodes = [
  { name: 'vm-1', site: 'A', hypervisor: 'hv-1' },
  { name: 'vm-2', site: 'A', hypervisor: 'hv-1' },
  { name: 'vm-3', site: 'B', hypervisor: 'hv-2' },
].map((n) => ({
  apiVersion: 'v1',
  kind: 'Node',
  metadata: {
    name: n.name,
    labels: { 'kubernetes.io/hostname': n.name, [SITE]: n.site, [HYPERVISOR]: n.hypervisor },
  },
}));

export interface DemoPod {
  /** What the pod shows. */
  role: string;
  pod: Record<string, unknown>;
  /** The status a kubelet would report; undefined: none yet. */
  status?: { podIP: string; phase: string; ready: boolean };
  /** The BEAM node that runs in it, when it is a member. */
  beam?: string;
}

function pod(
  name: string,
  opts: {
    annotations?: Record<string, string>;
    env?: Record<string, string>;
    node?: string;
    labels?: Record<string, string>;
  },
) {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: NAMESPACE,
      labels: { ...LABELS, ...opts.labels },
      ...(opts.annotations ? { annotations: opts.annotations } : {}),
    },
    spec: {
      ...(opts.node ? { nodeName: opts.node } : {}),
      containers: [
        {
          name: 'app',
          image: 'example.invalid/netzlive-app',
          env: Object.entries(opts.env ?? {}).map(([n, value]) => ({ name: n, value })),
        },
      ],
    },
  };
}

const running = (ip: string) => ({ podIP: ip, phase: 'Running', ready: true });

/**
 * The pods. The three members all live on 127.0.0.1 (real BEAM nodes on this machine); their
 * names differ by the part before @. The single-replica set-up's EXTERNAL_DNS is 127.0.0.1 too,
 * so its node is reachable here; in a cluster it is a Service's DNS name.
 */
export const pods: DemoPod[] = [
  {
    role: 'single replica: host from EXTERNAL_DNS through the annotation',
    pod: pod('dispatch-0', {
      annotations: { [HOST_ANNOTATION]: EXTERNAL_DNS_PATH },
      env: { EXTERNAL_DNS: '127.0.0.1' },
      node: 'vm-1',
    }),
    status: running('10.20.0.11'),
    beam: 'dispatch-0@127.0.0.1',
  },
  {
    role: 'several replicas: pod IP fallback',
    pod: pod('web-0', { node: 'vm-2' }),
    status: running('127.0.0.1'),
    beam: 'web-0@127.0.0.1',
  },
  {
    role: 'several replicas: pod IP fallback',
    pod: pod('web-1', { node: 'vm-3' }),
    status: running('127.0.0.1'),
    beam: 'web-1@127.0.0.1',
  },
  { role: 'trouble: no IP yet', pod: pod('web-2', {}) },
  {
    role: 'trouble: a broken JSONPath',
    pod: pod('broken-0', {
      annotations: { [HOST_ANNOTATION]: '$.spec.containers[?(@.name == ' },
      node: 'vm-3',
    }),
    status: running('10.20.0.21'),
  },
  ...[0, 1].map((i) => ({
    role: 'trouble: a shared DNS name on several replicas',
    pod: pod(`shared-${i}`, {
      labels: { app: 'shared' },
      annotations: { [HOST_ANNOTATION]: EXTERNAL_DNS_PATH, [NAME_ANNOTATION]: '$.metadata.labels.app' },
      env: { EXTERNAL_DNS: 'shared.netzlive.svc.cluster.local' },
      node: 'vm-3',
    }),
    status: running(`10.20.0.3${i}`),
  })),
];

export const topology = {
  apiVersion: 'cluster.netzlive.io/v1alpha1',
  kind: 'ClusterTopology',
  metadata: { name: TOPOLOGY, namespace: NAMESPACE },
  spec: {
    selector: 'netzlive/pod-type=cluster-service',
    pollingInterval: '2s',
    failureDomains: { levels: [{ key: SITE }, { key: HYPERVISOR }, { key: 'kubernetes.io/hostname' }] },
  },
};
