import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from '../../support/erlang.js';
import { clientDir, repoRoot } from '../../support/beam-client.js';
import { CELL, cellHas } from '../../support/beam-cell.js';

/**
 * The library as a Hex package and its API docs (tools/beam/hex-build.sh, Debian's erlang-hex
 * and elixir-ex-doc in the otp27 root): the package holds exactly the library's sources, its
 * build files, its README and the repository's LICENSE — no tests, no build output — with the
 * metadata of mix.exs; the docs hold the README and a page for every module. In the cell that
 * holds Hex (otp27).
 */

let dir: string;
const env = () => ({ PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir, LANG: 'C.UTF-8' });
const script = join(repoRoot, 'tools', 'beam', 'hex-build.sh');

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ctopo-hex-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

(cellHas('hex') ? it : it.skip)(
  `mix hex.build packs exactly the library; ex_doc documents every module (${CELL})`,
  async () => {
    const out = join(dir, 'out');
    const r = await run('bash', [script, out], env(), 600_000);
    if (!existsSync(join(repoRoot, 'LICENSE'))) {
      // No licence text, no package: the script says so instead of packing one without it.
      expect({ code: r.code, said: r.stderr }).toEqual({
        code: 1,
        said: expect.stringContaining('no LICENSE'),
      });
      return;
    }
    expect({ code: r.code, tail: r.stderr.slice(-1500) }).toEqual({ code: 0, tail: expect.any(String) });
    const tar = r.stdout.trim().split('\n').pop()!;
    expect(tar).toBe(join(out, 'cluster_topology-0.1.0.tar'));

    // A Hex tarball: VERSION, CHECKSUM, metadata.config and contents.tar.gz.
    const unpacked = join(dir, 'unpacked');
    await run('mkdir', ['-p', join(unpacked, 'contents')], env());
    expect((await run('tar', ['-xf', tar, '-C', unpacked], env())).code).toBe(0);
    expect((await readdir(unpacked)).sort()).toEqual([
      'CHECKSUM',
      'VERSION',
      'contents',
      'contents.tar.gz',
      'metadata.config',
    ]);
    expect(
      (await run('tar', ['-xzf', join(unpacked, 'contents.tar.gz'), '-C', join(unpacked, 'contents')], env()))
        .code,
    ).toBe(0);
    const packed = (await run('find', ['.', '-type', 'f'], env(), 15_000, join(unpacked, 'contents'))).stdout
      .split('\n')
      .filter(Boolean)
      .map((f) => f.replace(/^\.\//, ''))
      .sort();
    const sources = (await readdir(join(clientDir, 'src'))).map((f) => `src/${f}`);
    expect(packed).toEqual([...sources, 'LICENSE', 'README.md', 'mix.exs', 'rebar.config'].sort());
    // Byte for byte the checkout's files (the licence is the repository's).
    for (const f of packed) {
      const from = f === 'LICENSE' ? join(repoRoot, 'LICENSE') : join(clientDir, f);
      expect({
        f,
        same: (await readFile(join(unpacked, 'contents', f))).equals(await readFile(from)),
      }).toEqual({ f, same: true });
    }
    const meta = await readFile(join(unpacked, 'metadata.config'), 'utf8');
    expect(meta).toContain('{<<"name">>,<<"cluster_topology">>}.');
    expect(meta).toContain('{<<"version">>,<<"0.1.0">>}.');
    expect(meta).toContain('{<<"licenses">>,[<<"Apache-2.0">>]}.');
    expect(meta).toMatch(/\{<<"build_tools">>,\[<<"mix">>,<<"rebar3">>\]\}\./);

    // The docs: the README as the main page, one page per module.
    const pages = await readdir(join(out, 'doc'));
    const modules = (await readdir(join(clientDir, 'src')))
      .filter((f) => f.endsWith('.erl'))
      .map((f) => f.replace(/\.erl$/, '.html'));
    expect(pages).toEqual(expect.arrayContaining(['index.html', 'readme.html', ...modules]));
    expect(await readFile(join(out, 'doc', 'cluster_topology.html'), 'utf8')).toContain('child_spec');
  },
  700_000,
);
