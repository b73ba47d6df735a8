import { setTimeout as sleep } from 'node:timers/promises';
import { microTime } from './micro-time.js';
import { ApiError, type Kube } from './client.js';
import { leasesPath } from './paths.js';

/**
 * Leader election on a coordination.k8s.io/v1 Lease, by client-go's rules:
 *
 * - A candidate reads the Lease. Absent → it creates it holding it. Held by another identity
 *   → it waits until the record has not changed for `leaseDuration`, judged by this process's
 *   own clock from the moment it last saw the record change (never by comparing clocks).
 *   Then it writes itself in with an update carrying the observed resourceVersion: if another
 *   candidate wrote first, the update gets 409 and this one stays a follower.
 * - The leader renews every `retryPeriod`. When no renewal has succeeded for `renewDeadline`,
 *   or the Lease names someone else, it has lost: `onStoppedLeading` runs at once, and the
 *   caller stops reconciling (the operator exits, as controller-runtime does).
 * - `release()` (on SIGTERM) empties the holder so a successor does not wait out the lease.
 * - Silence is an error: a Lease that cannot be read, created or written (403, a missing
 *   namespace, TLS, …) is logged at warning level and handed to `onLeaseProblem`, once per
 *   distinct problem; the next good answer clears it. A 409 (another candidate wrote first) is
 *   the normal race, not a problem.
 *
 * Defaults, as controller-runtime's: lease 15 s, renew deadline 10 s, retry 2 s.
 */

export interface LeaderElectionOptions {
  namespace: string;
  name: string;
  identity: string;
  /**
   * Labels and annotations the holder writes on the Lease (on create and with every renewal), so
   * that tools find the operator's Lease and see which version leads (`ctopo check`).
   */
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  onStartedLeading: () => void;
  onStoppedLeading: (why: string) => void;
  /** What keeps this replica from reading or taking its Lease, or undefined once it can. */
  onLeaseProblem?: (problem: string | undefined) => void;
  log?: (level: 'info' | 'warn' | 'debug', message: string, meta?: Record<string, unknown>) => void;
}

interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

interface Lease {
  apiVersion: 'coordination.k8s.io/v1';
  kind: 'Lease';
  metadata: {
    name: string;
    namespace: string;
    resourceVersion?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  spec: LeaseSpec;
}

/** "403 Forbidden: …" for an API answer, the message alone for a transport error (TLS, DNS, …). */
const describe = (e: unknown) =>
  e instanceof ApiError ? `${e.code} ${e.reason}: ${e.message}` : (e as Error).message;

export class LeaderElector {
  private readonly leaseDurationMs: number;
  private readonly renewDeadlineMs: number;
  private readonly retryPeriodMs: number;
  private observed: { record: string; at: number; lease?: Lease } | undefined;
  private leading = false;
  private stopped = false;
  private lastRenew = 0;
  private problem: string | undefined;

  constructor(
    private readonly kube: Kube,
    private readonly opts: LeaderElectionOptions,
  ) {
    this.leaseDurationMs = opts.leaseDurationMs ?? 15_000;
    this.renewDeadlineMs = opts.renewDeadlineMs ?? 10_000;
    this.retryPeriodMs = opts.retryPeriodMs ?? 2_000;
    if (!(this.leaseDurationMs > this.renewDeadlineMs && this.renewDeadlineMs > this.retryPeriodMs))
      throw new Error('leader election needs leaseDuration > renewDeadline > retryPeriod');
  }

  private get path(): string {
    return leasesPath(this.opts.namespace, this.opts.name);
  }

  /** Runs until stop(): campaigns, leads, and campaigns again only if asked to (see run's caller). */
  async run(): Promise<void> {
    while (!this.stopped) {
      const ok = await this.tryAcquireOrRenew();
      if (this.stopped) break;
      if (ok) {
        this.lastRenew = Date.now();
        if (!this.leading) {
          this.leading = true;
          this.opts.log?.('info', `became leader (lease ${this.opts.namespace}/${this.opts.name})`, {
            identity: this.opts.identity,
          });
          this.opts.onStartedLeading();
        }
      } else if (this.leading && Date.now() - this.lastRenew >= this.renewDeadlineMs) {
        this.lose(`no renewal for ${this.renewDeadlineMs / 1000}s`);
        return;
      }
      await sleep(this.retryPeriodMs * (this.leading ? 1 : 1 + Math.random() * 0.2));
    }
  }

  /** The current Lease problem, for /readyz. */
  get leaseProblem(): string | undefined {
    return this.problem;
  }

