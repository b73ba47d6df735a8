import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFileSync, spawnSync } from 'node:child_process';
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from './paths.js';

/**
 * `npm run release` builds from a commit, so it refuses a working tree that is not one: a changed
 * file or an untracked one stops it before anything is built, naming the files. (What it builds is
 * checked on the real node: test/node/release.test.ts.)
 */

let clone: string;
const release = () =>
  spawnSync('bash', [join(clone, 'tools', 'release', 'release.sh')], { cwd: clone, encoding: 'utf8' });

beforeAll(() => {
  clone = mkdtempSync(join(tmpdir(), 'ctopo-release-script-'));
  execFileSync('git', ['clone', '-q', '--depth', '1', `file://${repoRoot}`, clone]);
});
afterAll(() => rmSync(clone, { recursive: true, force: true }));

describe('npm run release on a tree that is not a commit', () => {
  it('an untracked file: refused, and the file is named', () => {
    writeFileSync(join(clone, 'notes.txt'), 'scratch\n');
    const r = release();
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('release: the working tree is not clean; commit or stash first');
    expect(r.stderr).toContain('?? notes.txt');
    rmSync(join(clone, 'notes.txt'));
  });

  it('a changed file: refused, and the file is named', () => {
    appendFileSync(join(clone, 'README.md'), '\nedited\n');
    const r = release();
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(' M README.md');
    execFileSync('git', ['checkout', '-q', 'README.md'], { cwd: clone });
  });

  it('an ignored file (build output) does not count: the clean clone gets past the check', () => {
    writeFileSync(join(clone, 'debug.log'), 'ignored by .gitignore\n');
    // Past the tree check it stops at the next one it cannot meet here, or starts building: both
    // say something other than "not clean". Asked not to build (no root) to stay quick.
    const r = spawnSync('bash', [join(clone, 'tools', 'release', 'release.sh')], {
      cwd: clone,
      encoding: 'utf8',
      env: { ...process.env, CTOPO_RELEASE_DRY_RUN: '1' },
    });
    expect(r.stderr).not.toContain('not clean');
    expect(r.stdout + r.stderr).toContain('release: clean tree at');
  });
});
