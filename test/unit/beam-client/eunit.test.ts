import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { clientDir } from '../../support/beam-client.js';
import { beamCommand, run } from '../../support/erlang.js';

/**
 * The BEAM client's eunit tests (clients/cluster_topology/test), run the way CI's BEAM cells run them:
 * `clients/cluster_topology/tools/check.sh eunit` (the library built with +warnings_as_errors, then every
 * *_tests module; the property tests need PropEr and say so when it is missing).
 */

let dir: string;
const env = () => ({ PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir, LANG: 'C', TMPDIR: dir });

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ctopo-eunit-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

it('passes its eunit tests', async () => {
  // In a cell of the matrix (CTOPO_BEAM_CELL), the script runs inside the cell's root.
  const r = await run(
    ...beamCommand('bash', [join(clientDir, 'tools', 'check.sh'), 'eunit'], { anyProgram: true }),
    { ...env(), OUT: dir },
    240_000,
  );
  const output = r.stdout + r.stderr;
  // What was skipped, and why, shows in the test log.
  for (const line of output.split('\n').filter((l) => l.includes('SKIPPED'))) console.log(line.trim());
  expect({ code: r.code, last: output.trim().split('\n').slice(-1)[0] }).toEqual({
    code: 0,
    last: expect.stringMatching(/^ {2}All \d+ tests passed\.$/),
  });
}, 300_000);
