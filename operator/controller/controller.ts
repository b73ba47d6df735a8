import type { ClusterTopologyStatus } from '../api/types.generated.js';
import { ApiError, type Kube } from '../kube/client.js';
import { EventRecorder } from '../kube/event-recorder.js';
import type { ListWatchOptions } from '../kube/list-watch.js';
import { WorkQueue, type ReconcileOutcome } from '../kube/work-queue.js';
import type { Log } from '../observability/logger.js';
import type { OperatorMetrics } from '../observability/operator-metrics.js';
import { admit, type Admission } from './admission.js';
import { StatusApplier, type StatusPatchStyle } from './apply.js';
import { NodeCache } from './node-cache.js';
import { planReconcile, type ReconcilePlan } from './plan.js';
import type { PodSources, PodSourcesFactory, PodSourceView } from './pod-source.js';
import { SharedPodSources } from './shared-pod-sources.js';
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
  /** How the work is done; the defaults are the operator's design (bench/ injects former ones to compare). */
  parts?: ControllerParts;
}

export interface ControllerParts {
  /** Where each topology's pods come from (default: one watch per namespace, shared). */
  podSources?: PodSourcesFactory;
  /**
   * A topology's status is written at most once per this window: the first change after a quiet
   * window goes out at once, the changes that follow it within the window go out together at its
   * end (a rolling update or a node drain is a few writes, not one per pod).
   */
  writeWindowMs?: number;
  /** How a status write is sent (default: a JSON Patch of what changed; see apply.ts). */
  statusPatch?: StatusPatchStyle;
  /** Above this many peers each carries the reader fields only (default LIGHT_PEERS_ABOVE). */
  lightPeersAbove?: number;
}

/** The window of ControllerParts.writeWindowMs (docs/operator.md). */
export const WRITE_WINDOW_MS = 250;

/**
 * A topology without a status is told `Listing` only when its first list has not answered within
 * this (docs/operator.md): a first list that answers sooner is one status write, not two — at an
 * operator's start with many topologies, half the writes.
 */
export const LISTING_GRACE_MS = 10_000;

/**
 * What this process knows of a topology it serves: the status it last wrote, and one it planned
 * since but could not write (its outcome — a TransportError while the API server was down — is
 * published with the next write).
 */
interface Served {
  /** When this process began to serve it (ms since the epoch). */
  since: number;
  written?: ClusterTopologyStatus;
  /**
   * statusDigest(written), once asked for (writtenDigestOf): the object holds what this process
   * wrote while its digest is this.
   */
  writtenDigest?: string;
  /** The resourceVersion the last write left the object at, if that write was exact (AppliedStatus). */
  exactAt?: string;
  unwritten?: ClusterTopologyStatus;
  /** When the last status write began (ms since the epoch), and how many this process made. */
  writtenAt?: number;
  writes?: number;
  /**
   * What the last computed status was computed from, when nothing was written: a poll that
   * brings nothing new (same pods, Nodes, topology and answer) is not computed again.
   */
  inputs?: string;
}

