import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildClient, clientDir } from '../../support/beam-client.js';
import { run } from '../../support/erlang.js';

/** The BEAM client's eunit tests (clients/beam/test), run by Debian's erlang-eunit. */

let dir: string;
let ebin: string;
const env = () => ({ PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir, LANG: 'C', TMPDIR: dir });

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ctopo-eunit-'));
  ebin = await buildClient(dir);
}, 120_000);
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

it('passes its eunit tests', async () => {
  const testDir = join(clientDir, 'test');
  const files = (await readdir(testDir)).filter((f) => f.endsWith('_tests.erl'));
  expect(files.length).toBeGreaterThan(0);
  const c = await run(
    'erlc',
    ['-pa', ebin, '-o', ebin, ...files.map((f) => join(testDir, f))],
    env(),
    60_000,
  );
  expect(c.stdout + c.stderr).toBe('');
  const modules = files.map((f) => f.replace(/\.erl$/, '')).join(',');
  const r = await run(
    'erl',
    ['-noshell', '-pa', ebin, '-eval', `halt(case eunit:test([${modules}], []) of ok -> 0; _ -> 1 end).`],
    env(),
    120_000,
  );
  expect({ code: r.code, output: r.stdout.split('\n').slice(-3).join('\n') }).toEqual({
    code: 0,
    output: expect.stringContaining('passed'),
  });
}, 180_000);
