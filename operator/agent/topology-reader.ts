import type { Kube, KubeObject } from '../kube/client.js';
import { listWatch } from '../kube/list-watch.js';
import { leasesPath, topologiesPath } from '../kube/paths.js';
import { Reflector } from '../kube/reflector.js';
import type { Failure } from '../kube/reflector-machine.js';
import {
  leaseNameFor,
  type LeaseRead,
  type LeaseView,
  type ObjectRead,
  type TopologyObject,
} from '../protocol/read.js';

/**
 * Reads one ClusterTopology and its liveness Lease as the status protocol says
 * (docs/status-protocol.md): each a list narrowed to the one object by name (a fieldSelector,
 * which is also what lets RBAC restrict a reader to it with `resourceNames`), then a watch from
 * the list's resourceVersion with bookmarks; a re-list only on 410 Gone. No periodic re-list:
 * a reader receives the object only when the operator changed it.
 *
 * A broken watch counts as a failed read at once (not at the next re-list), and the watch being
 * open again clears it.
 */

/**
 * The API server checks permissions when a watch opens, never during it: a reader whose
 * RoleBinding is removed keeps hearing its object until the watch ends. Renewing the watch every
 * 30 s (from the last resourceVersion: no object bytes, only a request) bounds how long the
 * agent's own 403 goes unnoticed.
 */
export const WATCH_RENEW_SECONDS = 30;

/** No periodic re-list (the protocol); the reflector still wants a period, so: a day. */
const NO_RESYNC_MS = 24 * 3600_000;

class OneObject {
  readonly reflector: Reflector<KubeObject>;
  /** The last watch failure since the watch was last open; undefined while it is healthy. */
  watchFailure: Failure | undefined;

  constructor(
    kube: Kube,
    what: string,
    path: string,
    readonly name: string,
    private readonly namespace: string,
    onChange: () => void,
  ) {
    this.reflector = new Reflector<KubeObject>({
      name: what,
      ...listWatch(kube, path, {
        query: { fieldSelector: `metadata.name=${name}` },
        watchTimeoutSeconds: WATCH_RENEW_SECONDS,
      }),
      resyncMs: NO_RESYNC_MS,
      backoffCapMs: 30_000,
      onChange,
      onPoll: (p) => {
        if (p.ok) this.watchFailure = undefined;
        onChange();
      },
      onWatchFailure: (f) => {
        this.watchFailure = f;
        onChange();
      },
      onWatchOpen: () => {
        if (!this.watchFailure) return;
        this.watchFailure = undefined;
        onChange();
      },
    });
  }

  /** Pending, failed (the last list, or the watch since), or the object (undefined: none). */
  read(): { kind: 'pending' } | { kind: 'failed'; failure: Failure } | { kind: 'read'; object?: KubeObject } {
    const poll = this.reflector.lastPoll;
    if (!poll) return { kind: 'pending' };
    if (!poll.ok) return { kind: 'failed', failure: poll.failure };
    if (this.watchFailure) return { kind: 'failed', failure: this.watchFailure };
    return { kind: 'read', object: this.reflector.get(this.namespace, this.name) };
  }
}

export class TopologyReader {
  private readonly topology: OneObject;
  private readonly lease: OneObject | undefined;

  constructor(
    kube: Kube,
    namespace: string,
    name: string,
    onChange: () => void,
    /** Read the liveness Lease too (needs get/list/watch on it; without, liveness is unknown). */
    readLease = true,
  ) {
    this.topology = new OneObject(
      kube,
      `clustertopology ${namespace}/${name}`,
      topologiesPath(namespace),
      name,
      namespace,
      onChange,
    );
    this.lease = readLease
      ? new OneObject(
          kube,
          `lease ${namespace}/${leaseNameFor(name)}`,
          leasesPath(namespace),
          leaseNameFor(name),
          namespace,
          onChange,
        )
      : undefined;
  }

  start(): void {
    this.topology.reflector.start();
    this.lease?.reflector.start();
  }

  stop(): void {
    this.topology.reflector.stop();
    this.lease?.reflector.stop();
  }

  /** What the reader knows now of the object: still waiting, the read failed, or the object (or its absence). */
  state(): ObjectRead {
    const r = this.topology.read();
    if (r.kind !== 'read') return r;
    return { kind: 'read', object: r.object as unknown as TopologyObject | undefined };
  }

  /** What it knows of the liveness Lease. */
  leaseState(): LeaseRead {
    if (!this.lease) return { kind: 'unread' };
    const r = this.lease.read();
    switch (r.kind) {
      case 'pending':
        return { kind: 'unreadable', message: 'not read yet' };
      case 'failed':
        return {
          kind: 'unreadable',
          message: r.failure.code
            ? `${r.failure.code} ${r.failure.reason}: ${r.failure.message}`
            : r.failure.message,
        };
      case 'read':
        return r.object ? { kind: 'found', lease: r.object as unknown as LeaseView } : { kind: 'missing' };
    }
  }
}
