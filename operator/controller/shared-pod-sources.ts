import { parseLabelSelector } from '../api/label-selector.js';
import { pollingIntervalMs, type ResolvedSpec } from '../api/validate.js';
import type { Kube } from '../kube/client.js';
import { ClusterProbe } from './cluster-probe.js';
import { NamespacePods } from './namespace-pods.js';
import type { PodSourceOptions, PodSources, PodSourceView } from './pod-source.js';
import { SelectorPodSources } from './selector-pod-sources.js';

/**
 * The operator's pod sources: one watch per namespace (namespace-pods.ts) feeds every topology
 * that selects pods there; a selector the operator cannot read itself gets a source of its own.
 * One cluster-wide probe (cluster-probe.ts) polls every namespace served, or, when the operator
 * may not list pods cluster-wide, each namespace probes on its own.
 */
export class SharedPodSources implements PodSources {
  private readonly namespaces = new Map<string, NamespacePods>();
  /** Where each topology is served: its namespace and what it registered there (JSON). */
  private readonly served = new Map<string, { target: string; id: string }>();
  private readonly own: SelectorPodSources;
  private readonly probe: ClusterProbe;

  constructor(
    private readonly kube: Kube,
    private readonly opts: PodSourceOptions,
  ) {
    this.own = new SelectorPodSources(kube, opts);
    this.probe = new ClusterProbe(
      kube,
      () => [...this.namespaces.values()].filter((ns) => !ns.empty),
      opts.log,
    );
  }

  ensure(key: string, target: string, spec: ResolvedSpec): void {
    const parsed = parseLabelSelector(spec.selector);
    if (!parsed.ok) {
      this.leave(key);
      this.own.ensure(key, target, spec);
      return;
    }
    this.own.drop(key);
    const settings = { ...spec.naming, membership: spec.membership };
    const settingsKey = JSON.stringify(settings);
    const intervalMs = pollingIntervalMs(spec);
    const id = JSON.stringify([spec.selector, settingsKey, intervalMs]);
    const now = this.served.get(key);
    if (now?.target === target && now.id === id) return;
    this.leave(key);
    let ns = this.namespaces.get(target);
    if (!ns) {
      ns = new NamespacePods(this.kube, target, { ...this.opts, sharedProbe: this.probe.serving });
      this.namespaces.set(target, ns);
      ns.start();
    }
    ns.register(key, {
      selector: parsed.selector,
      selectorText: spec.selector,
      settings,
      settingsKey,
      intervalMs,
    });
    this.probe.want(intervalMs);
    this.served.set(key, { target, id });
  }

  drop(key: string): void {
    this.leave(key);
    this.own.drop(key);
  }

  view(key: string): PodSourceView {
    const where = this.served.get(key);
    const ns = where && this.namespaces.get(where.target);
    return ns ? ns.view(key) : this.own.view(key);
  }

  stop(): void {
    this.probe.stop();
    for (const ns of this.namespaces.values()) ns.stop();
    this.namespaces.clear();
    this.served.clear();
    this.own.stop();
  }

  /** Topology `key` no longer selects pods through its namespace's watch; the last one out closes it. */
  private leave(key: string): void {
    const where = this.served.get(key);
    if (!where) return;
    this.served.delete(key);
    const ns = this.namespaces.get(where.target);
    ns?.unregister(key);
    if (ns?.empty) {
      ns.stop();
      this.namespaces.delete(where.target);
    }
  }
}
