/**
 * The benchmark's pods and Nodes as plain objects (pure): deployment-like names, unique IPs,
 * and a pod shaped like a real one (a container with ports, env, probes and resources; a
 * kubelet-like status), so list and status sizes are those of a real cluster, not of stubs.
 */

export const BENCH_LABEL = { key: 'app', value: 'bench' } as const;
export const BENCH_SELECTOR = `${BENCH_LABEL.key}=${BENCH_LABEL.value}`;
const TEMPLATE_HASH = '7d9f8c6b5';
/** The alphabet Kubernetes uses for generated name suffixes (no vowels, no confusable digits). */
const SUFFIX_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';
const SUFFIX_SPACE = SUFFIX_ALPHABET.length ** 5;

/**
 * The name of pod i, like a Deployment's: `web-7d9f8c6b5-x2k4q`. Distinct for distinct i below
 * 27^5 (multiplying by a number prime to 27 is a bijection modulo 27^5).
 */
export function podName(i: number): string {
  if (!(Number.isInteger(i) && i >= 0 && i < SUFFIX_SPACE)) throw new RangeError(`podName: bad index ${i}`);
  let x = (i * 7_777_777 + 12_345) % SUFFIX_SPACE;
  let suffix = '';
  for (let d = 0; d < 5; d++) {
    suffix += SUFFIX_ALPHABET[x % SUFFIX_ALPHABET.length];
    x = Math.floor(x / SUFFIX_ALPHABET.length);
  }
  return `web-${TEMPLATE_HASH}-${suffix}`;
}

/** IP number k (0 ≤ k < 2^22) in 10.64.0.0/10: distinct k, distinct IPs. */
export function ipFor(k: number): string {
  if (!(Number.isInteger(k) && k >= 0 && k < 1 << 22)) throw new RangeError(`ipFor: bad index ${k}`);
  return `10.${64 + ((k >> 16) & 63)}.${(k >> 8) & 255}.${k & 255}`;
}

export const NODE_COUNT = 60;
const ZONES = ['eu-central-1a', 'eu-central-1b', 'eu-central-1c'];

export function nodeName(j: number): string {
  return `worker-${String(j).padStart(3, '0')}`;
}

/** Node j, with the well-known topology labels the failure-domain analysis reads. */
export function nodeManifest(j: number): object {
  const name = nodeName(j);
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      labels: {
        'kubernetes.io/hostname': name,
        'kubernetes.io/os': 'linux',
        'topology.kubernetes.io/region': 'eu-central-1',
        'topology.kubernetes.io/zone': ZONES[j % ZONES.length]!,
      },
    },
  };
}

export function podManifest(i: number, namespace: string): object {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: podName(i),
      namespace,
      labels: {
        [BENCH_LABEL.key]: BENCH_LABEL.value,
        'pod-template-hash': TEMPLATE_HASH,
        'netzlive/pod-type': 'cluster-service',
      },
    },
    spec: {
      nodeName: nodeName(i % NODE_COUNT),
      containers: [
        {
          name: 'app',
          image: 'registry.example/netzlive/web:2.10.1',
          ports: [
            { name: 'http', containerPort: 4000, protocol: 'TCP' },
            { name: 'epmd', containerPort: 4369, protocol: 'TCP' },
          ],
          env: [
            { name: 'MIX_ENV', value: 'prod' },
            { name: 'RELEASE_DISTRIBUTION', value: 'name' },
            { name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
            { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
          ],
          resources: { requests: { cpu: '100m', memory: '256Mi' }, limits: { memory: '512Mi' } },
          readinessProbe: { httpGet: { path: '/health', port: 4000 }, periodSeconds: 5 },
        },
      ],
    },
  };
}

/** What a kubelet reports for a running, ready pod with IP `ip`. */
export function podStatus(i: number, ip: string, startedAt: string): object {
  const conditions = ['PodReadyToStartContainers', 'Initialized', 'Ready', 'ContainersReady', 'PodScheduled'];
  return {
    status: {
      phase: 'Running',
      hostIP: `192.168.${Math.floor((i % NODE_COUNT) / 250)}.${(i % NODE_COUNT) + 1}`,
      podIP: ip,
      podIPs: [{ ip }],
      startTime: startedAt,
      conditions: conditions.map((type) => ({ type, status: 'True', lastTransitionTime: startedAt })),
      containerStatuses: [
        {
          name: 'app',
          ready: true,
          started: true,
          restartCount: 0,
          image: 'registry.example/netzlive/web:2.10.1',
          imageID:
            'registry.example/netzlive/web@sha256:0f3c1b6e1a7d4e5f8a9b0c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d0e1f',
          containerID: `containerd://${i.toString(16).padStart(64, '0')}`,
          state: { running: { startedAt } },
        },
      ],
    },
  };
}
