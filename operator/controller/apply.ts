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
 */

export interface TopologyRef {
  namespace: string;
  name: string;
  uid?: string;
}

export class StatusApplier {
  constructor(
    private readonly kube: Kube,
    private readonly events: EventRecorder,
    private readonly metrics: OperatorMetrics,
    private readonly log: Log,
  ) {}

  /** True when the status was written; false when the topology is gone. */
  async apply(ref: TopologyRef, write: StatusWrite): Promise<boolean> {
    const { namespace, name } = ref;
    // Field names only: serializing a patch of thousands of peers for a debug line costs as much as the write.
    this.log('debug', 'writing status', {
      key: `${namespace}/${name}`,
      fields: Object.keys(write.patch as object),
    });
    try {
      await this.kube.request('PATCH', topologyStatusPath(namespace, name), {
        body: { status: write.patch },
        contentType: 'application/merge-patch+json',
        ignoreBody: true,
      });
      this.metrics.statusWrites.inc({ result: 'ok' });
    } catch (e) {
      this.metrics.statusWrites.inc({ result: 'error' });
      if (e instanceof ApiError && e.code === 404) return false; // deleted meanwhile
      throw e;
    }
    this.metrics.peers.set({ namespace, name }, write.gauges.peers);
    this.metrics.excluded.set({ namespace, name }, write.gauges.excluded);
    const involved = { apiVersion: API_VERSION, kind: KIND, ...ref };
    for (const e of write.events) this.events.record(involved, e.type, e.reason, e.message);
    return true;
  }

  /** A topology that is gone: its gauges go too. */
  forget(ref: TopologyRef): void {
    const labels = { namespace: ref.namespace, name: ref.name };
    this.metrics.peers.remove(labels);
    this.metrics.excluded.remove(labels);
    this.metrics.lastSuccessfulPoll.remove(labels);
  }
}
