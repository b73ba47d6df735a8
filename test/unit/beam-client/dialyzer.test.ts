import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from '../../support/erlang.js';
import { clientDir, repoRoot } from '../../support/beam-client.js';
import { CELL, cellHas } from '../../support/beam-cell.js';

/**
 * dialyzer and xref over the library, in the cell that holds Debian's erlang-dialyzer (otp27):
 * no dialyzer warning (the default set, unmatched returns and unknown functions), no undefined
 * or deprecated call, no unused function. The PLT of the OTP applications it uses is built once
 * per root and kept in ~/.cache/cluster-topology/dialyzer (it takes minutes).
 */

let dir: string;
const root = join(repoRoot, 'tools', 'beam', 'root.sh');
const pltDir = join(homedir(), '.cache', 'cluster-topology', 'dialyzer');
const env = () => ({ PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir, LANG: 'C.UTF-8' });
/** Runs a command in this cell's root with the PLT folder mounted. */
const inCell = (args: string[], timeoutMs: number) =>
  run('bash', [root, 'run', CELL, '--bind', pltDir, '--', ...args], env(), timeoutMs, dir);

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ctopo-dialyzer-'));
  await mkdir(pltDir, { recursive: true });
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

(cellHas('dialyzer') ? it : it.skip)(
  `dialyzer and xref find nothing in the library (${CELL})`,
  async () => {
    const built = await inCell(['erlc', '+debug_info', '-o', dir, ...(await sources())], 120_000);
    expect(built).toMatchObject({ code: 0, stdout: '', stderr: '' });

    const key = (await run('bash', [root, 'path', CELL], env())).stdout.trim().split('-').pop();
    const plt = join(pltDir, `${CELL}-${key}.plt`);
    const have = await run('test', ['-s', plt], env());
    if (have.code !== 0) {
      // Warnings about OTP's own code while building the PLT are not the library's.
      await inCell(
        [
          'dialyzer',
          '--build_plt',
          '--output_plt',
          `${plt}.tmp`,
          '--apps',
          'erts',
          'kernel',
          'stdlib',
          'crypto',
          'public_key',
          'ssl',
        ],
        1_200_000,
      );
      expect((await run('mv', [`${plt}.tmp`, plt], env())).code).toBe(0);
    }
    const d = await inCell(['dialyzer', '--plt', plt, '-Wunmatched_returns', '-Wunknown', dir], 600_000);
    expect({ code: d.code, warnings: d.stdout.split('\n').filter((l) => /^\S+\.erl:\d+/.test(l)) }).toEqual({
      code: 0,
      warnings: [],
    });

    const x = await inCell(
      [
        'erl',
        '-noshell',
        '-eval',
        `{ok, _} = xref:start(s), ok = xref:set_library_path(s, code_path), ok = xref:set_default(s, [{warnings, false}]),
       {ok, _} = xref:add_directory(s, "${dir}"),
       [io:format("~s ~0p~n", [C, R]) || C <- [undefined_function_calls, locals_not_used, deprecated_function_calls], {ok, R} <- [xref:analyze(s, C)]],
       halt().`,
      ],
      120_000,
    );
    expect(x.stdout.trim().split('\n').sort()).toEqual([
      'deprecated_function_calls []',
      'locals_not_used []',
      'undefined_function_calls []',
    ]);
  },
  1_800_000,
);

async function sources(): Promise<string[]> {
  const r = await run('ls', [join(clientDir, 'src')], env());
  return r.stdout
    .split('\n')
    .filter((f) => f.endsWith('.erl'))
    .map((f) => join(clientDir, 'src', f));
}
