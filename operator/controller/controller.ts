import type { ClusterTopologyStatus } from '../api/types.generated.js';
import { ApiError, type Kube } from '../kube/client.js';
import { EventRecorder } from '../kube/event-recorder.js';
import type { ListWatchOptions } from '../kube/list-watch.js';
import { WorkQueue, type ReconcileOutcome } from '../kube/work-queue.js';
import type { Log } from '../observability/logger.js';
import type { OperatorMetrics } from '../observability/operator-metrics.js';
import { admit } from './admission.js';
import { StatusApplier } from './apply.js';
import { NodeCache } from './node-cache.js';
import { planReconcile } from './plan.js';
import { PodSources } from './pod-sources.js';
import { notReady } from './readiness.js';
import { TopologyCache, type CachedTopology } from './topology-cache.js';
import type { TopologyObject } from '../protocol/read.js';
import { topologyPath } from '../kube/paths.js';
import { statusDigest } from '../protocol/publish.js';
import { pollingIntervalMs } from '../api/validate.js';
import { LivenessWriter } from '../protocol/liveness-writer.js';
import { MemberReportCache } from './member-reports.js';
import { MeshScheduler } from './mesh-scheduler.js';

/**
 * The operator's control loop, wired together. Caches (`topology-cache.ts`, `node-cache.ts`,
 * `pod-sources.ts`) put a topology's key on the work queue when something it depends on
 * changes or its pods are polled. Reconciling a key admits the topology (`admission.ts`),
 * keeps its pod source, plans the status (`plan.ts`, pure) and has the applier write it
 * (`apply.ts`) — only when its content changes; a successful poll renews the topology's
 * liveness Lease instead (docs/status-protocol.md, `protocol/liveness-writer.ts`). The members'
 * reports (`member-reports.ts`) go into `status.mesh`, at most once per 15 s (`mesh-scheduler.ts`).
 */

export interface ControllerConfig {
  /** Namespaces whose ClusterTopology objects are served; empty: all namespaces. */
  namespaces: string[];
  /** Namespaces a topology may select pods in besides its own; "*" allows any. */
  allowTargetNamespaces: string[];
  concurrency: number;
  /** Watch Node objects for failure-domain labels. */
  watchNodes: boolean;
  /** How long the server keeps one watch open (default 290 s). */
  watchTimeoutSeconds?: number;
  /** Who renews the liveness Leases (the operator's identity). */
  holder?: string;
}

/**
 * What this process knows of a topology it serves: the status it last wrote, and one it planned
 * since but could not write (its outcome — a TransportError while the API server was down — is
 * published with the next write).
 */
interface Served {
  written?: ClusterTopologyStatus;
  /** statusDigest(written): the object holds what this process wrote while its digest is this. */
  writtenDigest?: string;
  unwritten?: ClusterTopologyStatus;
}

