import type { Connector } from './connectors/types.js';
import type { AgentMemory } from './memory.js';
import {
  completeRound,
  decideAgentAction,
  nextDeparted,
  planRound,
  type AgentAction,
  type AgentInput,
  type DepartedCheck,
} from './round.js';
import { executePlan, type AgentRoundReport } from './round-runner.js';

/**
 * Holds the agent's remembered list and runs rounds one at a time. Feed it every status change
 * and, on every polling interval, the last status again (that is what retries failed connects).
 *
 * - Rounds never overlap. While one runs, only the newest status waits; older ones are dropped
 *   (their promises settle when the newer round finishes).
 * - Trouble never starts a round and never drops a waiting status: it is reported through
 *   `onKeep` and the connections stay as they are.
 * - With a memory (the agent's state file), the nodes a round may connect are written before
 *   it runs and what it holds after, so a restart starts from what is really connected.
 * - With `resyncEveryMs`, a round at most that often connects every listed node, believed
 *   connected or not (the first one that long after the loop was made).
 * - A node a round disconnected for leaving the list is disconnected again by a later round that
 *   finds it connected while it is still unlisted (round.ts: `departed`); while one is watched,
 *   a round asks the connector what is connected first (connectors that see the runtime only).
 */

export interface RoundLoopOptions {
  readonly connector: Connector;
  /** The local node's name: never connected, never disconnected. */
  readonly self: string;
  /** Connector calls in flight per phase. Default 4. */
  readonly concurrency?: number;
  /** What the agent remembered from before its restart. Default: nothing. */
  readonly remembered?: readonly string[];
  /** Where the remembered list is kept across restarts. */
  readonly memory?: AgentMemory;
  /** A full re-sync round at most this often (milliseconds; 0 or absent: never). */
  readonly resyncEveryMs?: number;
  /** The clock for re-sync rounds. Default Date.now. */
  readonly now?: () => number;
  /** Writing the memory failed (the round goes on: availability first). */
  readonly onMemoryError?: (error: unknown) => void;
  readonly onRound?: (report: AgentRoundReport) => void;
  readonly onKeep?: (action: Extract<AgentAction, { action: 'keep' }>) => void;
  /** A round that threw (a bug: connectors report failures, they do not throw). */
  readonly onError?: (error: unknown) => void;
}

interface Pending {
  readonly desired: readonly string[];
  readonly waiters: (() => void)[];
}

export class RoundLoop {
  private rememberedList: readonly string[];
  /** Nodes disconnected for leaving the list, and when their watch ends (ms, `now`'s clock). */
  private departed = new Map<string, number>();
  private pending: Pending | undefined;
  private running: Promise<void> | undefined;
  private lastResync: number;

  constructor(private readonly opts: RoundLoopOptions) {
    this.rememberedList = [...new Set(opts.remembered ?? [])];
    this.lastResync = (opts.now ?? Date.now)();
  }

  /** The nodes this agent connected and still holds. */
  get remembered(): readonly string[] {
    return this.rememberedList;
  }

  /**
   * Takes what the agent read. Resolves once a round that covers it has finished (for a status),
   * or at once (for trouble).
   */
  submit(input: AgentInput): Promise<void> {
    const action = decideAgentAction(input);
    if (action.action === 'keep') {
      this.opts.onKeep?.(action);
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => {
      const waiters = [...(this.pending?.waiters ?? []), resolve];
      this.pending = { desired: action.desired, waiters };
      if (!this.running) this.running = this.drain();
    });
  }

  /** Resolves when no round is running or waiting. */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  private resyncDue(): boolean {
    const every = this.opts.resyncEveryMs ?? 0;
    if (every <= 0) return false;
    const now = (this.opts.now ?? Date.now)();
    if (now - this.lastResync < every) return false;
    this.lastResync = now;
    return true;
  }

  private async remember(nodes: readonly string[]): Promise<void> {
    try {
      await this.opts.memory!.save(nodes);
    } catch (e) {
      this.opts.onMemoryError?.(e);
    }
  }

  /** The nodes watched for coming back, with what is connected now; none when nothing is watched. */
  private async departedCheck(): Promise<DepartedCheck | undefined> {
    const { connector } = this.opts;
    if (this.departed.size === 0 || !connector.observesConnections || !connector.connected) return undefined;
    const now = await connector.connected().catch(() => undefined);
    return now?.ok ? { departed: [...this.departed.keys()], connected: now.nodes } : undefined;
  }

  private async drain(): Promise<void> {
    try {
      while (this.pending) {
        const { desired, waiters } = this.pending;
        this.pending = undefined;
        try {
          const { connector, self, memory } = this.opts;
          const now = this.opts.now ?? Date.now;
          this.departed = nextDeparted(this.departed, desired, [], now());
          const plan = planRound(this.rememberedList, desired, self, await this.departedCheck());
          if (memory) await this.remember([...plan.remembered, ...plan.connect]);
          const results = await executePlan(connector, plan, {
            ...(this.opts.concurrency === undefined ? {} : { concurrency: this.opts.concurrency }),
            resync: this.resyncDue(),
          });
          const outcome = completeRound(plan, results);
          this.rememberedList = outcome.remembered;
          this.departed = nextDeparted(this.departed, desired, outcome.disconnected, now());
          if (memory) await this.remember([...outcome.remembered, ...outcome.failedConnects]);
          this.opts.onRound?.({ plan, results, outcome });
        } catch (e) {
          this.opts.onError?.(e);
        }
        for (const w of waiters) w();
      }
    } finally {
      this.running = undefined;
    }
  }
}
