import type { ClusterTopologyStatus } from '../api/types.generated.js';
import { API_VERSION, GROUP, KIND, PLURAL, VERSION } from '../api/schema.js';
import { pollingIntervalMs, validateSpec, type ResolvedSpec } from '../api/validate.js';
import { ApiError, type Kube, type KubeObject, type ObjectList } from '../kube/client.js';
import type { Log } from '../observability/logger.js';
import type { OperatorMetrics } from '../observability/operator-metrics.js';
import { EventRecorder, type ObjectRef } from './events.js';
import { WorkQueue, type ReconcileOutcome } from './queue.js';
import { Reflector, type PollOutcome } from './reflector.js';
import {
  computeStatus,
  mergePatch,
  peerChanges,
  shouldWrite,
  summarizePod,
  type PodSummary,
  type PodView,
} from './status.js';
import { conditionOf } from './conditions.js';

/**
 * The operator's control loop. Reflectors keep three caches — ClusterTopology objects, the
 * pods each topology selects, and Node labels — and every change, and every poll of a
 * topology's pods, puts that topology's key on the work queue. Reconciling a key computes the
 * status from the caches (`status.ts`, a pure function) and patches `/status` when it differs
 * from what was written (or the lastPollTime heartbeat is due).
 */

export interface ControllerConfig {
  /** Namespaces whose ClusterTopology objects are served; empty: all namespaces. */
  namespaces: string[];
  /** Namespaces a topology may select pods in besides its own; "*" allows any. */
  allowTargetNamespaces: string[];
  concurrency: number;
  /** Watch Node objects for failure-domain labels. */
  watchNodes: boolean;
}

interface Topology extends KubeObject {
  spec?: unknown;
  status?: ClusterTopologyStatus;
}

interface PodSource {
  target: string;
  selector: string;
  intervalMs: number;
  /** The naming settings the cached summaries were made with (JSON): a change re-lists. */
  naming: string;
  reflector: Reflector<PodSummary>;
}

interface Runtime {
  namespace: string;
  name: string;
  source?: PodSource;
  written?: ClusterTopologyStatus;
}

type NodeView = KubeObject & { metadata: { labels?: Record<string, string> } };

const WATCH_TIMEOUT_S = 290; // ends each watch server-side before load balancers cut it (kube-rs' choice)
const PAGE = 500;

export class TopologyController {
  private readonly topologySources: Reflector<Topology>[] = [];
  private nodes: Reflector<NodeView> | undefined;
  private readonly runtimes = new Map<string, Runtime>();
  private readonly queue: WorkQueue;
  private readonly events: EventRecorder;
  private running = false;

  constructor(
    private readonly kube: Kube,
    private readonly config: ControllerConfig,
    private readonly metrics: OperatorMetrics,
    private readonly log: Log,
  ) {
    this.queue = new WorkQueue({
      concurrency: config.concurrency,
      reconcile: (key) => this.reconcileTimed(key),
      onError: (key, e) =>
        this.log('warn', 'reconcile failed; retrying with backoff', { key, error: (e as Error).message }),
    });
    this.events = new EventRecorder(kube, 'cluster-topology-operator', log);
  }

  start(): void {
    this.running = true;
    const paths = this.config.namespaces.length
      ? this.config.namespaces.map(
          (ns) => `/apis/${GROUP}/${VERSION}/namespaces/${encodeURIComponent(ns)}/${PLURAL}`,
        )
      : [`/apis/${GROUP}/${VERSION}/${PLURAL}`];
    for (const path of paths) {
      const r: Reflector<Topology> = new Reflector<Topology>({
        name: `clustertopologies ${path}`,
        ...this.listWatch<Topology>(path, {}),
        resyncMs: 5 * 60_000,
        // A topology's status is read only until this process has written one (then `written`
        // is the previous status): at thousands of peers it is megabytes of objects per copy.
        transform: (o) => {
          const t = o as Topology;
          const rt = this.runtimes.get(`${t.metadata.namespace}/${t.metadata.name}`);
          if (!rt?.written) return t;
          const { status: _status, ...rest } = t;
          return rest as Topology;
        },
        // One object changed (our own status writes too): only its key. A re-list: all of them.
        onChange: (key) =>
          key === undefined ? this.enqueueTopologies() : this.running && this.queue.add(key),
        onRestart: (why) => this.metrics.watchRestarts.inc({ resource: 'clustertopologies', why }),
        onPoll: (p) =>
          !p.ok &&
          this.log('warn', 'listing ClusterTopology objects failed', {
            path,
            error: p.failure.message,
            code: p.failure.code,
          }),
      });
      this.topologySources.push(r);
      r.start();
    }
    if (this.config.watchNodes) {
      this.nodes = new Reflector<NodeView>({
        name: 'nodes',
        ...this.listWatch('/api/v1/nodes', {}),
        resyncMs: 5 * 60_000,
        // Only the labels are needed: a Node's status (images, conditions) is most of its size.
        transform: (o) => ({
          metadata: {
            name: o.metadata.name,
            resourceVersion: o.metadata.resourceVersion,
            labels: (o.metadata.labels ?? {}) as Record<string, string>,
          },
        }),
        onChange: () => this.enqueueAll(),
        onRestart: (why) => this.metrics.watchRestarts.inc({ resource: 'nodes', why }),
        onPoll: (p) =>
          !p.ok &&
          this.log('warn', 'listing Nodes failed; failure domains will be unknown', {
            error: p.failure.message,
            code: p.failure.code,
          }),
      });
      this.nodes.start();
    }
  }

