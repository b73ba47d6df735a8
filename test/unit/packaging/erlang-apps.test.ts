import { describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from './paths.js';

/**
 * .ci/run's Erlang check (tools/erlang-apps.sh) against fake library directories laid out as
 * Debian's packages lay them out: an application counts as installed only with its code. With
 * erlang-dev but not erlang-eunit, lib/eunit-*\/ holds include/ only — a directory check took
 * that for eunit, and the tests then failed on "undefined parse transform 'eunit_autoexport'".
 */

const script = join(repoRoot, 'tools', 'erlang-apps.sh');

async function missing(lib: string): Promise<string[]> {
  const { stdout } = await promisify(execFile)('bash', [
    '-euo',
    'pipefail',
    '-c',
    `source ${JSON.stringify(script)}; missing_erlang_packages ${JSON.stringify(lib)}`,
  ]);
  return stdout.split('\n').filter(Boolean);
}

function fakeLib(files: string[]): string {
  const lib = mkdtempSync(join(tmpdir(), 'ctopo-erlang-lib-'));
  for (const f of files) {
    mkdirSync(dirname(join(lib, f)), { recursive: true });
    writeFileSync(join(lib, f), '');
  }
  return lib;
}

const withCode = [
  'ssl-10.8.7/ebin/ssl.beam',
  'public_key-1.13.2/ebin/public_key.beam',
  'crypto-5.1.2/ebin/crypto.beam',
  'inets-8.2.2/ebin/inets.beam',
];

describe('.ci/run finds each Erlang application by its code', () => {
  it("erlang-dev's eunit headers without erlang-eunit: erlang-eunit is missing", async () => {
    expect(await missing(fakeLib([...withCode, 'eunit-2.8.1/include/eunit.hrl']))).toEqual(['erlang-eunit']);
  });

  it('every application with its code: nothing is missing', async () => {
    expect(await missing(fakeLib([...withCode, 'eunit-2.8.1/ebin/eunit_autoexport.beam']))).toEqual([]);
  });

  it('an empty library: every package', async () => {
    expect(await missing(fakeLib([]))).toEqual([
      'erlang-ssl',
      'erlang-public-key',
      'erlang-crypto',
      'erlang-inets',
      'erlang-eunit',
    ]);
  });

  it('.ci/run installs what the check finds missing (and no longer looks at directories)', () => {
    const run = readFileSync(join(repoRoot, '.ci', 'run'), 'utf8');
    expect(run).toContain('source tools/erlang-apps.sh');
    expect(run).toMatch(/missing_erlang_packages\)$/m);
    expect(run).not.toMatch(/ls -d \/usr\/lib\/erlang\/lib/);
  });
});
