import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { repoRoot } from './helm.js';

/**
 * Releases for the real node's release test: `npm run release` in a clean clone of this commit,
 * and in a clone one patch version later (cut as CONTRIBUTING.md says). Run alone
 * (`node dist/test/support/release.js`) it builds both and prints CTOPO_RELEASE_DIR=… and
 * CTOPO_RELEASE_LATER_DIR=…, so the test can take them without holding the real node meanwhile.
 */

export interface Release {
  dir: string;
  version: string;
  commit: string;
  digest: string;
  chart: string;
  image: string;
  /** `ctopo` from the release's npm package, installed into a directory of its own. */
  ctopo: string;
}

export function run(
  cmd: string,
  args: string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((ok) =>
    execFile(
      cmd,
      args,
      {
        cwd: opts.cwd ?? repoRoot,
        env: { ...process.env, ...opts.env },
        timeout: opts.timeoutMs ?? 120_000,
        maxBuffer: 64 * 1024 * 1024,
      },
      (err, stdout, stderr) =>
        ok({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
    ),
  );
}
export async function runOk(
  cmd: string,
  args: string[],
  opts: Parameters<typeof run>[2] = {},
): Promise<string> {
  const r = await run(cmd, args, opts);
  if (r.code !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.code}): ${r.stderr.slice(-4000)}`);
  return r.stdout;
}

/** The temporary folders this process made (clones, CLI prefixes), for removeReleaseTemp. */
const made: string[] = [];
async function tempDir(prefix: string): Promise<string> {
  const dir = await mkdtemp(prefix);
  made.push(dir);
  return dir;
}
/** Removes the clones (and the releases in them) and CLI prefixes this process made. */
export async function removeReleaseTemp(): Promise<void> {
  await Promise.all(made.splice(0).map((d) => rm(d, { recursive: true, force: true })));
}

const GIT_ENV = {
  GIT_AUTHOR_NAME: 'release test',
  GIT_AUTHOR_EMAIL: 'release-test@example.invalid',
  GIT_COMMITTER_NAME: 'release test',
  GIT_COMMITTER_EMAIL: 'release-test@example.invalid',
};

/** A clean clone of this repository at HEAD, optionally one commit further: the next patch version. */
async function clone(bump: boolean): Promise<string> {
  const dir = await tempDir('/tmp/ctopo-release-clone-');
  await runOk('git', ['clone', '-q', repoRoot, dir]);
  if (!bump) return dir;
  const pkg = JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')) as { version: string };
  const [major, minor, patch] = pkg.version.split('.').map(Number);
  const next = `${major}.${minor}.${patch! + 1}`;
  const log = join(dir, 'CHANGELOG.md');
  const today = new Date().toISOString().slice(0, 10);
  await writeFile(
    log,
    (await readFile(log, 'utf8')).replace(
      '## [Unreleased]\n',
      `## [Unreleased]\n\n## [${next}] - ${today}\n\n### Changed\n\n- The next patch release, cut by the real node's release test.\n`,
    ),
  );
  await runOk('git', ['commit', '-qam', `CHANGELOG: ${next}`], { cwd: dir, env: GIT_ENV });
  // As CONTRIBUTING.md says: npm version writes the version everywhere, commits and tags it.
  await runOk('npm', ['version', next, '-m', 'Release %s'], { cwd: dir, env: GIT_ENV });
  return dir;
}

/** `npm run release` in a clean clone at HEAD, or one patch version later; the release directory. */
export async function buildRelease(bump: boolean): Promise<string> {
  const src = await clone(bump);
  const out = await runOk('npm', ['run', 'release'], { cwd: src, timeoutMs: 1_500_000 });
  return /^RELEASE_DIR=(.*)$/m.exec(out)![1]!;
}

/** A release directory as a team receives it: its checksums checked, its CLI installed. */
export async function readRelease(dir: string): Promise<Release> {
  // What a team does first: the checksums.
  await runOk('sha256sum', ['-c', 'SHA256SUMS'], { cwd: dir });
  const facts = Object.fromEntries(
    (await readFile(join(dir, 'RELEASE'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 1).trim()]),
  ) as Record<string, string>;
  const version = facts.version!;
  const prefix = await tempDir('/tmp/ctopo-release-cli-');
  await runOk(
    'npm',
    [
      'install',
      '-g',
      '--prefix',
      prefix,
      '--no-audit',
      '--no-fund',
      join(dir, `cluster-topology-${version}-npm.tgz`),
    ],
    { timeoutMs: 600_000 },
  );
  return {
    dir,
    version,
    commit: facts.commit!,
    digest: facts['image digest']!,
    chart: join(dir, `cluster-topology-${version}.tgz`),
    image: join(dir, `cluster-topology-${version}-image.oci.tar`),
    ctopo: join(prefix, 'bin', 'ctopo'),
  };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const first = await buildRelease(false);
  const later = await buildRelease(true);
  process.stdout.write(`CTOPO_RELEASE_DIR=${first}\nCTOPO_RELEASE_LATER_DIR=${later}\n`);
}