  /** Stops at once: no reconcile starts after this; watches are closed. */
  stop(): void {
    this.running = false;
    this.queue.shutdown();
    for (const r of this.topologySources) r.stop();
    this.nodes?.stop();
    for (const rt of this.runtimes.values()) rt.source?.reflector.stop();
    this.runtimes.clear();
  }

  /** Resolves once nothing is queued or being reconciled. */
  idle(): Promise<void> {
    return this.queue.idle();
  }

  notReady(): string[] {
    const problems: string[] = [];
    const now = Date.now();
    for (const r of [...this.topologySources, ...(this.nodes ? [this.nodes] : [])]) {
      if (!r.synced)
        problems.push(`${(r as unknown as { opts: { name: string } }).opts.name}: not listed yet`);
      else if (r.downSince !== undefined && now - r.downSince > 60_000)
        problems.push(
          `${(r as unknown as { opts: { name: string } }).opts.name}: watch down for ${Math.round((now - r.downSince) / 1000)}s`,
        );
    }
    return problems;
  }

  private listWatch<T extends KubeObject>(path: string, query: Record<string, string>) {
    return {
      list: (keep: (o: KubeObject) => T) => this.listAll(path, query, keep),
      watch: (
        rv: string,
        onEvent: Parameters<Kube['watch']>[2],
        onDone: Parameters<Kube['watch']>[3],
        idleMs: number,
      ) => {
        // Up from the start of a watch until it ends or is aborted, counted once either way.
        this.metrics.watchesUp.inc();
        let counted = true;
        const down = () => {
          if (counted) this.metrics.watchesUp.dec();
          counted = false;
        };
        return this.kube
          .watch(
            path,
            { ...query, resourceVersion: rv, allowWatchBookmarks: true, timeoutSeconds: WATCH_TIMEOUT_S },
            onEvent,
            (err) => {
              down();
              onDone(err);
            },
            idleMs,
          )
          .then(
            (handle) => ({
              abort: () => {
                down();
                handle.abort();
              },
            }),
            (e: unknown) => {
              down();
              throw e;
            },
          );
      },
    };
  }

  private async listAll<T>(
    path: string,
    query: Record<string, string>,
    keep: (o: KubeObject) => T,
  ): Promise<ObjectList<T>> {
    const items: T[] = [];
    let cont: string | undefined;
    let rv: string;
    do {
      const page = await this.kube.list(path, { ...query, limit: PAGE, continue: cont }, keep);
      for (const item of page.items) items.push(item);
      rv = page.metadata.resourceVersion;
      cont = page.metadata.continue || undefined;
    } while (cont);
    return { items, metadata: { resourceVersion: rv } };
  }

  private topologies(): Topology[] {
    return this.topologySources.flatMap((r) => r.items());
  }

  private findTopology(ns: string, name: string): Topology | undefined {
    for (const r of this.topologySources) {
      const t = r.get(ns, name);
      if (t) return t;
    }
    return undefined;
  }

  private enqueueTopologies(): void {
    if (!this.running) return;
    const keys = new Set(this.topologies().map((t) => `${t.metadata.namespace}/${t.metadata.name}`));
    for (const k of this.runtimes.keys()) keys.add(k); // a deleted topology is reconciled once more, to clean up
    for (const k of keys) this.queue.add(k);
  }

