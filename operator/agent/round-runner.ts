import type { BatchResults, ConnectResult, Connector, ConnectorAction } from './connectors/types.js';
import { completeRound, planRound, type RoundOutcome, type RoundPlan } from './round.js';

/**
 * Carries a round plan out with a connector: the disconnects first, then the connects (the
 * specified order), at most `concurrency` calls at a time. A connector that offers `applyRound` gets
 * the whole plan in one call. A connector that throws (it should not) gets a failed result for
 * that node, so one bad call never loses the rest of the round.
 */

export interface ExecuteOptions {
  /** Calls at most in flight per phase. Default 4. */
  readonly concurrency?: number;
  /** Connect every wanted node, believed connected or not (a full re-sync round). */
  readonly resync?: boolean;
}

async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (x: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    for (;;) {
      const i = next++;
      if (i >= items.length) return;
      out[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(Math.max(1, limit), items.length) }, worker));
  return out;
}

async function safeCall(connector: Connector, action: ConnectorAction, node: string): Promise<ConnectResult> {
  const started = performance.now();
  try {
    return await (action === 'connect' ? connector.connect(node) : connector.disconnect(node));
  } catch (e) {
    return {
      ok: false,
      action,
      node,
      ms: performance.now() - started,
      failure: 'Error',
      error: `the ${connector.kind} connector threw: ${(e as Error)?.message ?? String(e)}`,
    };
  }
}

export async function executePlan(
  connector: Connector,
  plan: RoundPlan,
  opts: ExecuteOptions = {},
): Promise<BatchResults> {
  if (plan.disconnect.length === 0 && plan.connect.length === 0) return { disconnect: [], connect: [] };
  if (connector.applyRound) {
    try {
      return await connector.applyRound({ disconnect: plan.disconnect, connect: plan.connect });
    } catch (e) {
      const fail =
        (action: ConnectorAction) =>
        (node: string): ConnectResult => ({
          ok: false,
          action,
          node,
          ms: 0,
          failure: 'Error',
          error: `the ${connector.kind} connector threw: ${(e as Error)?.message ?? String(e)}`,
        });
      return {
        disconnect: plan.disconnect.map(fail('disconnect')),
        connect: plan.connect.map(fail('connect')),
      };
    }
  }
  const limit = opts.concurrency ?? 4;
  const disconnect = await mapLimit(plan.disconnect, limit, (n) => safeCall(connector, 'disconnect', n));
  // "Connect to every node in the list" without a call for what is known to hold already: one
  // nodes() for the erlang connector instead of one erl_call per peer, nothing for a hook
  // that was already told. New nodes go first, so a join never waits behind re-connects.
  // After a disconnect, Erlang's global (prevent_overlapping_partitions) may drop other
  // connections too, so a round that disconnected someone connects everyone again.
  const held = new Set<string>();
  let observed: readonly string[] | undefined;
  if (opts.resync) {
    // nothing is taken as held: the application is told the whole list again
  } else if (connector.connectsStick) for (const n of plan.remembered) held.add(n);
  else if (connector.connected && plan.disconnect.length === 0) {
    const now = await connector.connected().catch(() => undefined);
    if (now?.ok) for (const n of (observed = now.nodes)) held.add(n);
  }
  const known = new Set(plan.remembered);
  const order = [...plan.connect.filter((n) => !known.has(n)), ...plan.connect.filter((n) => known.has(n))];
  const results = new Map<string, ConnectResult>();
  const toCall = order.filter((n) => !held.has(n));
  for (const n of order)
    if (held.has(n))
      results.set(n, { ok: true, action: 'connect', node: n, ms: 0, note: 'already connected' });
  const called = await mapLimit(toCall, limit, (n) => safeCall(connector, 'connect', n));
  toCall.forEach((n, i) => results.set(n, called[i]!));
  const connect = plan.connect.map((n) => results.get(n)!);
  // An idle round is one question (docs/agent.md): its answer stands for the round's end too.
  return { disconnect, connect, ...(observed && toCall.length === 0 ? { observed } : {}) };
}

export interface AgentRoundReport {
  readonly plan: RoundPlan;
  readonly results: BatchResults;
  readonly outcome: RoundOutcome;
}

/** One whole round: plan, execute with the connector, fold the answers into the new remembered list. */
export async function runAgentRound(
  connector: Connector,
  remembered: readonly string[],
  desired: readonly string[],
  self: string,
  opts: ExecuteOptions = {},
): Promise<AgentRoundReport> {
  const plan = planRound(remembered, desired, self);
  const results = await executePlan(connector, plan, opts);
  return { plan, results, outcome: completeRound(plan, results) };
}
