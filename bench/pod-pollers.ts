/**
 * libcluster's Kubernetes strategy, simulated: N pods, each listing every matching pod
 * (`GET /api/v1/namespaces/NS/pods?labelSelector=…`, no paging — one request for all) and then
 * waiting `periodMs` before the next list (libcluster re-arms its timer after a round ends).
 * The pollers start spread over one period. All N run in this one process: at most
 * `maxInFlight` requests are open at once (a poller whose turn comes waits for a slot, as a
 * real pod would wait for a slow API server), and bodies are counted, not parsed (a real pod
 * parses on its own CPU; here the bench shares the machine with the API server).
 */
import type { Agent } from 'node:https';
import { pollerOffsets, Semaphore } from './concurrency.js';

export interface PollerStats {
  started: number;
  completed: number;
  failed: number;
  bytes: number;
  /** Time from a poller's turn to its answer, ms (waiting for a slot included). */
  latencies: number[];
  lastError?: string;
}

export class PodPollers {
  private running = false;
  private timers = new Set<NodeJS.Timeout>();
  private readonly sem: Semaphore;
  stats: PollerStats = { started: 0, completed: 0, failed: 0, bytes: 0, latencies: [] };

  constructor(
    private readonly opts: {
      n: number;
      periodMs: number;
      path: string;
      maxInFlight: number;
      get: (path: string, agent: Agent) => Promise<number>;
      agent: Agent;
    },
  ) {
    this.sem = new Semaphore(opts.maxInFlight);
  }

  get peakInFlight(): number {
    return this.sem.peak;
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((r) => {
      const t = setTimeout(() => {
        this.timers.delete(t);
        r();
      }, ms);
      this.timers.add(t);
    });
  }

  start(): void {
    this.running = true;
    const offsets = pollerOffsets(this.opts.n, this.opts.periodMs);
    for (const offset of offsets) void this.loop(offset);
  }

  private async loop(offset: number): Promise<void> {
    await this.sleep(offset);
    while (this.running) {
      const t0 = performance.now();
      this.stats.started++;
      try {
        const bytes = await this.sem.with(async () =>
          this.running ? this.opts.get(this.opts.path, this.opts.agent) : -1,
        );
        if (bytes < 0) break; // stopped while waiting for a slot
        this.stats.completed++;
        this.stats.bytes += bytes;
        this.stats.latencies.push(performance.now() - t0);
      } catch (e) {
        this.stats.failed++;
        this.stats.lastError = (e as Error).message;
      }
      if (!this.running) break;
      await this.sleep(this.opts.periodMs);
    }
  }

  /** Clears the stats (the start of a measured window). */
  reset(): PollerStats {
    const s = this.stats;
    this.stats = { started: 0, completed: 0, failed: 0, bytes: 0, latencies: [] };
    return s;
  }

  /** Stops every poller and waits (at most a minute) for the requests in flight to end. */
  async stop(): Promise<void> {
    this.running = false;
    for (const t of this.timers) clearTimeout(t); // sleeping pollers never wake up again
    this.timers.clear();
    for (let i = 0; i < 600 && (this.sem.inUse > 0 || this.sem.waiting > 0); i++)
      await new Promise((r) => setTimeout(r, 100));
  }
}
