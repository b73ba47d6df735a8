import { Backoff, DEFAULT_BACKOFF } from '../kube/backoff.js';
import type { Kube } from '../kube/client.js';
import { ALL_PODS_PATH, SELF_SUBJECT_ACCESS_REVIEWS_PATH } from '../kube/paths.js';
import { failureOf } from '../kube/reflector.js';
import type { Failure } from '../kube/reflector-machine.js';
import { EarliestTimer } from './earliest-timer.js';
import { probeDelay } from './probe-schedule.js';

/** What the cluster-wide probe answers to: the namespaces served through their pod watches. */
export interface ProbedNamespace {
  readonly intervalMs: number;
  answered(answer: Failure | undefined, at: Date): void;
  probeOnOwn(): void;
}

/**
 * One probe for every namespace served (docs/operator.md, "pollingInterval: the rule"): at least
 * every pollingInterval (the smallest of every topology's, with jitter), one consistent
 * `LIST /api/v1/pods?limit=1`, and its answer is the poll of every topology in every namespace.
 * Under RBAC, permission to list pods cluster-wide is permission to list them in each namespace,
 * and it is the same API server, with the same etcd and the same watch cache, that answers. Before
 * the first probe the operator asks whether it may (a SelfSubjectAccessReview, so a namespaced
 * installation sees no refused request); if it may not (or the review fails), or a probe is
 * refused later (403), each namespace probes on its own instead, from then on.
 */
export class ClusterProbe {
  private readonly timer = new EarliestTimer(() => void this.probe());
  private probing = false;
  private stopped = false;
  private refused = false;
  /** Whether this identity may list pods cluster-wide; undefined: not asked yet. */
  private allowed: boolean | undefined;
  private readonly backoff: Backoff;

  constructor(
    private readonly kube: Kube,
    private readonly namespaces: () => ProbedNamespace[],
    private readonly log?: (level: 'info' | 'warn', message: string, meta?: Record<string, unknown>) => void,
    private readonly random: () => number = Math.random,
  ) {
    this.backoff = new Backoff(DEFAULT_BACKOFF, Date.now, this.random);
  }

  /** Whether the namespaces leave their regular probes to it (false once it was refused). */
  get serving(): boolean {
    return !this.refused;
  }

  /** A topology polled every `intervalMs` is served: the next probe comes within that (the first at a random moment). */
  want(intervalMs: number): void {
    if (this.refused) return;
    this.schedule(this.timer.idle ? this.random() * intervalMs : intervalMs);
  }

  stop(): void {
    this.stopped = true;
    this.timer.stop();
  }

  private schedule(delayMs: number): void {
    if (!this.stopped) this.timer.within(delayMs);
  }

  private async probe(): Promise<void> {
    if (this.stopped || this.probing || this.refused || this.namespaces().length === 0) return;
    this.probing = true;
    let at = new Date();
    let answer: Failure | undefined;
    try {
      this.allowed ??= await this.mayListAll();
      at = new Date();
      if (this.allowed) await this.kube.list(ALL_PODS_PATH, { limit: 1 }, () => null);
    } catch (err) {
      answer = failureOf(err);
    } finally {
      this.probing = false;
    }
    if (this.stopped) return;
    const namespaces = this.namespaces();
    if (!this.allowed || answer?.code === 403) {
      // Pods may still be listed namespace by namespace (Roles): each namespace's answer is its own.
      this.refused = true;
      this.log?.('info', 'may not list pods cluster-wide; each namespace is probed on its own', {
        ...(answer ? { message: answer.message } : {}),
      });
      for (const ns of namespaces) ns.probeOnOwn();
      return;
    }
    for (const ns of namespaces) ns.answered(answer, at);
    if (namespaces.length === 0) return;
    const interval = Math.min(...namespaces.map((ns) => ns.intervalMs));
    // A failed poll is retried with backoff, up to the polling interval (and 30 s).
    this.schedule(answer ? this.backoff.next(interval) : probeDelay(interval, this.random()));
  }

  /** Whether the API server says this identity may list pods in all namespaces (a review that fails: no). */
  private async mayListAll(): Promise<boolean> {
    try {
      const review = await this.kube.request<{ status?: { allowed?: boolean } }>(
        'POST',
        SELF_SUBJECT_ACCESS_REVIEWS_PATH,
        {
          body: {
            apiVersion: 'authorization.k8s.io/v1',
            kind: 'SelfSubjectAccessReview',
            spec: { resourceAttributes: { verb: 'list', resource: 'pods' } },
          },
          timeoutMs: 10_000,
        },
      );
      return review.status?.allowed === true;
    } catch {
      return false;
    }
  }
}
