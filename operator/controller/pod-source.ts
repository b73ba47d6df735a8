import type { ResolvedSpec } from '../api/validate.js';
import type { Kube } from '../kube/client.js';
import type { ListWatchOptions } from '../kube/list-watch.js';
import type { PollOutcome } from '../kube/reflector.js';
import type { PodSummary } from './pod-summary.js';

/**
 * Where each served topology's pods come from: `SharedPodSources` (shared-pod-sources.ts) is the
 * operator's — one watch per namespace feeds every topology selecting pods there; a selector the
 * operator cannot read itself gets a source of its own (selector-pod-sources.ts).
 */
export interface PodSourceOptions {
  listWatch: Omit<ListWatchOptions, 'query'>;
  /** The pods of topology `key` changed, or a poll ended (`poll`). */
  onChange: (key: string, poll?: PollOutcome) => void;
  onRestart: (why: string) => void;
  log?: (level: 'info' | 'warn', message: string, meta?: Record<string, unknown>) => void;
}

/** What a topology's source knows now; `version` moves whenever its pods change. */
export interface PodSourceView {
  poll: PollOutcome | undefined;
  pods: PodSummary[];
  version: number;
}

export interface PodSources {
  /** The source topology `key` needs for `spec` in `target`: the running one, or a new one. */
  ensure(key: string, target: string, spec: ResolvedSpec): void;
  drop(key: string): void;
  view(key: string): PodSourceView;
  stop(): void;
}

export type PodSourcesFactory = (kube: Kube, opts: PodSourceOptions) => PodSources;