  private enqueueAll(): void {
    if (!this.running) return;
    for (const k of this.runtimes.keys()) this.queue.add(k);
  }

  private async reconcileTimed(key: string): Promise<ReconcileOutcome> {
    const end = this.metrics.reconcileSeconds.startTimer();
    try {
      const outcome = await this.reconcile(key);
      this.metrics.reconciles.inc({ result: outcome.kind === 'Error' ? 'error' : 'ok' });
      return outcome;
    } catch (error) {
      this.metrics.reconciles.inc({ result: 'error' });
      return { kind: 'Error', error };
    } finally {
      end();
    }
  }

  private allowedTarget(own: string, target: string): boolean {
    return (
      target === own ||
      this.config.allowTargetNamespaces.includes('*') ||
      this.config.allowTargetNamespaces.includes(target)
    );
  }

  private ensureSource(rt: Runtime, key: string, target: string, spec: ResolvedSpec): PodSource {
    const intervalMs = pollingIntervalMs(spec);
    const naming = JSON.stringify(spec.naming);
    const s = rt.source;
    if (
      s &&
      s.target === target &&
      s.selector === spec.selector &&
      s.intervalMs === intervalMs &&
      s.naming === naming
    )
      return s;
    s?.reflector.stop();
    const path = `/api/v1/namespaces/${encodeURIComponent(target)}/pods`;
    const settings = { ...spec.naming };
    const reflector = new Reflector<PodSummary>({
      name: `pods ${target} ${spec.selector}`,
      ...this.listWatch<PodSummary>(path, { labelSelector: spec.selector }),
      resyncMs: intervalMs,
      backoffCapMs: Math.min(30_000, intervalMs),
      // Each pod is judged when it arrives and only the verdict is kept, not the pod. A poll
      // brings every pod again: one unchanged since its summary keeps that summary, so a poll
      // leaves no garbage behind in the old generation.
      transform: (o): PodSummary => {
        const m = o.metadata;
        const known: PodSummary | undefined = reflector.get(m.namespace, m.name);
        return known && m.resourceVersion && known.metadata.resourceVersion === m.resourceVersion
          ? known
          : summarizePod(o as unknown as PodView, settings);
      },
      onChange: () => this.running && this.queue.add(key),
      onPoll: (p: PollOutcome) => {
        if (p.ok)
          this.metrics.lastSuccessfulPoll.set(
            { namespace: rt.namespace, name: rt.name },
            p.at.getTime() / 1000,
          );
        if (this.running) this.queue.add(key);
      },
      onRestart: (why) => this.metrics.watchRestarts.inc({ resource: 'pods', why }),
    });
    rt.source = { target, selector: spec.selector, intervalMs, naming, reflector };
    reflector.start();
    return rt.source;
  }

  private dropSource(rt: Runtime): void {
    rt.source?.reflector.stop();
    rt.source = undefined;
  }

