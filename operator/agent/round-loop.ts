import type { Connector } from './connectors/types.js';
import { decideAgentAction, type AgentAction, type AgentInput } from './round.js';
import { runAgentRound, type AgentRoundReport } from './round-runner.js';

/**
 * Holds the agent's remembered list and runs rounds one at a time. Feed it every status change
 * and, on every polling interval, the last status again (that is what retries failed connects).
 *
 * - Rounds never overlap. While one runs, only the newest status waits; older ones are dropped
 *   (their promises settle when the newer round finishes).
 * - Trouble never starts a round and never drops a waiting status: it is reported through
 *   `onKeep` and the connections stay as they are.
 */

export interface RoundLoopOptions {
  readonly connector: Connector;
  /** The local node's name: never connected, never disconnected. */
  readonly self: string;
  /** Connector calls in flight per phase. Default 4. */
  readonly concurrency?: number;
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
  private rememberedList: readonly string[] = [];
  private pending: Pending | undefined;
  private running: Promise<void> | undefined;

  constructor(private readonly opts: RoundLoopOptions) {}

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

  private async drain(): Promise<void> {
    try {
      while (this.pending) {
        const { desired, waiters } = this.pending;
        this.pending = undefined;
        try {
          const report = await runAgentRound(
            this.opts.connector,
            this.rememberedList,
            desired,
            this.opts.self,
            this.opts.concurrency === undefined ? {} : { concurrency: this.opts.concurrency },
          );
          this.rememberedList = report.outcome.remembered;
          this.opts.onRound?.(report);
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
