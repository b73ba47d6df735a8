import { type LabelSelector, matchesSelector } from '../api/label-selector.js';
import { isRecord } from '../api/json.js';
import { Backoff, DEFAULT_BACKOFF } from '../kube/backoff.js';
import type { Kube, KubeObject } from '../kube/client.js';
import { listAll, listWatch, type ListWatchOptions } from '../kube/list-watch.js';
import { podsPath } from '../kube/paths.js';
import { failureOf, Reflector, type PollOutcome } from '../kube/reflector.js';
import type { Failure } from '../kube/reflector-machine.js';
import { summarizePod, type PodSummary, type PodView } from './pod-summary.js';
import { EarliestTimer } from './earliest-timer.js';
import { probeDelay, probeOutcome } from './probe-schedule.js';

/**
 * One namespace's pods, shared by every topology that selects pods there: one list, then one
 * watch of the whole namespace, resumed from its resourceVersion whenever it ends and re-listed
 * only when it cannot resume (410 Gone) — what client-go's informers do. Each topology registers
 * its selector (read locally, with Kubernetes' grammar) and its naming settings; each pod is
 * judged once per distinct settings when it arrives, and only for the topologies that select it.
 *
 * The polling interval keeps its meaning through a probe: at least every interval (the smallest
 * of the topologies here, with jitter, so namespaces do not poll in step) the namespace's pods
 * are listed with `limit=1` and no resourceVersion — a consistent read, which the API server
 * answers from its watch cache once that cache has caught up with etcd (Kubernetes ≥ 1.34). Its
 * answer is every topology's poll outcome: the API server is reachable and still lets this
 * identity list the pods. A topology is first listed on its own, with its selector (the API
 * server's verdict on the selector, and the pods judged before it registered).
 */

/** What a registered topology needs: its selector (parsed and as written) and its settings. */
export interface PodSelection {
  selector: LabelSelector;
  selectorText: string;
  /** The naming and membership settings pods are judged with, and their JSON (the cache key). */
  settings: Parameters<typeof summarizePod>[1];
  settingsKey: string;
  intervalMs: number;
}

interface Registration extends PodSelection {
  key: string;
  /**
   * Whether pods were judged before it came (the namespace's list had begun): its own list judges
   * them; without, that list only asks the API server's verdict on the selector (one pod).
   */
  late: boolean;
  /** Its own first list: under way, done, or failed (retried at the next probe). */
  listed: 'pending' | 'done' | Failure;
  members: Set<string>;
  poll?: PollOutcome;
  version: number;
}

/** A pod as kept here: its labels and one verdict per settings that selects it. */
type PodEntry = KubeObject & {
  metadata: { name: string; namespace?: string; resourceVersion?: string };
  labels?: Readonly<Record<string, string>>;
  summaries: Map<string, PodSummary>;
};

export interface NamespacePodsOptions {
  listWatch: Omit<ListWatchOptions, 'query'>;
  /** Topology `key`'s pods changed, or its poll ended (`poll`). */
  onChange: (key: string, poll?: PollOutcome) => void;
  onRestart: (why: string) => void;
  /** A pod left unjudged after its topology's own list: the namespace is re-listed. */
  log?: (level: 'info' | 'warn', message: string, meta?: Record<string, unknown>) => void;
  random?: () => number;
  /**
   * Its regular probes are made for it (a cluster-wide probe, cluster-probe.ts, answers through
   * `answered`) until `probeOnOwn()`: it probes on its own only to retry a failed first list.
   */
  sharedProbe?: boolean;
}

export class NamespacePods {
  private readonly reflector: Reflector<PodEntry>;
  private readonly registrations = new Map<string, Registration>();
  private readonly probeTimer = new EarliestTimer(() => void this.probe());
  private probing = false;
  private stopped = false;
  private started = false;
  private readonly backoff: Backoff;
  private readonly random: () => number;
  private sharedProbe: boolean;

  constructor(
    private readonly kube: Kube,
    readonly namespace: string,
    private readonly opts: NamespacePodsOptions,
  ) {
    this.random = opts.random ?? Math.random;
    this.sharedProbe = opts.sharedProbe ?? false;
    this.backoff = new Backoff(DEFAULT_BACKOFF, Date.now, this.random);
    this.reflector = new Reflector<PodEntry>({
      name: `pods ${namespace}`,
      ...listWatch<PodEntry>(kube, podsPath(namespace), opts.listWatch),
      transform: (o) => this.entryOf(o),
      onChange: (podKey) => this.changed(podKey),
      onPoll: (p) => this.listed(p),
      onRestart: opts.onRestart,
    });
  }

