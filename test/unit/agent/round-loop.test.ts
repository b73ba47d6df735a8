import { describe, expect, it } from '@jest/globals';
import type { ConnectResult, Connector, ConnectorAction } from '../../../operator/agent/connectors/types.js';
import { RoundLoop } from '../../../operator/agent/round-loop.js';
import type { AgentRoundReport } from '../../../operator/agent/round-runner.js';

const SELF = 's@h0';

function fake(fail: Set<string> = new Set()) {
  const calls: string[] = [];
  let inFlight = 0;
  let overlap = false;
  const gate: { open: Promise<void>; release: () => void } = (() => {
    let release!: () => void;
    const open = new Promise<void>((r) => (release = r));
    return { open, release };
  })();
  let gated = false;
  const act = async (action: ConnectorAction, node: string): Promise<ConnectResult> => {
    inFlight++;
    if (inFlight > 1) overlap = true;
    calls.push(`${action} ${node}`);
    if (gated) await gate.open;
    await new Promise((r) => setTimeout(r, 1));
    inFlight--;
    return fail.has(node)
      ? { ok: false, action, node, ms: 1, failure: 'Refused', error: 'no' }
      : { ok: true, action, node, ms: 1 };
  };
  const connector: Connector = {
    kind: 'exec',
    connect: (n) => act('connect', n),
    disconnect: (n) => act('disconnect', n),
    close: async () => {},
  };
  return {
    connector,
    calls,
    overlap: () => overlap,
    hold: () => (gated = true),
    release: () => gate.release(),
  };
}

describe('RoundLoop', () => {
  it('runs a round per status and remembers what it connected', async () => {
    const f = fake();
    const loop = new RoundLoop({ connector: f.connector, self: SELF, concurrency: 1 });
    await loop.submit({ kind: 'status', peers: [SELF, 'a@h1', 'b@h2'] });
    expect(loop.remembered).toEqual(['a@h1', 'b@h2']);
    await loop.submit({ kind: 'status', peers: ['b@h2'] });
    expect(loop.remembered).toEqual(['b@h2']);
    expect(f.calls).toEqual(['connect a@h1', 'connect b@h2', 'disconnect a@h1', 'connect b@h2']);
  });

  it('trouble keeps everything and is reported; an empty real status disconnects', async () => {
    const f = fake();
    const kept: string[] = [];
    const loop = new RoundLoop({ connector: f.connector, self: SELF, onKeep: (k) => kept.push(k.cause) });
    await loop.submit({ kind: 'status', peers: ['a@h1'] });
    for (const cause of [
      'ApiUnreachable',
      'Forbidden',
      'ObjectGone',
      'NoStatusYet',
      'StatusStale',
    ] as const) {
      await loop.submit({ kind: 'trouble', cause });
    }
    expect(kept).toEqual(['ApiUnreachable', 'Forbidden', 'ObjectGone', 'NoStatusYet', 'StatusStale']);
    expect(loop.remembered).toEqual(['a@h1']);
    expect(f.calls).toEqual(['connect a@h1']);
    await loop.submit({ kind: 'status', peers: [] });
    expect(loop.remembered).toEqual([]);
    expect(f.calls).toEqual(['connect a@h1', 'disconnect a@h1']);
  });

  it('never overlaps rounds; only the newest waiting status runs, and trouble does not drop it', async () => {
    const f = fake();
    const reports: AgentRoundReport[] = [];
    const loop = new RoundLoop({ connector: f.connector, self: SELF, onRound: (r) => reports.push(r) });
    f.hold();
    const first = loop.submit({ kind: 'status', peers: ['a@h1'] });
    const second = loop.submit({ kind: 'status', peers: ['b@h2'] });
    const third = loop.submit({ kind: 'status', peers: ['c@h3'] });
    await loop.submit({ kind: 'trouble', cause: 'ApiUnreachable' });
    f.release();
    await Promise.all([first, second, third]);
    await loop.idle();
    expect(f.overlap()).toBe(false);
    expect(reports.map((r) => r.plan.connect)).toEqual([['a@h1'], ['c@h3']]);
    expect(loop.remembered).toEqual(['c@h3']);
  });

  it('retries a failed connect when the same status comes again', async () => {
    const down = new Set(['b@h2']);
    const f = fake(down);
    const loop = new RoundLoop({ connector: f.connector, self: SELF, concurrency: 1 });
    await loop.submit({ kind: 'status', peers: ['a@h1', 'b@h2'] });
    expect(loop.remembered).toEqual(['a@h1']);
    down.delete('b@h2');
    await loop.submit({ kind: 'status', peers: ['a@h1', 'b@h2'] });
    expect(loop.remembered).toEqual(['a@h1', 'b@h2']);
  });
});

