import type { Kube } from './client.js';
import { eventsPath } from './paths.js';
import type { Log } from '../observability/logger.js';

export interface ObjectRef {
  apiVersion: string;
  kind: string;
  namespace: string;
  name: string;
  uid?: string;
}

/**
 * Posts core/v1 Events about a ClusterTopology, rate-limited: one event per object and reason
 * per `intervalMs`; what is held back is counted and said in the next one. An event that
 * cannot be written (no permission, API down) is logged and dropped: events never block work.
 */
export class EventRecorder {
  private readonly last = new Map<string, { at: number; suppressed: number }>();

  constructor(
    private readonly kube: Kube,
    private readonly component: string,
    private readonly log: Log,
    private readonly intervalMs = 10_000,
  ) {}

  record(ref: ObjectRef, type: 'Normal' | 'Warning', reason: string, message: string): void {
    const key = `${ref.namespace}/${ref.name}/${reason}`;
    const now = Date.now();
    const seen = this.last.get(key);
    if (seen && now - seen.at < this.intervalMs) {
      seen.suppressed++;
      return;
    }
    const extra = seen?.suppressed
      ? ` (${seen.suppressed} similar event${seen.suppressed > 1 ? 's' : ''} held back)`
      : '';
    this.last.set(key, { at: now, suppressed: 0 });
    const time = new Date(now).toISOString();
    const body = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { generateName: `${ref.name}.`, namespace: ref.namespace },
      involvedObject: {
        apiVersion: ref.apiVersion,
        kind: ref.kind,
        namespace: ref.namespace,
        name: ref.name,
        ...(ref.uid ? { uid: ref.uid } : {}),
      },
      type,
      reason,
      message: (message + extra).slice(0, 1024),
      source: { component: this.component },
      reportingComponent: this.component,
      reportingInstance: this.component,
      firstTimestamp: time,
      lastTimestamp: time,
      count: 1,
    };
    this.kube
      .request('POST', eventsPath(ref.namespace), {
        body,
        timeoutMs: 10_000,
      })
      .catch((e: Error) => this.log('debug', 'could not write an event', { reason, error: e.message }));
  }
}
