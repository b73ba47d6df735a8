import { describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdtemp, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

/**
 * The CLI as a user installs it: `npm pack`, then `npm install -g` of the tarball into an empty
 * prefix, run from a directory that is not the repository — on Node.js 24 (what the package
 * asks for) and, with a clear message, on the machine's older Node.js.
 */
describe('the packaged CLI', () => {
  it('installs from the tarball and runs as ctopo and as kubectl-ctopo', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ctopo-pack-'));
    // dist/ is already built by `npm test`'s pretest; prepack would build it again.
    await run('npm', ['pack', '--ignore-scripts', '--pack-destination', dir], { cwd: repo });
    const [tarball] = (await readdir(dir)).filter((f) => f.endsWith('.tgz'));
    const prefix = join(dir, 'global');
    await run(
      'npm',
      [
        'install',
        '-g',
        '--prefix',
        prefix,
        '--prefer-offline',
        '--no-audit',
        '--no-fund',
        join(dir, tarball!),
      ],
      { cwd: dir, timeout: 300_000 },
    );
    // Node.js 24 first on PATH, as on a user's machine with a current Node.
    const env = { ...process.env, PATH: `${dirname(process.execPath)}:/usr/bin:/bin` };
    const help = await run(join(prefix, 'bin', 'ctopo'), ['--help'], { cwd: dir, env });
    expect(help.stdout).toMatch(/Usage: ctopo <command>/);
    const plugin = await run(join(prefix, 'bin', 'kubectl-ctopo'), ['resolve', '--help'], { cwd: dir, env });
    expect(plugin.stdout).toMatch(/Usage: ctopo resolve/);
    // The package ships compiled code, the CRD and the launcher — not the tests or the sources.
    const pkg = join(prefix, 'lib', 'node_modules', 'cluster-topology');
    expect((await readdir(pkg)).sort()).toEqual(
      expect.arrayContaining(['bin', 'crds', 'dist', 'package.json']),
    );
    expect(await readdir(join(pkg, 'dist'))).toEqual(['operator']);
  }, 600_000);

  it('on a Node.js older than 22.19 it says what it needs instead of a stack trace', async () => {
    const old = '/usr/bin/node';
    const version = (await run(old, ['--version'])).stdout.trim();
    // This machine kind ships Node.js 20 as /usr/bin/node: the case a user with an old Node meets.
    expect(version).toMatch(/^v(1\d|20|21|22\.(1[0-8]|\d)\.)/);
    const r = await run(old, [join(repo, 'bin', 'ctopo.js'), '--help']).catch(
      (e: { code: number; stderr: string }) => e,
    );
    expect(r).toMatchObject({ code: 1 });
    expect((r as { stderr: string }).stderr).toMatch(/needs Node\.js 22\.19 or newer/);
  });
});
