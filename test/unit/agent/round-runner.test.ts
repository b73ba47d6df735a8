import { describe, expect, it } from '@jest/globals';
import type { ConnectResult, Connector, ConnectorAction } from '../../../operator/agent/connectors/types.js';
import { executePlan, runAgentRound } from '../../../operator/agent/round-runner.js';
import { planRound } from '../../../operator/agent/round.js';

const SELF = 'self@10.0.0.1';

/** A connector that records calls and answers from a table; `throwOn` makes it throw. */
function fake(opts: { fail?: string[]; throwOn?: string[]; delayMs?: number } = {}) {
  const calls: string[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const act = async (action: ConnectorAction, node: string): Promise<ConnectResult> => {
    calls.push(`${action} ${node}`);
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    await new Promise((r) => setTimeout(r, opts.delayMs ?? 1));
    inFlight--;
    if (opts.throwOn?.includes(node)) throw new Error('boom');
    if (opts.fail?.includes(node)) return { ok: false, action, node, ms: 1, failure: 'Refused', error: 'no' };
    return { ok: true, action, node, ms: 1 };
  };
  const connector: Connector = {
    kind: 'exec',
    connect: (n) => act('connect', n),
    disconnect: (n) => act('disconnect', n),
    close: async () => {},
  };
  return { connector, calls, maxInFlight: () => maxInFlight };
}

describe('executePlan', () => {
  it('disconnects first, then connects', async () => {
    const f = fake();
    const plan = planRound(['a@h1', 'b@h2'], ['c@h3', 'b@h2'], SELF);
    await executePlan(f.connector, plan, { concurrency: 1 });
    expect(f.calls).toEqual(['disconnect a@h1', 'connect c@h3', 'connect b@h2']);
  });

  it('keeps going past a connector that throws, and counts that node as failed', async () => {
    const f = fake({ throwOn: ['b@h2'] });
    const report = await runAgentRound(f.connector, [], ['a@h1', 'b@h2', 'c@h3'], SELF);
    expect(report.outcome.remembered).toEqual(['a@h1', 'c@h3']);
    const b = report.results.connect.find((r) => r.node === 'b@h2')!;
    expect(b).toMatchObject({ ok: false, failure: 'Error' });
    if (!b.ok) expect(b.error).toContain('boom');
  });

  it('respects the concurrency limit', async () => {
    const f = fake({ delayMs: 10 });
    const nodes = Array.from({ length: 10 }, (_, i) => `n${i}@h`);
    await runAgentRound(f.connector, [], nodes, SELF, { concurrency: 3 });
    expect(f.maxInFlight()).toBe(3);
    expect(f.calls).toHaveLength(10);
  });

  it('makes no call for an empty plan', async () => {
    const f = fake();
    await runAgentRound(f.connector, [], [SELF], SELF);
    expect(f.calls).toEqual([]);
  });

  it('hands the whole plan to applyRound when the connector has it', async () => {
    const seen: unknown[] = [];
    const connector: Connector = {
      kind: 'file',
      connect: async () => {
        throw new Error('not used');
      },
      disconnect: async () => {
        throw new Error('not used');
      },
      applyRound: async (ops) => {
        seen.push(ops);
        return {
          disconnect: ops.disconnect.map(
            (node) => ({ ok: true, action: 'disconnect', node, ms: 0 }) as const,
          ),
          connect: ops.connect.map((node) => ({ ok: true, action: 'connect', node, ms: 0 }) as const),
        };
      },
      close: async () => {},
    };
    const report = await runAgentRound(connector, ['x@h'], ['a@h1'], SELF);
    expect(seen).toEqual([{ disconnect: ['x@h'], connect: ['a@h1'] }]);
    expect(report.outcome.remembered).toEqual(['a@h1']);
  });

  it('a throwing applyRound fails the whole round without losing remembered nodes', async () => {
    const connector: Connector = {
      kind: 'file',
      connect: async () => ({ ok: true, action: 'connect', node: '', ms: 0 }),
      disconnect: async () => ({ ok: true, action: 'disconnect', node: '', ms: 0 }),
      applyRound: async () => {
        throw new Error('disk full');
      },
      close: async () => {},
    };
    const report = await runAgentRound(connector, ['x@h'], ['a@h1'], SELF);
    expect(report.outcome).toMatchObject({
      remembered: ['x@h'],
      failedConnects: ['a@h1'],
      failedDisconnects: ['x@h'],
    });
  });
});
