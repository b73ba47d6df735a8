import type { Kube, KubeObject } from '../kube/client.js';
import { listWatch, type ListWatchOptions } from '../kube/list-watch.js';
import { NODES_PATH } from '../kube/paths.js';
import { Reflector } from '../kube/reflector.js';
import type { Log } from '../observability/logger.js';

/** The labels of every Node, for failure domains. Only the labels are kept. */

type NodeLabels = KubeObject & { metadata: { labels: Record<string, string> } };

export interface NodeCacheOptions {
  listWatch: Omit<ListWatchOptions, 'query'>;
  onChange: () => void;
  onRestart: (why: string) => void;
  log: Log;
}

export class NodeCache {
  readonly reflector: Reflector<NodeLabels>;
  /**
   * The first list has answered, well or not. Until then a topology's placement would read as
   * unknown only because the Nodes are not listed yet — a status a fresh leader would write and
   * take back a moment later (a flap on every restart or handover).
   */
  settled = false;
  /** Moves whenever a Node's labels may have changed. */
  version = 0;

  constructor(kube: Kube, opts: NodeCacheOptions) {
    this.reflector = new Reflector<NodeLabels>({
      name: 'nodes',
      ...listWatch<NodeLabels>(kube, NODES_PATH, opts.listWatch),
      resyncMs: 5 * 60_000,
      // A Node's status (images, conditions) is most of its size.
      transform: (o) => ({
        metadata: {
          name: o.metadata.name,
          resourceVersion: o.metadata.resourceVersion,
          labels: (o.metadata.labels ?? {}) as Record<string, string>,
        },
      }),
      onChange: () => {
        this.version++;
        opts.onChange();
      },
      onRestart: opts.onRestart,
      onPoll: (p) => {
        if (!p.ok)
          opts.log('warn', 'listing Nodes failed; failure domains will be unknown', {
            error: p.failure.message,
            code: p.failure.code,
          });
        if (this.settled) return;
        this.settled = true;
        opts.onChange(); // what waited for the Nodes goes now
      },
    });
  }

  start(): void {
    this.reflector.start();
  }

  stop(): void {
    this.reflector.stop();
  }

  /** A Node's labels; undefined for a Node that does not exist or is not known yet. */
  labels(node: string): Readonly<Record<string, string>> | undefined {
    return this.reflector.get(undefined, node)?.metadata.labels;
  }
}
