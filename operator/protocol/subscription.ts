import type { Kube, KubeObject } from '../kube/client.js';
import { listWatch } from '../kube/list-watch.js';
import { leasesPath, topologiesPath } from '../kube/paths.js';
import { Reflector } from '../kube/reflector.js';
import type { Failure } from '../kube/reflector-machine.js';
import {
  leaseNameFor,
  leaseReadOf,
  livenessExpiresAt,
  objectReadOf,
  readTopology,
  type ReadLimits,
  type Reading,
  type SourceRead,
} from './read.js';

/**
 * The reader's side of the status protocol as one subscription (docs/status-protocol.md §1, §4):
 * it follows one ClusterTopology and its liveness Lease — each a list narrowed to the one object
 * by name (a fieldSelector, which is also what lets RBAC restrict a reader to it with
 * `resourceNames`), then a watch from the list's resourceVersion with bookmarks; a re-list only
 * on 410 Gone; every retry after client-go's capped, jittered backoff (`kube/reflector.ts`) — and
 * hands over a typed `Reading` (`read.ts`) whenever what it knows changes: an object, a failure,
 * a watch open again, or the Lease expiring (staleness arrives without an event).
 *
 * No periodic re-list: a reader receives the object only when the operator changed it. A broken
 * watch counts as a failed read at once (not at the next list), and the watch being open again
 * clears it.
 *
 * Each thing it follows is a `Source`; another object a reader needs (its member report, the
 * slices of a sliced peer list) is one more source here and one more input of the pure reading,
 * not another loop.
 */

/**
 * The API server checks permissions when a watch opens, never during it: a reader whose
 * RoleBinding is removed keeps hearing its object until the watch ends. Renewing the watch every
 * 30 s (from the last resourceVersion: no object bytes, only a request) bounds how long a
 * reader's own 403 goes unnoticed.
 */
export const WATCH_RENEW_SECONDS = 30;

/** No periodic re-list (the protocol); the reflector still wants a period, so: a day. */
const NO_RELIST_MS = 24 * 3600_000;

/** One object of one collection, by name: listed, then watched. */
class Source {
  readonly reflector: Reflector<KubeObject>;
  /** The last watch failure since the watch was last open; undefined while it is healthy. */
  private watchFailure: Failure | undefined;

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
      resyncMs: NO_RELIST_MS,
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

  read(): SourceRead {
    const poll = this.reflector.lastPoll;
    if (!poll) return { kind: 'pending' };
    if (!poll.ok) return { kind: 'failed', failure: poll.failure };
    if (this.watchFailure) return { kind: 'failed', failure: this.watchFailure };
    const object = this.reflector.get(this.namespace, this.name);
    return { kind: 'read', objects: object ? [object] : [] };
  }
}

export interface TopologySubscriptionOptions {
  namespace: string;
  name: string;
  /** Follow the liveness Lease too (get/list/watch on it; without, liveness is unknown). Default: yes. */
  lease?: boolean;
  limits?: ReadLimits;
  /** Hears every new Reading. */
  onReading: (reading: Reading) => void;
  /** The clock (tests). */
  now?: () => Date;
}

export class TopologySubscription {
  private readonly topology: Source;
  private readonly lease: Source | undefined;
  private readonly now: () => Date;
  private expiry: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    kube: Kube,
    private readonly opts: TopologySubscriptionOptions,
  ) {
    const { namespace, name } = opts;
    this.now = opts.now ?? (() => new Date());
    const changed = () => this.changed();
    this.topology = new Source(
      kube,
      `clustertopology ${namespace}/${name}`,
      topologiesPath(namespace),
      name,
      namespace,
      changed,
    );
    this.lease =
      opts.lease === false
        ? undefined
        : new Source(
            kube,
            `lease ${namespace}/${leaseNameFor(name)}`,
            leasesPath(namespace),
            leaseNameFor(name),
            namespace,
            changed,
          );
  }

  start(): void {
    this.topology.reflector.start();
    this.lease?.reflector.start();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.expiry);
    this.topology.reflector.stop();
    this.lease?.reflector.stop();
  }

  /** What the reader knows now. */
  reading(): Reading {
    return readTopology(
      objectReadOf(this.topology.read()),
      leaseReadOf(this.lease?.read()),
      this.now(),
      this.opts.limits,
    );
  }

  private changed(): void {
    if (this.stopped) return;
    const reading = this.reading();
    this.armExpiry(reading);
    this.opts.onReading(reading);
  }

  /** A live Lease turns stale by the clock alone: look again the moment it expires. */
  private armExpiry(reading: Reading): void {
    clearTimeout(this.expiry);
    const at = livenessExpiresAt(reading.liveness);
    if (at === undefined) return;
    const ms = Math.min(Math.max(0, at - this.now().getTime()) + 1, 2 ** 31 - 1);
    this.expiry = setTimeout(() => this.changed(), ms);
    this.expiry.unref?.();
  }
}
