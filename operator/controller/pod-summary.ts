import type { ResolveSettings, PodVerdict } from '../naming/index.js';
import { resolvePod } from '../naming/index.js';
import { VOTES_ANNOTATION } from '../api/schema.js';
import { isRecord } from '../api/json.js';

/** A pod as the operator reads it: the fields the status needs, the rest left untyped. */
export interface PodView {
  metadata: { name: string; uid?: string; [k: string]: unknown };
  status?: { conditions?: { type: string; status: string }[]; [k: string]: unknown };
  spec?: { nodeName?: string; [k: string]: unknown };
  [k: string]: unknown;
}

/**
 * What the status needs of one selected pod, taken when the pod is listed or changes; the
 * operator keeps this, not the pod (at 5,000 pods the pod objects were most of its memory).
 * The verdict depends on the naming and membership settings: a change of them re-lists.
 */
export type PodSummary = {
  metadata: { name: string; namespace?: string; resourceVersion?: string };
  verdict: PodVerdict;
  ready: boolean;
  /** For declared voters (spec.failureDomains.voters): the pod's labels and its votes annotation. */
  labels?: Readonly<Record<string, string>>;
  votes?: string;
};

export function summarizePod(pod: PodView, naming: ResolveSettings): PodSummary {
  const m = pod.metadata;
  return {
    metadata: {
      name: m.name,
      ...(typeof m.namespace === 'string' ? { namespace: m.namespace } : {}),
      ...(typeof m.resourceVersion === 'string' ? { resourceVersion: m.resourceVersion } : {}),
    },
    verdict: resolvePod(pod, naming),
    ready: podReady(pod),
    ...voterFields(m),
  };
}

function voterFields(m: PodView['metadata']): Pick<PodSummary, 'labels' | 'votes'> {
  const labels = isRecord(m.labels) ? (m.labels as Record<string, string>) : undefined;
  const votes = isRecord(m.annotations) ? m.annotations[VOTES_ANNOTATION] : undefined;
  return { ...(labels ? { labels } : {}), ...(typeof votes === 'string' ? { votes } : {}) };
}

function podReady(p: PodView): boolean {
  return p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
}
