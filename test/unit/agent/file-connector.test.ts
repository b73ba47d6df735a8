import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createFileConnector, renderPeerFile } from '../../../operator/agent/connectors/file.js';
import { runAgentRound } from '../../../operator/agent/round-runner.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ctopo-file-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('renderPeerFile', () => {
  it('writes sorted lines, or JSON', () => {
    expect(renderPeerFile(['b@h', 'a@h'], 'lines')).toBe('a@h\nb@h\n');
    expect(renderPeerFile([], 'lines')).toBe('');
    expect(renderPeerFile(['b@h', 'a@h'], 'json')).toBe('{"peers":["a@h","b@h"]}\n');
    expect(renderPeerFile([], 'json')).toBe('{"peers":[]}\n');
  });
});

describe('file connector', () => {
  it('lines: connect and disconnect rewrite the list; the file is untouched until the first change', async () => {
    const path = join(dir, 'peers.txt');
    const c = createFileConnector({ kind: 'file', path, format: 'lines' });
    expect(existsSync(path)).toBe(false);
    expect((await c.connect('web-1@10.0.0.2')).ok).toBe(true);
    expect((await c.connect('web-0@10.0.0.1')).ok).toBe(true);
    expect(readFileSync(path, 'utf8')).toBe('web-0@10.0.0.1\nweb-1@10.0.0.2\n');
    expect((await c.disconnect('web-0@10.0.0.1')).ok).toBe(true);
    expect(readFileSync(path, 'utf8')).toBe('web-1@10.0.0.2\n');
    expect(await c.connected()).toEqual({ ok: true, nodes: ['web-1@10.0.0.2'] });
    expect(statSync(path).mode & 0o777).toBe(0o644);
    await c.close();
  });

  it('json: a whole round is one atomic write through a temp file in the same directory', async () => {
    const path = join(dir, 'json', 'peers.json');
    await mkdir(dirname(path));
    const writes: { tempPath: string; path: string; peers: readonly string[] }[] = [];
    const c = createFileConnector(
      { kind: 'file', path, format: 'json', mode: 0o640 },
      { onWrite: (w) => writes.push(w) },
    );
    let report = await runAgentRound(c, [], ['self@h', 'a@h', 'b@h', 'bad name@h'], 'self@h');
    expect(report.outcome.remembered).toEqual(['a@h', 'b@h']);
    expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual({ peers: ['a@h', 'b@h'] });
    report = await runAgentRound(c, report.outcome.remembered, ['b@h', 'c@h'], 'self@h');
    expect(report.outcome.remembered).toEqual(['b@h', 'c@h']);
    expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual({ peers: ['b@h', 'c@h'] });
    expect(writes).toHaveLength(2);
    for (const w of writes) {
      expect(dirname(w.tempPath)).toBe(dirname(path));
      expect(w.tempPath).not.toBe(path);
      expect(existsSync(w.tempPath)).toBe(false); // renamed away
    }
    expect(readdirSync(dirname(path))).toEqual(['peers.json']);
    expect(statSync(path).mode & 0o777).toBe(0o640);
  });

  it('refuses invalid names and writes nothing for them', async () => {
    const path = join(dir, 'refuse.txt');
    const c = createFileConnector({ kind: 'file', path, format: 'lines' });
    expect(await c.connect('a@h\nextra@h')).toMatchObject({ ok: false, failure: 'InvalidNodeName' });
    expect(await c.connect('../../etc@h')).toMatchObject({ ok: false, failure: 'InvalidNodeName' });
    expect(await c.connected()).toEqual({ ok: true, nodes: [] });
  });

  it('a failed write is reported and not kept in memory', async () => {
    const sub = join(dir, 'readonly');
    await mkdir(sub);
    const path = join(sub, 'peers.txt');
    const c = createFileConnector({ kind: 'file', path, format: 'lines' });
    expect((await c.connect('a@h')).ok).toBe(true);
    await chmod(sub, 0o500);
    try {
      if (process.getuid?.() === 0) return; // root writes anyway; nothing to test here
      const r = await c.connect('b@h');
      expect(r).toMatchObject({ ok: false, failure: 'Error' });
      expect(await c.connected()).toEqual({ ok: true, nodes: ['a@h'] });
    } finally {
      await chmod(sub, 0o700);
    }
  });

  it('a failed write (missing directory) is reported and not kept in memory', async () => {
    const path = join(dir, 'no-such-dir', 'peers.txt');
    const c = createFileConnector({ kind: 'file', path, format: 'lines' });
    const r = await c.connect('a@h');
    expect(r).toMatchObject({ ok: false, failure: 'Error' });
    if (!r.ok) expect(r.error).toContain('cannot write');
    expect(await c.connected()).toEqual({ ok: true, nodes: [] });
  });

  it('serializes concurrent changes; the final file has them all', async () => {
    const path = join(dir, 'concurrent.txt');
    const c = createFileConnector({ kind: 'file', path, format: 'lines' });
    const nodes = Array.from({ length: 30 }, (_, i) => `n${i}@h`);
    const rs = await Promise.all(nodes.map((n) => c.connect(n)));
    expect(rs.every((r) => r.ok)).toBe(true);
    expect(readFileSync(path, 'utf8').split('\n').filter(Boolean).sort()).toEqual([...nodes].sort());
  });

  it.each([['lines'], ['json']] as const)(
    '%s: a reader in another process never sees a partial file while rounds are written',
    async (format) => {
      const path = join(dir, `race-${format}`);
      const c = createFileConnector({ kind: 'file', path, format });
      // Two big, disjoint lists: any read must be exactly one of them.
      const A = Array.from({ length: 1500 }, (_, i) => `alpha-${i}@host-${i}.example.com`);
      const B = Array.from({ length: 1500 }, (_, i) => `beta-${i}@10.0.${i % 250}.${i % 200}`);
      await c.applyRound({ disconnect: [], connect: A });
      const good = new Set([renderPeerFile(A, format), renderPeerFile(B, format)]);

      const reader = spawn(
        process.execPath,
        [
          '-e',
          `
          const fs = require('node:fs');
          const good = new Set(JSON.parse(process.argv[2]));
          let reads = 0, bad = 0, sample = '', switches = 0, last;
          // Reads until it has seen the content change 20 times: reads and writes interleaved.
          while (switches < 20) {
            let t; try { t = fs.readFileSync(process.argv[1], 'utf8'); } catch { continue; }
            reads++;
            if (!good.has(t)) { bad++; sample = t.slice(-80); continue; }
            if (last !== undefined && t !== last) switches++;
            last = t;
          }
          process.stdout.write(JSON.stringify({ reads, bad, sample, switches }));
          `,
          path,
          JSON.stringify([...good]),
        ],
        { stdio: ['ignore', 'pipe', 'inherit'] },
      );
      let out = '';
      reader.stdout.on('data', (b: Buffer) => (out += b.toString()));
      const done = new Promise<void>((res) => reader.on('close', () => res()));

      let writes = 0;
      let current = A;
      let running = true;
      void done.then(() => (running = false));
      while (running) {
        const next = current === A ? B : A;
        const r = await c.applyRound({ disconnect: current, connect: next });
        expect(r.connect.every((x) => x.ok)).toBe(true);
        current = next;
        writes++;
      }
      await done;
      const r = JSON.parse(out) as { reads: number; bad: number; sample: string; switches: number };
      expect({ bad: r.bad, sample: r.sample, switches: r.switches }).toEqual({
        bad: 0,
        sample: '',
        switches: 20,
      });
      expect(writes).toBeGreaterThanOrEqual(20);
      expect(readdirSync(dir).filter((f) => f.includes(`race-${format}`) && f.endsWith('.tmp'))).toEqual([]);
    },
    20_000,
  );
});
