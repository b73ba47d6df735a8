import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from '../../support/erlang.js';
import { clientDir, repoRoot } from '../../support/beam-client.js';
import { CELL, cellHas } from '../../support/beam-cell.js';

/**
 * xref and dialyzer over the library (clients/cluster_topology/tools/check.sh), in the cell that holds
 * Debian's erlang-dialyzer (otp27): no undefined, deprecated or unused call, a -spec on every
 * export, no dialyzer warning. The PLT of the OTP applications the library uses is built once per
 * root (minutes) and kept in ~/.cache/cluster-topology/dialyzer, mounted into the root.
 */

let dir: string;
const root = join(repoRoot, 'tools', 'beam', 'root.sh');
const check = join(clientDir, 'tools', 'check.sh');
const pltDir = join(homedir(), '.cache', 'cluster-topology', 'dialyzer');
const env = (extra: NodeJS.ProcessEnv = {}) => ({
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  HOME: dir,
  LANG: 'C.UTF-8',
  OUT: dir,
  ...extra,
});

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ctopo-dialyzer-'));
  await mkdir(pltDir, { recursive: true });
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

(cellHas('dialyzer') ? it : it.skip)(
  `xref and dialyzer find nothing in the library (${CELL})`,
  async () => {
    const key = (await run('bash', [root, 'path', CELL], env())).stdout.trim().split('-').pop();
    const inCell = (what: string, extra: NodeJS.ProcessEnv = {}) =>
      run('bash', [root, 'run', CELL, '--bind', pltDir, '--', 'bash', check, what], env(extra), 1_500_000);

    const x = await inCell('xref');
    expect({ code: x.code, out: x.stdout.split('\n').filter((l) => /^(xref|specs)/.test(l)) }).toEqual({
      code: 0,
      out: ['xref: clean', 'specs: every export has one'],
    });
    const d = await inCell('dialyzer', { CT_PLT: join(pltDir, `${CELL}-${key}.plt`) });
    expect({ code: d.code, warnings: d.stdout.split('\n').filter((l) => /^\S+\.erl:\d+/.test(l)) }).toEqual({
      code: 0,
      warnings: [],
    });
  },
  1_800_000,
);
