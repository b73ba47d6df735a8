import { isRecord } from '../api/json.js';
/**
 * The few fields of a pod the naming engine reads, taken from untyped JSON. Input may come
 * from a file (`ctopo resolve -f`), so any field may be missing or of the wrong type; a wrong
 * type reads as missing.
 */

export interface PodFacts {
  /** metadata.name, or '' */
  name: string;
  /** metadata.uid, or '' */
  uid: string;
  /** status.podIP, or '' */
  podIP: string;
  /** spec.nodeName, or '' */
  node: string;
  /** status.phase, or '' */
  phase: string;
  /** metadata.deletionTimestamp is set (to anything but null or ''). */
  terminating: boolean;
  /** metadata.annotations when it is an object. */
  annotations: Readonly<Record<string, unknown>> | undefined;
}

function field(obj: Record<string, unknown> | undefined, key: string): unknown {
  return obj !== undefined && Object.hasOwn(obj, key) ? obj[key] : undefined;
}

function stringField(obj: Record<string, unknown> | undefined, key: string): string {
  const v = field(obj, key);
  return typeof v === 'string' ? v : '';
}

function recordField(
  obj: Record<string, unknown> | undefined,
  key: string,
): Record<string, unknown> | undefined {
  const v = field(obj, key);
  return isRecord(v) ? v : undefined;
}

export function readPod(pod: unknown): PodFacts {
  const root = isRecord(pod) ? pod : undefined;
  const metadata = recordField(root, 'metadata');
  const spec = recordField(root, 'spec');
  const status = recordField(root, 'status');
  const deletion = field(metadata, 'deletionTimestamp');
  return {
    name: stringField(metadata, 'name'),
    uid: stringField(metadata, 'uid'),
    podIP: stringField(status, 'podIP'),
    node: stringField(spec, 'nodeName'),
    phase: stringField(status, 'phase'),
    terminating: deletion !== undefined && deletion !== null && deletion !== '',
    annotations: recordField(metadata, 'annotations'),
  };
}

/** The annotation's value, or undefined when the pod does not carry it. */
export function annotation(facts: PodFacts, key: string): unknown {
  return field(facts.annotations as Record<string, unknown> | undefined, key);
}
