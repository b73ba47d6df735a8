import { pollingIntervalMs, type ResolvedSpec } from '../api/validate.js';
import type { Kube } from '../kube/client.js';
import { listWatch } from '../kube/list-watch.js';
import { podsPath } from '../kube/paths.js';
import { Reflector } from '../kube/reflector.js';
import { summarizePod, type PodSummary, type PodView } from './pod-summary.js';
import type { PodSourceOptions, PodSources, PodSourceView } from './pod-source.js';

/**
 * A pod source per topology: a reflector over the pods its selector matches (the API server
 * filters), re-listed every polling interval, its watch restarted each time. It serves the
 * selectors the operator cannot read itself (`shared-pod-sources.ts` serves the others); it was
 * the operator's only way before, and the benchmarks still measure it as such. A source lives as
 * long as the topology is served with the same target namespace, selector, interval and naming
 * and membership settings; a change of any replaces it.
 */

interface PodSource {
  target: string;
  selector: string;
  intervalMs: number;
  /** The naming and membership settings the summaries were made with (JSON). */
  naming: string;
  reflector: Reflector<PodSummary>;
  version: number;
}

export class SelectorPodSources implements PodSources {
  private readonly sources = new Map<string, PodSource>();

  constructor(
    private readonly kube: Kube,
    private readonly opts: PodSourceOptions,
  ) {}

  /** The source topology `key` needs for `spec` in `target`: the running one, or a new one. */
  ensure(key: string, target: string, spec: ResolvedSpec): void {
    const intervalMs = pollingIntervalMs(spec);
    const settings = { ...spec.naming, membership: spec.membership };
    const naming = JSON.stringify(settings);
    const s = this.sources.get(key);
    if (
      s &&
      s.target === target &&
      s.selector === spec.selector &&
      s.intervalMs === intervalMs &&
      s.naming === naming
    )
      return;
    s?.reflector.stop();
    const reflector: Reflector<PodSummary> = new Reflector<PodSummary>({
      name: `pods ${target} ${spec.selector}`,
      ...listWatch<PodSummary>(this.kube, podsPath(target), {
        ...this.opts.listWatch,
        query: { labelSelector: spec.selector },
      }),
      resyncMs: intervalMs,
      backoffCapMs: Math.min(30_000, intervalMs),
      // Each pod is judged when it arrives and only the verdict is kept, not the pod. A poll
      // brings every pod again: one unchanged since its summary keeps that summary, so a poll
      // leaves no garbage behind in the old generation.
      transform: (o): PodSummary => {
        const m = o.metadata;
        const known = reflector.get(m.namespace, m.name);
        return known && m.resourceVersion && known.metadata.resourceVersion === m.resourceVersion
          ? known
          : summarizePod(o as unknown as PodView, settings);
      },
      onChange: () => {
        source.version++;
        this.opts.onChange(key);
      },
      onPoll: (p) => this.opts.onChange(key, p),
      onRestart: this.opts.onRestart,
    });
    const source: PodSource = { target, selector: spec.selector, intervalMs, naming, reflector, version: 0 };
    this.sources.set(key, source);
    reflector.start();
  }

  drop(key: string): void {
    this.sources.get(key)?.reflector.stop();
    this.sources.delete(key);
  }

  view(key: string): PodSourceView {
    const s = this.sources.get(key);
    return { poll: s?.reflector.lastPoll, pods: s?.reflector.items() ?? [], version: s?.version ?? 0 };
  }

  stop(): void {
    for (const s of this.sources.values()) s.reflector.stop();
    this.sources.clear();
  }
}