  private trouble(problem: string | undefined): void {
    if (problem === this.problem) return;
    const lease = `lease ${this.opts.namespace}/${this.opts.name}`;
    if (problem) this.opts.log?.('warn', `${lease}: ${problem}`, { identity: this.opts.identity });
    else this.opts.log?.('info', `${lease} is readable and writable again`);
    this.problem = problem;
    this.opts.onLeaseProblem?.(problem);
  }

  private lose(why: string): void {
    if (!this.leading) return;
    this.leading = false;
    this.opts.log?.('warn', `lost leadership: ${why}`, { identity: this.opts.identity });
    this.opts.onStoppedLeading(why);
  }

  private async tryAcquireOrRenew(): Promise<boolean> {
    const now = new Date();
    let lease: Lease | undefined;
    try {
      lease = await this.kube.request<Lease>('GET', this.path, { timeoutMs: this.retryPeriodMs * 2 });
    } catch (e) {
      if (!(e instanceof ApiError && e.code === 404)) {
        this.trouble(`reading it failed: ${describe(e)}`);
        return false;
      }
    }
    const mine: LeaseSpec = {
      holderIdentity: this.opts.identity,
      leaseDurationSeconds: Math.ceil(this.leaseDurationMs / 1000),
      acquireTime: microTime(now),
      renewTime: microTime(now),
      leaseTransitions: 0,
    };
    if (!lease) {
      try {
        await this.kube.request('POST', leasesPath(this.opts.namespace), {
          body: {
            apiVersion: 'coordination.k8s.io/v1',
            kind: 'Lease',
            metadata: { name: this.opts.name, namespace: this.opts.namespace, ...this.marks() },
            spec: mine,
          },
          timeoutMs: this.retryPeriodMs * 2,
        });
        this.trouble(undefined);
        return true;
      } catch (e) {
        if (e instanceof ApiError && e.code === 409) return false;
        this.trouble(`it does not exist and creating it failed: ${describe(e)}`);
        return false;
      }
    }
    const record = JSON.stringify(lease.spec ?? {});
    if (!this.observed || this.observed.record !== record) this.observed = { record, at: Date.now(), lease };
    const holder = lease.spec?.holderIdentity ?? '';
    const held = holder !== '' && holder !== this.opts.identity;
    if (held && this.problem?.startsWith('reading')) this.trouble(undefined);
    if (held) {
      if (this.leading) this.lose(`the lease is now held by ${holder}`);
      const duration = (lease.spec?.leaseDurationSeconds ?? this.leaseDurationMs / 1000) * 1000;
      if (Date.now() - this.observed.at < duration) return false;
    }
    const spec: LeaseSpec = {
      ...mine,
      acquireTime:
        holder === this.opts.identity ? (lease.spec.acquireTime ?? mine.acquireTime) : mine.acquireTime,
      leaseTransitions: (lease.spec?.leaseTransitions ?? 0) + (holder === this.opts.identity ? 0 : 1),
    };
    try {
      const updated = await this.kube.request<Lease>('PUT', this.path, {
        body: { ...lease, metadata: { ...lease.metadata, ...this.marks(lease.metadata) }, spec },
        timeoutMs: this.retryPeriodMs * 2,
      });
      this.observed = { record: JSON.stringify(updated.spec ?? {}), at: Date.now(), lease: updated };
      this.trouble(undefined);
      return true;
    } catch (e) {
      if (e instanceof ApiError && e.code === 409) return false;
      this.trouble(`writing it failed: ${describe(e)}`);
      return false;
    }
  }

  /** This holder's labels and annotations over those the Lease has. */
  private marks(has?: Lease['metadata']): Pick<Lease['metadata'], 'labels' | 'annotations'> {
    const { labels, annotations } = this.opts;
    return {
      ...(labels || has?.labels ? { labels: { ...has?.labels, ...labels } } : {}),
      ...(annotations || has?.annotations ? { annotations: { ...has?.annotations, ...annotations } } : {}),
    };
  }

  /** Stops campaigning; a leader gives the lease up so a successor takes over at once. */
  async release(): Promise<void> {
    this.stopped = true;
    if (!this.leading) return;
    this.leading = false;
    try {
      const lease = await this.kube.request<Lease>('GET', this.path, { timeoutMs: 5000 });
      if (lease.spec?.holderIdentity !== this.opts.identity) return;
      await this.kube.request('PUT', this.path, {
        body: {
          ...lease,
          spec: {
            ...lease.spec,
            holderIdentity: '',
            leaseDurationSeconds: 1,
            renewTime: microTime(new Date()),
          },
        },
        timeoutMs: 5000,
      });
      this.opts.log?.('info', 'released the lease');
    } catch (e) {
      this.opts.log?.('warn', `releasing the lease failed: ${(e as Error).message}`);
    }
  }
}
