/**
 * A WATCH on one ClusterTopology (fieldSelector metadata.name=…) from the benchmark process:
 * every status the API server sends is checked against what waiters expect, and a waiter is
 * resolved with the monotonic time its event arrived. Nothing polls.
 */
import { performance } from 'node:perf_hooks';
import type { Kube, KubeObject, WatchHandle } from '../operator/kube/client.js';
import { CT_GROUP_PATH } from './bench-cluster.js';

export interface PeerView {
  pod: string;
  nodeName: string;
}
export interface TopologyView extends KubeObject {
  status?: { peers?: PeerView[]; peerCount?: number; observedGeneration?: number; lastPollTime?: string };
}

/**
 * The peers' IPs by pod name, computed once per event and shared by all waiters: the host part
 * of each node name (the bench's pods are named by their IP; a large topology's status carries
 * no podIP).
 */
export class StatusIndex {
  private ips: Map<string, string> | undefined;
  constructor(readonly object: TopologyView) {}
  ipOf(pod: string): string | undefined {
    this.ips ??= new Map(
      (this.object.status?.peers ?? []).map((p) => [p.pod, p.nodeName.slice(p.nodeName.indexOf('@') + 1)]),
    );
    return this.ips.get(pod);
  }
  get peerCount(): number {
    return this.object.status?.peerCount ?? 0;
  }
  get observedGeneration(): number {
    return this.object.status?.observedGeneration ?? 0;
  }
}

interface Waiter {
  test: (s: StatusIndex) => boolean;
  resolve: (at: number) => void;
  reject: (e: Error) => void;
  timer: NodeJS.Timeout;
}

export class TopologyWatch {
  private handle: WatchHandle | undefined;
  private waiters = new Set<Waiter>();
  private latest: StatusIndex | undefined;
  private stopped = false;
  private firstEvent: Promise<void>;
  private gotFirst: () => void = () => {};
  events = 0;
  restarts = 0;
  /** Called with every state the watch delivers (a restarted watch delivers the current one again). */
  private readonly listeners: ((object: TopologyView, at: number) => void)[] = [];

  constructor(
    private readonly kube: Kube,
    private readonly namespace: string,
    private readonly name: string,
  ) {
    this.firstEvent = new Promise((r) => (this.gotFirst = r));
  }

  /** Starts the watch; resolves once the object's current state has arrived (the initial ADDED). */
  async start(timeoutMs = 30_000): Promise<void> {
    await this.open();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.firstEvent,
      new Promise<never>((_, fail) => {
        timer = setTimeout(() => fail(new Error('no event from the ClusterTopology watch')), timeoutMs);
      }),
    ]).finally(() => clearTimeout(timer));
  }

  private async open(): Promise<void> {
    this.handle = await this.kube.watch(
      `${CT_GROUP_PATH}/namespaces/${this.namespace}/clustertopologies`,
      { fieldSelector: `metadata.name=${this.name}` },
      (type, obj) => {
        if (type !== 'ADDED' && type !== 'MODIFIED') return;
        const at = performance.now();
        this.events++;
        this.latest = new StatusIndex(obj as TopologyView);
        this.gotFirst();
        for (const l of this.listeners) l(obj as TopologyView, at);
        for (const w of [...this.waiters])
          if (w.test(this.latest)) {
            this.waiters.delete(w);
            clearTimeout(w.timer);
            w.resolve(at);
          }
      },
      () => {
        // The server ended the watch (its timeout) or it broke: watch again; the initial ADDED
        // re-checks every waiter against the current state.
        if (this.stopped) return;
        this.restarts++;
        setTimeout(() => void this.open().catch(() => {}), 200).unref();
      },
      15 * 60_000,
    );
  }

  /** `fn` sees every state from now on. */
  listen(fn: (object: TopologyView, at: number) => void): void {
    this.listeners.push(fn);
  }

  get current(): StatusIndex | undefined {
    return this.latest;
  }

  /**
   * Resolves with performance.now() of the first event (from now on, or the current state)
   * whose status passes `test`; rejects after `timeoutMs`. Register before causing the change.
   */
  until(test: (s: StatusIndex) => boolean, timeoutMs: number, what = 'a status'): Promise<number> {
    return new Promise<number>((resolve, reject) => {
      const w: Waiter = {
        test,
        resolve,
        reject,
        timer: setTimeout(() => {
          this.waiters.delete(w);
          reject(new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}`));
        }, timeoutMs),
      };
      this.waiters.add(w);
    });
  }

  /** Like `until`, but also accepts the state already seen. */
  async reach(test: (s: StatusIndex) => boolean, timeoutMs: number, what?: string): Promise<number> {
    if (this.latest && test(this.latest)) return performance.now();
    return this.until(test, timeoutMs, what);
  }

  stop(): void {
    this.stopped = true;
    this.handle?.abort();
    for (const w of this.waiters) {
      clearTimeout(w.timer);
      w.reject(new Error('watch stopped'));
    }
    this.waiters.clear();
  }
}
