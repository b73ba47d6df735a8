import { describe, expect, it } from '@jest/globals';
import { mkdtemp, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { executePlan } from '../../../operator/agent/round-runner.js';
import { planRound } from '../../../operator/agent/round.js';
import { createFileConnector } from '../../../operator/agent/connectors/file.js';
import type { Connector, ConnectResult } from '../../../operator/agent/connectors/types.js';

function recording(opts: { connected?: string[] | 'fails'; sticky?: boolean }) {
  const calls: string[] = [];
  const ok = (action: 'connect' | 'disconnect', node: string): ConnectResult => (
    calls.push(`${action} ${node}`),
    { ok: true, action, node, ms: 1 }
  );
  const c: Connector = {
    kind: 'exec',
    connect: async (n) => ok('connect', n),
    disconnect: async (n) => ok('disconnect', n),
    close: async () => {},
    ...(opts.sticky ? { connectsStick: true } : {}),
    ...(opts.connected
      ? {
          connected: async () =>
            opts.connected === 'fails'
              ? { ok: false as const, failure: 'Error' as const, error: 'x' }
              : { ok: true as const, nodes: opts.connected as string[] },
        }
      : {}),
  };
  return { c, calls };
}

describe('a round does not re-connect what is known to hold', () => {
  const plan = planRound(['a@h', 'b@h', 'gone@h'], ['a@h', 'b@h', 'c@h', 'new@h'], 'me@h');
  const calm = planRound(['a@h', 'b@h'], ['a@h', 'b@h', 'c@h', 'new@h'], 'me@h');

  it('asks the connector once which nodes are connected and calls only the others, new ones first', async () => {
    const { c, calls } = recording({ connected: ['a@h', 'b@h'] });
    const r = await executePlan(c, calm, { concurrency: 1 });
    expect(calls).toEqual(['connect c@h', 'connect new@h']);
    expect(r.connect.map((x) => [x.node, x.ok])).toEqual(calm.connect.map((n) => [n, true]));
    expect(r.connect.find((x) => x.node === 'a@h')).toMatchObject({ note: 'already connected' });
  });

  it('connects everyone again in a round that disconnected someone (global may drop overlapping connections)', async () => {
    const { c, calls } = recording({ connected: ['a@h', 'b@h'] });
    await executePlan(c, plan, { concurrency: 1 });
    expect(calls).toEqual([
      'disconnect gone@h',
      'connect c@h',
      'connect new@h',
      'connect a@h',
      'connect b@h',
    ]);
  });

  it("hands on the one question's answer only when nothing was called after it (the member report's view)", async () => {
    const idle = planRound(['a@h', 'b@h'], ['a@h', 'b@h'], 'me@h');
    expect((await executePlan(recording({ connected: ['a@h', 'b@h'] }).c, idle)).observed).toEqual([
      'a@h',
      'b@h',
    ]);
    expect((await executePlan(recording({ connected: ['a@h', 'b@h'] }).c, calm)).observed).toBeUndefined();
    expect((await executePlan(recording({ connected: ['a@h', 'b@h'] }).c, plan)).observed).toBeUndefined();
    expect((await executePlan(recording({ connected: 'fails' }).c, idle)).observed).toBeUndefined();
  });

  it('re-connects a remembered node that dropped (not in connected())', async () => {
    const { c, calls } = recording({ connected: ['b@h'] });
    await executePlan(c, calm, { concurrency: 1 });
    expect(calls).toContain('connect a@h');
    expect(calls.indexOf('connect c@h')).toBeLessThan(calls.indexOf('connect a@h'));
  });

  it('calls every node when connected() fails', async () => {
    const { c, calls } = recording({ connected: 'fails' });
    await executePlan(c, plan, { concurrency: 1 });
    expect(calls.filter((x) => x.startsWith('connect'))).toHaveLength(4);
  });

  it('tells a sticky hook (exec) only about changes', async () => {
    const { c, calls } = recording({ sticky: true });
    await executePlan(c, plan, { concurrency: 1 });
    expect(calls).toEqual(['disconnect gone@h', 'connect c@h', 'connect new@h']);
  });

  it('the file connector rewrites nothing for a round that changes nothing', async () => {
    const path = join(await mkdtemp(join(tmpdir(), 'ctopo-held-')), 'peers');
    let writes = 0;
    const f = createFileConnector({ kind: 'file', path, format: 'lines' }, { onWrite: () => writes++ });
    await f.applyRound({ disconnect: [], connect: ['a@h'] });
    const first = (await stat(path)).mtimeMs;
    await f.applyRound({ disconnect: [], connect: ['a@h'] });
    expect(writes).toBe(1);
    expect((await stat(path)).mtimeMs).toBe(first);
    await f.applyRound({ disconnect: ['a@h'], connect: [] });
    expect(writes).toBe(2);
    await f.close();
  });
});