/** What the object's status holds (undefined: no status), and at which resourceVersion it was seen. */
interface Observed {
  status: ClusterTopologyStatus | undefined;
  resourceVersion: string | undefined;
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
  private readonly writeWindowMs: number;
  /** Per topology, how many looks the mesh scheduler asked for: part of a status's inputs. */
  private readonly meshLooks = new Map<string, number>();

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
      config.parts?.statusPatch,
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
      listWatch: this.listWatchOptions(resource),
      onRestart: (why: string) => metrics.watchRestarts.inc({ resource, why }),
    });
    this.topologies = new TopologyCache(kube, {
      ...watch('clustertopologies'),
      namespaces: config.namespaces,
      statusWritten: (key) => {
        const served = this.served.get(key);
        return served?.written ? { exactAt: served.exactAt } : undefined;
      },
      onChange: (key) => (key === undefined ? this.enqueueTopologies() : this.enqueue(key)),
      log,
    });
    // A look the mesh asks for counts as a new input (a held change, a report going stale).
    this.mesh = new MeshScheduler((key) => {
      this.meshLooks.set(key, (this.meshLooks.get(key) ?? 0) + 1);
      this.enqueue(key);
    });
    this.reports = new MemberReportCache(kube, {
      ...watch('clustertopologymembers'),
      namespaces: config.namespaces,
      onChange: (key) => this.mesh.reportsChanged(key),
      log,
    });
    this.nodes = config.watchNodes
      ? new NodeCache(kube, { ...watch('nodes'), onChange: () => this.enqueueServed(), log })
      : undefined;
    this.writeWindowMs = config.parts?.writeWindowMs ?? WRITE_WINDOW_MS;
    this.pods = (config.parts?.podSources ?? ((k, o) => new SharedPodSources(k, o)))(kube, {
      ...watch('pods'),
      log,
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

  private listWatchOptions(resource: string): Omit<ListWatchOptions, 'query'> {
    return {
      ...(this.config.watchTimeoutSeconds ? { watchTimeoutSeconds: this.config.watchTimeoutSeconds } : {}),
      // Up from the start of a watch until it ends or is aborted.
      onWatchOpen: () => this.metrics.watchesUp.inc({ resource }),
      onWatchClose: () => this.metrics.watchesUp.dec({ resource }),
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
    // Every topology's pods are asked for at once, before any is reconciled: the topologies of a
    // namespace then share that namespace's first list instead of each listing its pods again.
    for (const k of keys) this.admitted(k);
    for (const k of this.served.keys()) keys.add(k); // a deleted topology is reconciled once more, to clean up
    for (const k of keys) this.queue.add(k);
  }

  /** Whether topology `key` (as cached) is served, with its pod source kept to match. */
  private admitted(key: string): { topology: TopologyObject; admission: Admission } | undefined {
    const slash = key.indexOf('/');
    const namespace = key.slice(0, slash);
    const topology = this.topologies.find(namespace, key.slice(slash + 1));
    if (!topology) return undefined;
    const admission = admit(topology.spec, namespace, this.config.allowTargetNamespaces);
    if (admission.ok) this.pods.ensure(key, admission.target, admission.spec);
    else this.pods.drop(key);
    return { topology, admission };
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
   * last write yet), and it is read afresh. With it, the resourceVersion at which the object held
   * it: a JSON Patch from it carries it as its precondition. Undefined: the topology is gone.
   */
  private async observedStatus(topology: CachedTopology, served: Served): Promise<Observed | undefined> {
    const { resourceVersion } = topology.metadata;
    if (!served.written) return { status: topology.status, resourceVersion };
    if (resourceVersion && resourceVersion === served.exactAt)
      return { status: served.written, resourceVersion };
    const cached = topology.statusDigest ?? statusDigest(topology.status);
    if (cached === writtenDigestOf(served)) return { status: served.written, resourceVersion };
    const { namespace = '', name } = topology.metadata;
    this.log('debug', 'reading the status again: the cache holds another than the one written', {
      key: `${namespace}/${name}`,
    });
    try {
      // The object (get is the operator's; get on the status subresource is not).
      const fresh = await this.kube.request<TopologyObject>('GET', topologyPath(namespace, name));
      if (statusDigest(fresh.status) !== writtenDigestOf(served))
        this.log('info', 'the status holds what this operator did not write; it is written again', {
          key: `${namespace}/${name}`,
        });
      return { status: fresh.status, resourceVersion: fresh.metadata.resourceVersion };
    } catch (e) {
      if (e instanceof ApiError && e.code === 404) return undefined;
      throw e;
    }
  }

  private async reconcile(key: string): Promise<ReconcileOutcome> {
    if (!this.running) return { kind: 'Done' };
    const slash = key.indexOf('/');
    const [namespace, name] = [key.slice(0, slash), key.slice(slash + 1)];
    const found = this.admitted(key);
    if (!found) {
      if (this.served.delete(key)) {
        this.pods.drop(key);
        this.applier.forget({ namespace, name });
        this.liveness.forget(namespace, name);
        this.mesh.forget(key);
        this.meshLooks.delete(key);
      }
      return { kind: 'Done' };
    }
    const { topology, admission } = found;
    let served = this.served.get(key);
    if (!served) this.served.set(key, (served = { since: Date.now() }));
    const source = this.pods.view(key);
    // Nothing is published before the Nodes have answered once (NodeCache.settled says why).
    if (this.nodes && !this.nodes.settled) return { kind: 'Done' };
    const listing = served.since + LISTING_GRACE_MS - Date.now();
    if (admission.ok && !source.poll && !served.written && !topology.status && listing > 0)
      return { kind: 'RequeueAfter', ms: listing };
    // At most one write per window: within it, everything waits for its end (nothing is computed).
    const wait = (served.writtenAt ?? -Infinity) + this.writeWindowMs - Date.now();
    if (wait > 0) return { kind: 'RequeueAfter', ms: wait };
    const nodesVersion = this.nodes?.version ?? 0;
    const meshLooks = this.meshLooks.get(key) ?? 0;
    const inputsAt = (resourceVersion: string | undefined) =>
      inputsOf(resourceVersion, admission.ok, source, nodesVersion, served.writes ?? 0, meshLooks);
    const inputs = served.unwritten ? undefined : inputsAt(topology.metadata.resourceVersion);
    if (inputs === undefined || inputs !== served.inputs) {
      const observed = await this.observedStatus(topology, served);
      if (!observed) return { kind: 'Done' }; // deleted meanwhile
      const plan = this.plan(key, topology, admission, source, served, observed);
      const write = plan.write;
      if (write) {
        served.unwritten = write.status; // until the write succeeds
        served.writtenAt = Date.now();
        served.inputs = undefined;
        // The patch starts from what the object held at this resourceVersion: the API server
        // refuses it (409) if the object moved since, and the applier sends a merge patch instead.
        const applied = await this.applier.apply(
          { namespace, name, uid: topology.metadata.uid },
          write,
          observed.resourceVersion,
        );
        if (applied === undefined) return { kind: 'Done' }; // deleted meanwhile
        served.written = write.status;
        served.writtenDigest = undefined;
        served.writes = (served.writes ?? 0) + 1;
        const exact = applied.exact && applied.resourceVersion !== '';
        served.exactAt = exact ? applied.resourceVersion : undefined;
        // The write's own event brings nothing new: the status planned from the same inputs at the
        // resourceVersion it left is the one written (at 5,000 peers a plan is ~20 ms). Only when
        // the plan's topology is the one written over: a status read afresh may sit on a newer
        // spec than the cache's, and a re-list could skip straight past it to this write.
        if (exact && observed.resourceVersion === topology.metadata.resourceVersion)
          served.inputs = inputsAt(applied.resourceVersion);
        if (plan.meshChanged) this.mesh.written(key);
      } else served.inputs = inputs;
      if (plan.meshRecheckAt !== undefined) this.mesh.at(key, plan.meshRecheckAt);
    }
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

  private plan(
    key: string,
    topology: TopologyObject,
    admission: Admission,
    source: PodSourceView,
    served: Served,
    observed: Observed,
  ): ReconcilePlan {
    const [namespace, name] = [key.slice(0, key.indexOf('/')), key.slice(key.indexOf('/') + 1)];
    return planReconcile({
      generation: topology.metadata.generation ?? 0,
      namespace,
      previous: served.written ?? topology.status,
      observed: { status: observed.status },
      ...(served.unwritten ? { unwritten: served.unwritten } : {}),
      admission,
      poll: source.poll,
      pods: source.pods,
      nodeLabels: (node) => this.nodes?.labels(node),
      now: new Date(),
      ...(this.config.parts?.lightPeersAbove !== undefined
        ? { lightPeersAbove: this.config.parts.lightPeersAbove }
        : {}),
      mesh: {
        topology: name,
        reports: this.reports.reports(namespace, name),
        lastMeshWriteAt: this.mesh.lastWriteAt(key),
      },
    });
  }
}

/**
 * The inputs of a status, as one string: the topology as last seen (its resourceVersion moves
 * with every change, our own status writes too), whether it is admitted, its pods (their
 * version), the Nodes (theirs), the poll's answer (not its time: lastPollTime is not content),
 * the status this process wrote last and the looks the mesh asked for.
 */
function inputsOf(
  resourceVersion: string | undefined,
  admitted: boolean,
  source: PodSourceView,
  nodesVersion: number,
  writes: number,
  meshLooks: number,
): string {
  const p = source.poll;
  const answer = p === undefined ? '-' : p.ok ? '200' : JSON.stringify(p.failure);
  return `${resourceVersion}|${admitted}|${source.version}|${nodesVersion}|${answer}|${writes}|${meshLooks}`;
}

/** statusDigest(served.written), computed once and only when asked. */
function writtenDigestOf(served: Served): string {
  return (served.writtenDigest ??= statusDigest(served.written));
}
