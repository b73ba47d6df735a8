import type { Kube, KubeObject } from '../kube/client.js';
import { listWatch, type ListWatchOptions } from '../kube/list-watch.js';
import { ALL_MEMBER_REPORTS_PATH, memberReportsPath } from '../kube/paths.js';
import { Reflector } from '../kube/reflector.js';
import type { MemberReportObject } from '../mesh/standing.js';
import type { Log } from '../observability/logger.js';
import { keyOf } from './topology-cache.js';

/**
 * The member reports (ClusterTopologyMember) of the served namespaces: one reflector per served
 * namespace (or one for all), each report kept as the aggregate needs it and indexed by the
 * topology it names, so a change puts forward only that topology's key. Reports are small and
 * written at most once per 10 s per member (docs/status-protocol.md §8.4).
 */

export interface MemberReportCacheOptions {
  /** Served namespaces; empty: all. */
  namespaces: readonly string[];
  listWatch: Omit<ListWatchOptions, 'query'>;
  /** The reports of topology `key` (namespace/name) changed. */
  onChange: (key: string) => void;
  onRestart: (why: string) => void;
  log: Log;
}

type Report = MemberReportObject & KubeObject;

export class MemberReportCache {
  readonly reflectors: Reflector<Report>[];
  /** Report key → the topology key it names (kept past a deletion's event, to name the topology). */
  private readonly topologyOf = new Map<string, string>();
  /** Topology key → its reports' keys. */
  private readonly byTopology = new Map<string, Set<string>>();
  private readonly byNamespace = new Map<string, Reflector<Report>>();
  private refused = false;

  constructor(
    kube: Kube,
    private readonly opts: MemberReportCacheOptions,
  ) {
    const targets = opts.namespaces.length
      ? opts.namespaces.map((ns) => ({ ns, path: memberReportsPath(ns) }))
      : [{ ns: undefined, path: ALL_MEMBER_REPORTS_PATH }];
    this.reflectors = targets.map(({ ns, path }) => {
      const r: Reflector<Report> = new Reflector<Report>({
        name: `clustertopologymembers ${path}`,
        ...listWatch<Report>(kube, path, opts.listWatch),
        resyncMs: 5 * 60_000,
        transform: (o) => {
          const { metadata, spec, status } = o as Report;
          // resourceVersion too: the reflector tells a changed object from an unchanged one by it.
          const { name, namespace, resourceVersion } = metadata;
          const kept = {
            metadata: { name, namespace, resourceVersion },
            spec,
            status,
          } as Report;
          this.index(kept);
          return kept;
        },
        onChange: (key) => (key === undefined ? this.changedAll(r) : this.changed(r, key)),
        onRestart: opts.onRestart,
        onPoll: (p) => {
          // One line per change: a missing permission (an older chart) fails every list.
          if (p.ok === !this.refused) return;
          this.refused = !p.ok;
          if (!p.ok)
            opts.log('warn', 'cannot list member reports; MESH stays as last written', {
              path,
              error: p.failure.message,
              code: p.failure.code,
            });
          else opts.log('info', 'member reports listed again', { path });
        },
      });
      if (ns !== undefined) this.byNamespace.set(ns, r);
      return r;
    });
  }

  start(): void {
    for (const r of this.reflectors) r.start();
  }

  stop(): void {
    for (const r of this.reflectors) r.stop();
  }

  /** The topology's reports; undefined while they are not known (its namespace not listed yet). */
  reports(namespace: string, topology: string): MemberReportObject[] | undefined {
    const r =
      this.byNamespace.get(namespace) ?? (this.byNamespace.size === 0 ? this.reflectors[0] : undefined);
    if (!r?.synced) return undefined;
    const out: MemberReportObject[] = [];
    for (const key of this.byTopology.get(keyOf(namespace, topology)) ?? []) {
      const slash = key.indexOf('/');
      const report = r.get(key.slice(0, slash), key.slice(slash + 1));
      if (report) out.push(report);
    }
    return out;
  }

  private index(o: Report): void {
    const key = keyOf(o.metadata.namespace ?? '', o.metadata.name);
    const topology = keyOf(o.metadata.namespace ?? '', o.spec?.topology ?? '');
    const before = this.topologyOf.get(key);
    if (before === topology) return;
    if (before !== undefined) this.byTopology.get(before)?.delete(key);
    this.topologyOf.set(key, topology);
    let set = this.byTopology.get(topology);
    if (!set) this.byTopology.set(topology, (set = new Set()));
    set.add(key);
  }

  private changed(r: Reflector<Report>, key: string): void {
    const topology = this.topologyOf.get(key);
    if (topology === undefined) return;
    const slash = key.indexOf('/');
    if (!r.get(key.slice(0, slash), key.slice(slash + 1))) {
      // Deleted: forget it, but still tell its topology.
      this.topologyOf.delete(key);
      this.byTopology.get(topology)?.delete(key);
    }
    this.opts.onChange(topology);
  }

  /** After a (re-)list: every topology with reports, forgetting reports that are gone. */
  private changedAll(r: Reflector<Report>): void {
    const topologies = new Set<string>();
    for (const [key, topology] of this.topologyOf) {
      const slash = key.indexOf('/');
      const ns = key.slice(0, slash);
      if (this.byNamespace.size > 0 && this.byNamespace.get(ns) !== r) continue;
      if (!r.get(ns, key.slice(slash + 1))) {
        this.topologyOf.delete(key);
        this.byTopology.get(topology)?.delete(key);
      }
      topologies.add(topology);
    }
    for (const t of topologies) this.opts.onChange(t);
  }
}