export class TopologyController {
  private readonly topologies: TopologyCache;
  private readonly nodes: NodeCache | undefined;
  private readonly pods: PodSources;
  private readonly served = new Map<string, Served>();
  private readonly queue: WorkQueue;
  private readonly applier: StatusApplier;
  private readonly liveness: LivenessWriter;
  private readonly reports: MemberReportCache;
  private readonly mesh: MeshScheduler;
  private livenessFailing = false;
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
    this.applier = new StatusApplier(
      kube,
      new EventRecorder(kube, 'cluster-topology-operator', log),
      metrics,
      log,
    );
    this.liveness = new LivenessWriter(kube, {
      holder: config.holder ?? 'cluster-topology-operator',
      onResult: (result, error) => {
        // One line per change: a Lease that cannot be written fails on every poll.
        if ((result === 'error') === this.livenessFailing) return;
        this.livenessFailing = result === 'error';
        if (this.livenessFailing)
          this.log('warn', 'cannot renew a liveness Lease; readers will see liveness stale or unknown', {
            error: (error as Error).message,
          });
        else this.log('info', 'liveness Leases renewed again');
      },
    });
    const watch = (resource: string) => ({
      listWatch: this.listWatchOptions(),
      onRestart: (why: string) => metrics.watchRestarts.inc({ resource, why }),
    });
    this.topologies = new TopologyCache(kube, {
      ...watch('clustertopologies'),
      namespaces: config.namespaces,
      statusKnown: (key) => this.served.get(key)?.written !== undefined,
      onChange: (key) => (key === undefined ? this.enqueueTopologies() : this.enqueue(key)),
      log,
    });
    this.mesh = new MeshScheduler((key) => this.enqueue(key));
    this.reports = new MemberReportCache(kube, {
      ...watch('clustertopologymembers'),
      namespaces: config.namespaces,
      onChange: (key) => this.mesh.reportsChanged(key),
      log,
    });
    this.nodes = config.watchNodes
      ? new NodeCache(kube, { ...watch('nodes'), onChange: () => this.enqueueServed(), log })
      : undefined;
    this.pods = new PodSources(kube, {
      ...watch('pods'),
      onChange: (key, poll) => {
        if (poll?.ok) {
          const slash = key.indexOf('/');
          metrics.lastSuccessfulPoll.set(
            { namespace: key.slice(0, slash), name: key.slice(slash + 1) },
            poll.at.getTime() / 1000,
          );
        }
        this.enqueue(key);
      },
    });
  }

  private listWatchOptions(): Omit<ListWatchOptions, 'query'> {
    return {
      ...(this.config.watchTimeoutSeconds ? { watchTimeoutSeconds: this.config.watchTimeoutSeconds } : {}),
      // Up from the start of a watch until it ends or is aborted.
      onWatchOpen: () => this.metrics.watchesUp.inc(),
      onWatchClose: () => this.metrics.watchesUp.dec(),
    };
  }

  start(): void {
    this.running = true;
    this.topologies.start();
    this.reports.start();
    this.nodes?.start();
  }

  /** Stops at once: no reconcile starts after this; watches are closed. */
  stop(): void {
    this.running = false;
    this.queue.shutdown();
    this.topologies.stop();
    this.reports.stop();
    this.mesh.stop();
    this.nodes?.stop();
    this.pods.stop();
    this.served.clear();
  }

  notReady(): string[] {
    return notReady(
      [...this.topologies.reflectors, ...(this.nodes ? [this.nodes.reflector] : [])],
      Date.now(),
    );
  }

  private enqueue(key: string): void {
    if (this.running) this.queue.add(key);
  }

  private enqueueTopologies(): void {
    if (!this.running) return;
    const keys = new Set(this.topologies.keys());
    for (const k of this.served.keys()) keys.add(k); // a deleted topology is reconciled once more, to clean up
    for (const k of keys) this.queue.add(k);
  }

  private enqueueServed(): void {
    if (!this.running) return;
    for (const k of this.served.keys()) this.queue.add(k);
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

  /**
   * What the object's status holds now, for the write decision: the cache's copy until this
   * process has written it; then its own write, as long as the cache's digest says the object
   * holds it. Otherwise someone else wrote the status (or the cache has not seen this process's
   * last write yet), and it is read afresh. Undefined: the topology is gone.
   */
  private async observedStatus(
    topology: CachedTopology,
    served: Served,
  ): Promise<{ status: ClusterTopologyStatus | undefined } | undefined> {
    if (!served.written) return { status: topology.status };
    const cached = topology.statusDigest ?? statusDigest(topology.status);
    if (cached === served.writtenDigest) return { status: served.written };
    const { namespace = '', name } = topology.metadata;
    this.log('debug', 'reading the status again: the cache holds another than the one written', {
      key: `${namespace}/${name}`,
    });
    try {
      // The object (get is the operator's; get on the status subresource is not).
      const fresh = await this.kube.request<TopologyObject>('GET', topologyPath(namespace, name));
      if (statusDigest(fresh.status) !== served.writtenDigest)
        this.log('info', 'the status holds what this operator did not write; it is written again', {
          key: `${namespace}/${name}`,
        });
      return { status: fresh.status };
    } catch (e) {
      if (e instanceof ApiError && e.code === 404) return undefined;
      throw e;
    }
  }

  private async reconcile(key: string): Promise<ReconcileOutcome> {
    if (!this.running) return { kind: 'Done' };
    const slash = key.indexOf('/');
    const [namespace, name] = [key.slice(0, slash), key.slice(slash + 1)];
    const topology = this.topologies.find(namespace, name);
    if (!topology) {
      if (this.served.delete(key)) {
        this.pods.drop(key);
        this.applier.forget({ namespace, name });
        this.liveness.forget(namespace, name);
        this.mesh.forget(key);
      }
      return { kind: 'Done' };
    }
    let served = this.served.get(key);
    if (!served) this.served.set(key, (served = {}));

    const admission = admit(topology.spec, namespace, this.config.allowTargetNamespaces);
    if (admission.ok) this.pods.ensure(key, admission.target, admission.spec);
    else this.pods.drop(key);
    const source = this.pods.view(key);
    // Nothing is published before the Nodes have answered once (NodeCache.settled says why).
    if (this.nodes && !this.nodes.settled) return { kind: 'Done' };
    const observed = await this.observedStatus(topology, served);
    if (!observed) return { kind: 'Done' }; // deleted meanwhile
    const plan = planReconcile({
      generation: topology.metadata.generation ?? 0,
      namespace,
      previous: served.written ?? topology.status,
      observed,
      ...(served.unwritten ? { unwritten: served.unwritten } : {}),
      admission,
      poll: source.poll,
      pods: source.pods,
      nodeLabels: (node) => this.nodes?.labels(node),
      now: new Date(),
      mesh: {
        topology: name,
        reports: this.reports.reports(namespace, name),
        lastMeshWriteAt: this.mesh.lastWriteAt(key),
      },
    });
    if (plan.write) {
      served.unwritten = plan.write.status; // until the write succeeds
      if (!(await this.applier.apply({ namespace, name, uid: topology.metadata.uid }, plan.write)))
        return { kind: 'Done' }; // deleted meanwhile
      served.written = plan.write.status;
      served.writtenDigest = statusDigest(plan.write.status);
      if (plan.meshChanged) this.mesh.written(key);
    }
    if (plan.meshRecheckAt !== undefined) this.mesh.at(key, plan.meshRecheckAt);
    served.unwritten = undefined;
    // The status is current: the Lease may say so (renewed after a successful poll only).
    const poll = source.poll;
    if (poll && admission.spec && topology.metadata.uid)
      await this.liveness.polled(
        { namespace, name, uid: topology.metadata.uid },
        poll.ok && admission.ok,
        poll.at,
        pollingIntervalMs(admission.spec),
      );
    return { kind: 'Done' };
  }
}