  private async reconcile(key: string): Promise<ReconcileOutcome> {
    if (!this.running) return { kind: 'Done' };
    const slash = key.indexOf('/');
    const [ns, name] = [key.slice(0, slash), key.slice(slash + 1)];
    const topo = this.findTopology(ns, name);
    let rt = this.runtimes.get(key);
    if (!topo) {
      if (rt) {
        this.dropSource(rt);
        this.runtimes.delete(key);
        this.metrics.peers.remove({ namespace: ns, name });
        this.metrics.excluded.remove({ namespace: ns, name });
        this.metrics.lastSuccessfulPoll.remove({ namespace: ns, name });
      }
      return { kind: 'Done' };
    }
    if (!rt) {
      rt = { namespace: ns, name };
      this.runtimes.set(key, rt);
    }
    const now = new Date();
    const check = validateSpec(topo.spec);
    let refusal: { reason: string; message: string } | undefined;
    let spec: ResolvedSpec | undefined;
    if (!check.ok) refusal = { reason: 'InvalidSpec', message: check.problems.join('; ') };
    else {
      spec = check.spec;
      const target = spec.namespace ?? ns;
      if (!this.allowedTarget(ns, target))
        refusal = {
          reason: 'CrossNamespaceDenied',
          message: `spec.namespace "${target}" is not this topology's own namespace "${ns}", and the operator is not configured to allow it (--allow-target-namespaces). Publishing another namespace's pods would show them to whoever may read this object.`,
        };
      else this.ensureSource(rt, key, target, spec);
    }
    if (refusal) this.dropSource(rt);

    const reflector = rt.source?.reflector;
    const lastPoll = reflector?.lastPoll;
    const previous = rt.written ?? topo.status;
    const next = computeStatus({
      generation: topo.metadata.generation ?? 0,
      previous,
      now,
      spec,
      namespace: spec?.namespace ?? ns,
      refusal,
      poll: lastPoll,
      pods: reflector?.items() ?? [],
      nodeLabels: (node) => this.nodes?.get(undefined, node)?.metadata.labels,
    });
    if (!shouldWrite(previous, next, now)) return { kind: 'Done' };
    const patch = mergePatch(previous ?? {}, next);
    // Field names only: serializing a patch of thousands of peers for a debug line costs as much as the write.
    this.log('debug', 'writing status', { key, fields: Object.keys(patch as object) });
    try {
      await this.kube.request(
        'PATCH',
        `/apis/${GROUP}/${VERSION}/namespaces/${encodeURIComponent(ns)}/${PLURAL}/${encodeURIComponent(name)}/status`,
        {
          body: { status: patch },
          contentType: 'application/merge-patch+json',
          ignoreBody: true,
        },
      );
      this.metrics.statusWrites.inc({ result: 'ok' });
    } catch (e) {
      this.metrics.statusWrites.inc({ result: 'error' });
      if (e instanceof ApiError && e.code === 404) return { kind: 'Done' }; // deleted meanwhile
      throw e;
    }
    rt.written = next;
    this.metrics.peers.set({ namespace: ns, name }, next.peerCount ?? 0);
    this.metrics.excluded.set({ namespace: ns, name }, next.excludedCount ?? 0);
    this.announce(
      { apiVersion: API_VERSION, kind: KIND, namespace: ns, name, uid: topo.metadata.uid },
      previous,
      next,
    );
    return { kind: 'Done' };
  }

  /** Events for what a person would want to hear about: peers joining/leaving, failures, recovery, quorum. */
  private announce(
    ref: ObjectRef,
    before: ClusterTopologyStatus | undefined,
    after: ClusterTopologyStatus,
  ): void {
    const { joined, left } = peerChanges(before?.peers, after.peers ?? []);
    if (joined.length || left.length) {
      const parts = [
        joined.length
          ? `joined: ${joined.slice(0, 10).join(', ')}${joined.length > 10 ? ` (+${joined.length - 10})` : ''}`
          : '',
        left.length
          ? `left: ${left.slice(0, 10).join(', ')}${left.length > 10 ? ` (+${left.length - 10})` : ''}`
          : '',
      ];
      this.events.record(
        ref,
        'Normal',
        'PeersChanged',
        `${after.peerCount} peers; ${parts.filter(Boolean).join('; ')}`,
      );
    }
    const degradedBefore = conditionOf(before?.conditions, 'Degraded');
    const degradedAfter = conditionOf(after.conditions, 'Degraded');
    if (
      degradedAfter?.status === 'True' &&
      (degradedBefore?.status !== 'True' || before?.lastResponse?.code !== after.lastResponse?.code)
    )
      this.events.record(ref, 'Warning', degradedAfter.reason, degradedAfter.message);
    else if (degradedAfter?.status === 'False' && degradedBefore?.status === 'True')
      this.events.record(ref, 'Normal', 'Recovered', 'Listing pods succeeds again.');
    const readyAfter = conditionOf(after.conditions, 'Ready');
    if (
      readyAfter?.status === 'False' &&
      ['CrossNamespaceDenied', 'InvalidSpec'].includes(readyAfter.reason) &&
      conditionOf(before?.conditions, 'Ready')?.reason !== readyAfter.reason
    )
      this.events.record(ref, 'Warning', readyAfter.reason, readyAfter.message);
    const verdictBefore = before?.failureDomains?.verdict;
    const verdictAfter = after.failureDomains?.verdict;
    if (verdictAfter && verdictBefore !== verdictAfter) {
      const q = conditionOf(after.conditions, 'QuorumAtRisk');
      this.events.record(
        ref,
        verdictAfter === 'Survives' || verdictAfter === 'Off' ? 'Normal' : 'Warning',
        'QuorumVerdictChanged',
        `${verdictBefore ?? 'none'} → ${verdictAfter}. ${q?.message ?? ''}`,
      );
    }
  }
}
