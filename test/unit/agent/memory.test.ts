import { describe, expect, it } from '@jest/globals';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ConnectResult, Connector, ConnectorAction } from '../../../operator/agent/connectors/types.js';
import { fileMemory, parseState, renderState, type AgentMemory } from '../../../operator/agent/memory.js';
import { RoundLoop } from '../../../operator/agent/round-loop.js';
import { waitFor } from '../../support/wait.js';

const T = 'app/web';

describe('the state file', () => {
  it('round-trips the nodes, sorted and deduplicated', () => {
    const text = renderState(['b@h', 'a@h', 'b@h'], T);
    expect(JSON.parse(text)).toEqual({ version: 1, topology: T, connected: ['a@h', 'b@h'] });
    expect(parseState(text, T)).toEqual({ nodes: ['a@h', 'b@h'] });
  });

  it.each([
    ['not json', /not JSON/],
    ['{"version":2,"topology":"app/web","connected":[]}', /not a version 1/],
    ['{"version":1,"topology":"app/web"}', /not a version 1/],
    ['{"version":1,"topology":"other/x","connected":["a@h"]}', /belongs to topology "other\/x"/],
  ])('takes nothing from %s and says why', (text, problem) => {
    const r = parseState(text, T);
    expect(r.nodes).toEqual([]);
    expect(r.problem).toMatch(problem);
  });

  it('leaves out entries that are not node names, naming them', () => {
    const r = parseState('{"version":1,"topology":"app/web","connected":["a@h","$(x)",3]}', T);
    expect(r.nodes).toEqual(['a@h']);
    expect(r.problem).toMatch(/"\$\(x\)", 3/);
  });

  it('a missing file is nothing remembered, no problem; save writes only a change', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ctopo-mem-'));
    try {
      const path = join(dir, 'state.json');
      const m = fileMemory(path, T);
      expect(await m.load()).toEqual({ nodes: [] });
      await m.save(['a@h']);
      expect(JSON.parse(await readFile(path, 'utf8')).connected).toEqual(['a@h']);
      await writeFile(path, 'overwritten by someone');
      await m.save(['a@h']); // unchanged: not written again
      expect(await readFile(path, 'utf8')).toBe('overwritten by someone');
      await m.save(['a@h', 'b@h']);
      expect(await fileMemory(path, T).load()).toEqual({ nodes: ['a@h', 'b@h'] });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

function recording() {
  const calls: string[] = [];
  let hold: Promise<void> | undefined;
  let release = () => {};
  const act = async (action: ConnectorAction, node: string): Promise<ConnectResult> => {
    calls.push(`${action} ${node}`);
    if (hold) await hold;
    return node.startsWith('down')
      ? { ok: false, action, node, ms: 1, failure: 'Refused', error: 'no' }
      : { ok: true, action, node, ms: 1 };
  };
  const connector: Connector = {
    kind: 'exec',
    connectsStick: true,
    connect: (n) => act('connect', n),
    disconnect: (n) => act('disconnect', n),
    close: async () => {},
  };
  return {
    connector,
    calls,
    block: () => (hold = new Promise<void>((r) => (release = r))),
    unblock: () => {
      hold = undefined;
      release();
    },
  };
}

function memorySpy(): AgentMemory & { saved: string[][] } {
  const saved: string[][] = [];
  return { saved, load: async () => ({ nodes: [] }), save: async (n) => void saved.push([...n].sort()) };
}

describe('RoundLoop with a memory', () => {
  it('writes what a round may connect before any call, and what it holds after', async () => {
    const f = recording();
    const mem = memorySpy();
    const loop = new RoundLoop({ connector: f.connector, self: 's@h', memory: mem });
    f.block();
    const done = loop.submit({ kind: 'status', peers: ['a@h', 'down@h'] });
    await waitFor('the first connect call', () => f.calls.length > 0, 5_000, 1);
    // Mid-round (a kill here would lose nothing): both are on disk already.
    expect(mem.saved).toEqual([['a@h', 'down@h']]);
    f.unblock();
    await done;
    // After: a@h held; down@h failed but may have half-connected, so it stays named.
    expect(mem.saved.at(-1)).toEqual(['a@h', 'down@h']);
    await loop.submit({ kind: 'status', peers: [] });
    expect(mem.saved.at(-1)).toEqual([]);
  });

  it('starts from the remembered list: a node removed while the agent was down is disconnected', async () => {
    const f = recording();
    const loop = new RoundLoop({ connector: f.connector, self: 's@h', remembered: ['gone@h', 'a@h'] });
    await loop.submit({ kind: 'status', peers: ['a@h'] });
    expect(f.calls).toEqual(['disconnect gone@h']); // a@h is held (connectsStick): no call
    expect(loop.remembered).toEqual(['a@h']);
  });

  it('a failed write is reported and the round still runs', async () => {
    const f = recording();
    const errors: unknown[] = [];
    const loop = new RoundLoop({
      connector: f.connector,
      self: 's@h',
      memory: {
        load: async () => ({ nodes: [] }),
        save: async () => {
          throw new Error('read-only file system');
        },
      },
      onMemoryError: (e) => errors.push(e),
    });
    await loop.submit({ kind: 'status', peers: ['a@h'] });
    expect(f.calls).toEqual(['connect a@h']);
    expect(errors.length).toBe(2);
  });
});

describe('RoundLoop re-sync', () => {
  it('connects every listed node again once per resync interval, not between', async () => {
    const f = recording();
    let now = 0;
    const loop = new RoundLoop({
      connector: f.connector,
      self: 's@h',
      resyncEveryMs: 60_000,
      now: () => now,
    });
    await loop.submit({ kind: 'status', peers: ['a@h', 'b@h'] });
    await loop.submit({ kind: 'status', peers: ['a@h', 'b@h'] });
    expect(f.calls).toEqual(['connect a@h', 'connect b@h']);
    now = 60_000;
    await loop.submit({ kind: 'status', peers: ['a@h', 'b@h'] });
    await loop.submit({ kind: 'status', peers: ['a@h', 'b@h'] });
    expect(f.calls).toEqual(['connect a@h', 'connect b@h', 'connect a@h', 'connect b@h']);
  });

  it('never re-syncs without an interval', async () => {
    const f = recording();
    let now = 0;
    const loop = new RoundLoop({ connector: f.connector, self: 's@h', now: () => now });
    await loop.submit({ kind: 'status', peers: ['a@h'] });
    now = 1e9;
    await loop.submit({ kind: 'status', peers: ['a@h'] });
    expect(f.calls).toEqual(['connect a@h']);
  });
});
