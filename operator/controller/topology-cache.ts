import type { Kube } from '../kube/client.js';
import { listWatch, type ListWatchOptions } from '../kube/list-watch.js';
import { topologiesPath } from '../kube/paths.js';
import { Reflector } from '../kube/reflector.js';
import { statusDigest } from '../protocol/publish.js';
import type { Log } from '../observability/logger.js';
import type { TopologyObject } from '../protocol/read.js';

/**
 * The ClusterTopology objects this operator serves: one reflector per served namespace (or
 * one for all namespaces). Each change puts the changed topology's key forward; a re-list,
 * every key.
 */

/** A topology as the cache keeps it. */
export type CachedTopology = TopologyObject & {
  /**
   * statusDigest(status), kept in its place once this process has written the status; neither is
   * kept at the resourceVersion of this process's own exact write (the controller knows it).
   */
  statusDigest?: string;
};

export interface TopologyCacheOptions {
  /** Served namespaces; empty: all. */
  namespaces: readonly string[];
  listWatch: Omit<ListWatchOptions, 'query'>;
  /**
   * Set for a topology whose status this process has written: its status is then not kept, only
   * its digest (the written one is the previous status; at thousands of peers a copy is megabytes).
   * `exactAt` is the resourceVersion at which the object holds exactly that status (an exact
   * write's): the write's own event needs no digest — hashing a 5,000-peer status is ~20 ms.
   */
  statusWritten: (key: string) => { exactAt?: string } | undefined;
  /** One topology changed (`key`), or possibly all of them (undefined: after a re-list). */
  onChange: (key?: string) => void;
  onRestart: (why: string) => void;
  log: Log;
}

export const keyOf = (namespace: string, name: string) => `${namespace}/${name}`;

export class TopologyCache {
  readonly reflectors: Reflector<CachedTopology>[];

  constructor(kube: Kube, opts: TopologyCacheOptions) {
    const paths = opts.namespaces.length
      ? opts.namespaces.map((ns) => topologiesPath(ns))
      : [topologiesPath()];
    this.reflectors = paths.map(
      (path) =>
        new Reflector<CachedTopology>({
          name: `clustertopologies ${path}`,
          ...listWatch<CachedTopology>(kube, path, opts.listWatch),
          resyncMs: 5 * 60_000,
          transform: (o) => {
            const t = o as CachedTopology;
            const written = opts.statusWritten(keyOf(t.metadata.namespace ?? '', t.metadata.name));
            if (!written) return t;
            const { status, ...rest } = t;
            if (written.exactAt && written.exactAt === t.metadata.resourceVersion) return rest;
            return { ...rest, statusDigest: statusDigest(status) } as CachedTopology;
          },
          // One object changed (our own status writes too): only its key. A re-list: all of them.
          onChange: opts.onChange,
          onRestart: opts.onRestart,
          log: opts.log,
          onPoll: (p) =>
            !p.ok &&
            opts.log('warn', 'listing ClusterTopology objects failed', {
              path,
              error: p.failure.message,
              code: p.failure.code,
            }),
        }),
    );
  }

  start(): void {
    for (const r of this.reflectors) r.start();
  }

  stop(): void {
    for (const r of this.reflectors) r.stop();
  }

  keys(): string[] {
    return this.reflectors.flatMap((r) =>
      r.items().map((t) => keyOf(t.metadata.namespace ?? '', t.metadata.name)),
    );
  }

  find(namespace: string, name: string): CachedTopology | undefined {
    for (const r of this.reflectors) {
      const t = r.get(namespace, name);
      if (t) return t;
    }
    return undefined;
  }
}
