// Pod builders for the naming tests: the smallest pod JSON the engine reads, shaped like the
// API's (and `kubectl get pods -o json`'s) output.
import { DEFAULT_HOSTNAME_ANNOTATION, DEFAULT_NODENAME_ANNOTATION } from '../../../operator/naming/index.js';

export const SEED_HOST_EXPRESSION =
  "$.spec.containers[?(@.name >= '0')].env[?(@.name == 'EXTERNAL_DNS')].value";
export const HOST = DEFAULT_HOSTNAME_ANNOTATION;
export const NAME = DEFAULT_NODENAME_ANNOTATION;

export interface PodSpec {
  name?: string;
  uid?: string;
  ip?: string;
  node?: string;
  phase?: string;
  deleting?: boolean;
  annotations?: Record<string, unknown>;
  env?: Record<string, string>;
  containers?: object[];
}

let counter = 0;

export function pod(s: PodSpec = {}): Record<string, unknown> {
  const name = s.name ?? `web-${++counter}`;
  const env = Object.entries(s.env ?? {}).map(([k, v]) => ({ name: k, value: v }));
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: 'netzlive',
      uid: s.uid ?? `uid-${name}`,
      labels: { 'netzlive/pod-type': 'cluster-service' },
      ...(s.annotations ? { annotations: s.annotations } : {}),
      ...(s.deleting ? { deletionTimestamp: '2026-10-09T10:00:00Z' } : {}),
    },
    spec: {
      ...(s.node !== undefined ? { nodeName: s.node } : { nodeName: 'node-a' }),
      containers: s.containers ?? [{ name: 'app', image: 'web:1', env }],
    },
    status: {
      phase: s.phase ?? 'Running',
      ...(s.ip !== undefined ? (s.ip === '' ? {} : { podIP: s.ip }) : { podIP: '10.0.0.1' }),
    },
  };
}

/** The seed's single-replica set-up: EXTERNAL_DNS env and the hostname annotation. */
export function seedSingleReplica(name: string, dns: string, ip = '10.0.0.7'): Record<string, unknown> {
  return pod({ name, ip, annotations: { [HOST]: SEED_HOST_EXPRESSION }, env: { EXTERNAL_DNS: dns } });
}

/** Deep-freezes a JSON value, so an evaluation that tries to mutate it throws or fails. */
export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}
