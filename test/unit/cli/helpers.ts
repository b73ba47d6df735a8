import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { main } from '../../../operator/cli/main.js';

/** A fixture's path in the source tree (tests run from dist/; fixtures are not copied there). */
export function fixturePath(dir: 'pods' | 'layouts', name: string): string {
  return fileURLToPath(new URL(`../../../../test/fixtures/${dir}/${name}`, import.meta.url));
}

export interface CliRun {
  code: number;
  out: string;
  err: string;
}

/**
 * Runs `ctopo argv…` in this process with captured output (and `stdin` as standard input). main()
 * sets process.exitCode for the real CLI; it is put back so a test's 64 never becomes jest's.
 */
export async function runCli(argv: string[], stdin = ''): Promise<CliRun> {
  let out = '';
  let err = '';
  const saved = process.exitCode;
  try {
    const code = await main(argv, {
      out: (t) => (out += t.endsWith('\n') ? t : `${t}\n`),
      err: (t) => (err += t.endsWith('\n') ? t : `${t}\n`),
      stdin: Readable.from([Buffer.from(stdin)]),
    });
    return { code, out, err };
  } finally {
    process.exitCode = saved;
  }
}