  /** Starts the namespace's list and watch on the next turn, so the topologies found together share it. */
  start(): void {
    setImmediate(() => {
      if (this.stopped) return;
      this.started = true;
      this.reflector.start();
    });
  }

  stop(): void {
    this.stopped = true;
    this.probeTimer.stop();
    this.reflector.stop();
    this.registrations.clear();
  }

  get empty(): boolean {
    return this.registrations.size === 0;
  }

  /** The smallest polling interval of its topologies (ms; Infinity without any). */
  get intervalMs(): number {
    return Math.min(...[...this.registrations.values()].map((r) => r.intervalMs));
  }

  /** The wait before a failed poll is retried: the backoff, up to the polling interval (and 30 s). */
  private retryDelay(): number {
    return this.backoff.next(this.intervalMs);
  }

  /** From now on it probes on its own (the cluster-wide probe is refused): the first at once. */
  probeOnOwn(): void {
    this.sharedProbe = false;
    this.scheduleProbe(0);
  }

  /** Topology `key` selects `selection` here (a new or changed selection replaces the old). */
  register(key: string, selection: PodSelection): void {
    const r: Registration = {
      ...selection,
      key,
      late: this.started,
      listed: 'pending',
      members: new Set(),
      version: 0,
    };
    this.registrations.set(key, r);
    for (const e of this.reflector.items())
      if (matchesSelector(r.selector, e.labels)) r.members.add(keyOf(e));
    if (!this.sharedProbe)
      this.scheduleProbe(this.probeTimer.idle ? this.random() * r.intervalMs : r.intervalMs);
    void this.listFor(r);
  }

  unregister(key: string): void {
    this.registrations.delete(key);
  }

  /** What topology `key` knows now: its last poll and its pods (none until all are judged). */
  view(key: string): { poll: PollOutcome | undefined; pods: PodSummary[]; version: number } {
    const r = this.registrations.get(key);
    if (!r) return { poll: undefined, pods: [], version: 0 };
    if (r.listed !== 'pending' && r.listed !== 'done')
      return {
        poll: { ok: false, at: r.poll?.at ?? new Date(), failure: r.listed },
        pods: [],
        version: r.version,
      };
    if (r.listed === 'pending' || !this.reflector.synced)
      return { poll: r.poll?.ok === false ? r.poll : undefined, pods: [], version: r.version };
    const pods: PodSummary[] = [];
    for (const podKey of r.members) {
      const s = this.reflector
        .get(this.namespace, podKey.slice(podKey.indexOf('/') + 1))
        ?.summaries.get(r.settingsKey);
      if (!s) return { poll: undefined, pods: [], version: r.version }; // judged when its event arrives
      pods.push(s);
    }
    return { poll: r.poll, pods, version: r.version };
  }

  private entryOf(o: KubeObject): PodEntry {
    const m = o.metadata;
    const known = this.reflector.get(m.namespace, m.name);
    const entry: PodEntry =
      known && m.resourceVersion && known.metadata.resourceVersion === m.resourceVersion
        ? known
        : {
            metadata: {
              name: m.name,
              ...(typeof m.namespace === 'string' ? { namespace: m.namespace } : {}),
              ...(typeof m.resourceVersion === 'string' ? { resourceVersion: m.resourceVersion } : {}),
            },
            ...(isRecord(m.labels) ? { labels: m.labels as Record<string, string> } : {}),
            summaries: new Map(),
          };
    for (const r of this.registrations.values()) judge(entry, r, o);
    return entry;
  }

  /** One pod changed (`podKey`), or everything was re-listed (undefined). */
  private changed(podKey?: string): void {
    if (podKey === undefined) {
      const entries = this.reflector.items();
      for (const r of this.registrations.values()) {
        r.members = new Set(entries.filter((e) => matchesSelector(r.selector, e.labels)).map(keyOf));
        this.bump(r);
      }
      return;
    }
    const e = this.reflector.get(this.namespace, podKey.slice(podKey.indexOf('/') + 1));
    for (const r of this.registrations.values()) {
      const was = r.members.has(podKey);
      const is = e !== undefined && matchesSelector(r.selector, e.labels);
      if (is) r.members.add(podKey);
      else r.members.delete(podKey);
      if (was || is) this.bump(r);
    }
  }

  private bump(r: Registration, poll?: PollOutcome): void {
    r.version++;
    this.opts.onChange(r.key, poll);
  }

  /** The namespace was listed: a fresh answer for every topology here (a poll). */
  private listed(p: PollOutcome): void {
    for (const r of this.registrations.values()) if (r.listed === 'done' || !p.ok) this.polled(r, p);
  }

  private polled(r: Registration, p: PollOutcome): void {
    r.poll = p;
    this.opts.onChange(r.key, p);
  }