describe('RoundLoop: a departed node that comes back', () => {
  /** A node's connections as erlang's connector sees them: `connected()` is nodes(). */
  function runtime(observes = true) {
    const held = new Set<string>();
    const calls: string[] = [];
    const connector: Connector = {
      kind: 'erlang',
      connect: async (node) => {
        calls.push(`connect ${node}`);
        held.add(node);
        return { ok: true, action: 'connect', node, ms: 0 };
      },
      disconnect: async (node) => {
        calls.push(`disconnect ${node}`);
        const was = held.delete(node);
        return { ok: true, action: 'disconnect', node, ms: 0, ...(was ? {} : { note: 'was not connected' }) };
      },
      connected: async () => ({ ok: true, nodes: [...held].sort() }),
      ...(observes ? { observesConnections: true } : {}),
      close: async () => {},
    };
    return { connector, calls, held };
  }

  it('is disconnected again while unlisted and watched; not after its watch, nor once listed again', async () => {
    const r = runtime();
    let now = 1_000_000;
    const loop = new RoundLoop({ connector: r.connector, self: SELF, now: () => now });
    await loop.submit({ kind: 'status', peers: ['a@h1', 'd@h4'] });
    await loop.submit({ kind: 'status', peers: ['a@h1'] });
    expect(r.held.has('d@h4')).toBe(false);
    // global connects d again (a peer still held it): the next round disconnects it again.
    r.held.add('d@h4');
    now += 29_000;
    r.calls.length = 0;
    await loop.submit({ kind: 'status', peers: ['a@h1'] });
    expect(r.calls).toContain('disconnect d@h4');
    expect(r.held.has('d@h4')).toBe(false);
    expect(loop.remembered).toEqual(['a@h1']);
    // That disconnect started a new watch: 29 s later it is still disconnected again …
    r.held.add('d@h4');
    now += 29_000;
    await loop.submit({ kind: 'status', peers: ['a@h1'] });
    expect(r.held.has('d@h4')).toBe(false);
    // … 30 s after the last one it is left alone (the application may have connected it).
    r.held.add('d@h4');
    now += 30_000;
    r.calls.length = 0;
    await loop.submit({ kind: 'status', peers: ['a@h1'] });
    expect(r.calls).not.toContain('disconnect d@h4');
    expect(r.held.has('d@h4')).toBe(true);
  });

  it('a departed node listed again is connected and held, not disconnected', async () => {
    const r = runtime();
    const loop = new RoundLoop({ connector: r.connector, self: SELF });
    await loop.submit({ kind: 'status', peers: ['a@h1', 'd@h4'] });
    await loop.submit({ kind: 'status', peers: ['a@h1'] });
    await loop.submit({ kind: 'status', peers: ['a@h1', 'd@h4'] });
    r.calls.length = 0;
    await loop.submit({ kind: 'status', peers: ['a@h1'] });
    await loop.submit({ kind: 'status', peers: ['a@h1', 'd@h4'] });
    expect(r.calls).toEqual(['disconnect d@h4', 'connect a@h1', 'connect d@h4']);
    expect(loop.remembered).toEqual(['a@h1', 'd@h4']);
    expect(r.held.has('d@h4')).toBe(true);
  });

  it('is not watched through a connector that does not see the runtime', async () => {
    const r = runtime(false);
    const loop = new RoundLoop({ connector: r.connector, self: SELF });
    await loop.submit({ kind: 'status', peers: ['a@h1', 'd@h4'] });
    await loop.submit({ kind: 'status', peers: ['a@h1'] });
    r.held.add('d@h4');
    r.calls.length = 0;
    await loop.submit({ kind: 'status', peers: ['a@h1'] });
    expect(r.calls).not.toContain('disconnect d@h4');
  });
});
