import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { RunResult } from '../support/cluster.js';
import { ctopoBin } from '../support/operator-process.js';

/** Shared by the cli-*.test.ts files: the real `ctopo` binary, run as a user runs it. */

export function fixture(dir: 'pods' | 'layouts', name: string): string {
  return fileURLToPath(new URL(`../../../test/fixtures/${dir}/${name}`, import.meta.url));
}

/**
 * Runs `node bin/ctopo.js args…` (or `bin`, e.g. the dev tools' entry) to its end; `input` is its
 * standard input. Never throws on exit code.
 */
export function runCtopo(
  args: string[],
  opts: { input?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number; bin?: string } = {},
): Promise<RunResult> {
  return new Promise((ok) => {
    const child = execFile(
      process.execPath,
      [opts.bin ?? ctopoBin, ...args],
      {
        env: { ...process.env, ...opts.env },
        timeout: opts.timeoutMs ?? 60_000,
        maxBuffer: 16 * 1024 * 1024,
      },
      (err, stdout, stderr) =>
        ok({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr }),
    );
    child.stdin!.end(opts.input ?? '');
  });
}