  /** Topology r's own list: the API server's verdict on its selector; pods judged before it came are judged now. */
  private async listFor(r: Registration): Promise<void> {
    const at = new Date();
    const judgeListed = (o: KubeObject) => {
      const e = this.reflector.get(o.metadata.namespace, o.metadata.name);
      if (e && e.metadata.resourceVersion === o.metadata.resourceVersion) judge(e, r, o);
      return null;
    };
    try {
      if (r.late)
        await listAll(
          this.kube,
          podsPath(this.namespace),
          { labelSelector: r.selectorText },
          500,
          judgeListed,
        );
      else
        await this.kube.list(
          podsPath(this.namespace),
          { labelSelector: r.selectorText, limit: 1 },
          () => null,
        );
      if (this.registrations.get(r.key) !== r) return;
      r.listed = 'done';
      this.polled(r, { ok: true, at, count: r.members.size });
    } catch (err) {
      if (this.registrations.get(r.key) !== r) return;
      r.listed = failureOf(err);
      this.polled(r, { ok: false, at, failure: r.listed });
      this.scheduleProbe(this.retryDelay());
    }
  }

  private scheduleProbe(delayMs: number): void {
    if (!this.stopped) this.probeTimer.within(delayMs);
  }

  /** The poll of every topology here: one small consistent list of the namespace's pods. */
  private async probe(): Promise<void> {
    if (this.stopped || this.probing || this.registrations.size === 0) return;
    this.probing = true;
    const at = new Date();
    let answer: Failure | undefined;
    try {
      await this.kube.list(podsPath(this.namespace), { limit: 1 }, () => null);
    } catch (err) {
      answer = failureOf(err);
    } finally {
      this.probing = false;
    }
    this.answered(answer, at, true);
  }

  /**
   * The answer to a probe (undefined: 200) begun at `at`, its own (`own`) or the cluster-wide one,
   * is every topology's poll here. After its own, it schedules its next probe.
   */
  answered(answer: Failure | undefined, at: Date, own = false): void {
    if (this.stopped || this.registrations.size === 0) return;
    const outcome = probeOutcome(answer, this.reflector.synced, this.reflector.failing);
    // The watch is down and the API server answers: the namespace is listed now, and that list
    // (the old way of polling) is every topology's answer.
    if (outcome === 'relist') this.reflector.resync();
    for (const r of this.registrations.values()) {
      if (r.listed === 'pending') continue;
      if (r.listed !== 'done')
        void this.listFor(r); // retried at every probe
      else if (outcome === 'ok') this.polled(r, { ok: true, at, count: r.members.size });
      else if (answer) this.polled(r, { ok: false, at, failure: answer });
    }
    this.recheckUnjudged();
    if (!own) return;
    if (answer) this.scheduleProbe(this.retryDelay());
    else if (!this.sharedProbe) this.scheduleProbe(probeDelay(this.intervalMs, this.random()));
  }

  /**
   * A pod its topology's own list did not judge (the list and the watch disagreed about it) is
   * judged when its next event arrives; one still unjudged a whole probe later means the watch
   * missed something, and the namespace is listed again.
   */
  private unjudgedSince = new Map<string, number>();
  private recheckUnjudged(): void {
    const now = Date.now();
    const next = new Map<string, number>();
    let stale = false;
    for (const r of this.registrations.values()) {
      if (r.listed !== 'done' || !this.reflector.synced) continue;
      for (const podKey of r.members) {
        const e = this.reflector.get(this.namespace, podKey.slice(podKey.indexOf('/') + 1));
        if (e?.summaries.has(r.settingsKey)) continue;
        const k = `${r.key}\0${podKey}\0${e?.metadata.resourceVersion}`;
        const since = this.unjudgedSince.get(k) ?? now;
        next.set(k, since);
        if (now - since >= r.intervalMs) stale = true;
      }
    }
    this.unjudgedSince = stale ? new Map() : next;
    if (!stale) return;
    this.opts.log?.('warn', 'pods left unjudged by the watch; listing the namespace again', {
      namespace: this.namespace,
    });
    this.reflector.resync();
  }
}

const keyOf = (e: PodEntry) => `${e.metadata.namespace ?? ''}/${e.metadata.name}`;

/** Judges pod `o` (its entry `e`) for registration r, if r selects it and its settings have not judged it yet. */
function judge(e: PodEntry, r: PodSelection, o: KubeObject): void {
  if (!e.summaries.has(r.settingsKey) && matchesSelector(r.selector, e.labels))
    e.summaries.set(r.settingsKey, summarizePod(o as unknown as PodView, r.settings));
}
