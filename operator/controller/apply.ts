import { API_VERSION, KIND } from '../api/schema.js';
import { ApiError, type Kube } from '../kube/client.js';
import type { EventRecorder } from '../kube/event-recorder.js';
import { topologyStatusPath } from '../kube/paths.js';
import type { Log } from '../observability/logger.js';
import type { OperatorMetrics } from '../observability/operator-metrics.js';
import type { StatusWrite } from './plan.js';

/**
 * Does what a plan says, and nothing else: patches `/status`, then — only once the write has
 * succeeded — sets the gauges and records the Events. A topology deleted meanwhile (404) is not
 * an error; any other failure is thrown for the work queue to retry.
 *
 * The patch is the plan's JSON Patch of what changed when the object is known to hold the status
 * it was computed from — the patch carries the resourceVersion that status was read or written
 * at, and the API server refuses it (409) if the object moved since — else, or when refused, a
 * merge patch, which is right whatever the object holds. The API server answers with the
 * metadata only (PartialObjectMetadata): the object's new resourceVersion, without sending the
 * whole status back.
 */

export interface TopologyRef {
  namespace: string;
  name: string;
  uid?: string;
}

/** How status writes are sent: `json` as above; `merge` always a merge patch (the former way, which bench/ measures). */
export type StatusPatchStyle = 'json' | 'merge';

const METADATA_ONLY = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1, application/json';

interface Written {
  metadata?: { resourceVersion?: string };
}

/**
 * A write that succeeded: the object's new resourceVersion ('' if the API server did not say), and
 * whether the object now holds exactly the status written — a JSON Patch applied to the very
 * resourceVersion it was computed from — rather than a merge patch applied to whatever it held.
 */
export interface AppliedStatus {
  resourceVersion: string;
  exact: boolean;
}

export class StatusApplier {
  constructor(
    private readonly kube: Kube,
    private readonly events: EventRecorder,
    private readonly metrics: OperatorMetrics,
    private readonly log: Log,
    private readonly style: StatusPatchStyle = 'json',
  ) {}

  /**
   * Writes the status; `basedOn` is the resourceVersion of the object whose status the plan
   * started from (undefined: not known). Resolves with what was written, or undefined when the
   * topology is gone.
   */
  async apply(ref: TopologyRef, write: StatusWrite, basedOn?: string): Promise<AppliedStatus | undefined> {
    const { namespace, name } = ref;
    const path = topologyStatusPath(namespace, name);
    // Field names only: serializing a patch of thousands of peers for a debug line costs as much as the write.
    this.log('debug', 'writing status', {
      key: `${namespace}/${name}`,
      fields: Object.keys(write.patch as object),
      ops: write.ops?.length,
    });
    let written: Written | undefined;
    let exact: boolean;
    try {
      if (this.style === 'json' && write.ops && basedOn)
        written = await this.kube
          .request<Written>('PATCH', path, {
            body: [{ op: 'replace', path: '/metadata/resourceVersion', value: basedOn }, ...write.ops],
            contentType: 'application/json-patch+json',
            accept: METADATA_ONLY,
          })
          .catch((e: unknown) => {
            // The object moved since (409), or the patch does not fit what it holds (422): merge.
            if (e instanceof ApiError && (e.code === 409 || e.code === 422)) return undefined;
            throw e;
          });
      exact = written !== undefined;
      written ??= await this.kube.request<Written>('PATCH', path, {
        body: { status: write.patch },
        contentType: 'application/merge-patch+json',
        ...(this.style === 'json' ? { accept: METADATA_ONLY } : { ignoreBody: true }),
      });
      this.metrics.statusWrites.inc({ result: 'ok' });
    } catch (e) {
      this.metrics.statusWrites.inc({ result: 'error' });
      if (e instanceof ApiError && e.code === 404) return undefined; // deleted meanwhile
      throw e;
    }
    this.metrics.peers.set({ namespace, name }, write.gauges.peers);
    this.metrics.excluded.set({ namespace, name }, write.gauges.excluded);
    const involved = { apiVersion: API_VERSION, kind: KIND, ...ref };
    for (const e of write.events) this.events.record(involved, e.type, e.reason, e.message);
    return { resourceVersion: written?.metadata?.resourceVersion ?? '', exact };
  }

  /** A topology that is gone: its gauges go too. */
  forget(ref: TopologyRef): void {
    const labels = { namespace: ref.namespace, name: ref.name };
    this.metrics.peers.remove(labels);
    this.metrics.excluded.remove(labels);
    this.metrics.lastSuccessfulPoll.remove(labels);
  }
}
