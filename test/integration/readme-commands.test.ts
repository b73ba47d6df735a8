import { afterAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { privateCluster } from '../support/cluster.js';
import type { ControlPlaneState } from '../../dev/cluster/control-plane.js';
import { CHART_DIR, helmBinary, helmOk } from '../support/helm.js';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

/**
 * The docs' promise that every command a reader copies works as printed: each `kubectl` and `helm`
 * line of the `sh` blocks of the install pages runs, in order and verbatim (continued lines joined),
 * against a real control plane of its own per page. Lines with a placeholder (`<pod>`) or piped into
 * another program are for the reader to adapt and are left out, and so are `helm test` and
 * `kubectl ctopo` (they need the operator's pods running: the real node's release test runs them).
 * (The `npm` lines are the suite itself and the packaging test; they are not re-run here.)
 *
 * The pages install from a release directory (`release/<version>/`, `npm run release`): here it is
 * stood in for by the chart at this commit packaged with `helm package`, in a directory that
 * otherwise shows the repository (the real release is installed on the real node).
 */
export function clusterCommands(markdown: string): string[] {
  const blocks = [...markdown.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
  return blocks
    .map((b) => b.replace(/\\\n\s*/g, ''))
    .flatMap((b) => b.split('\n'))
    .map((l) => l.replace(/\s+#\s.*$/, '').trim())
    .filter((l) => /^(kubectl|helm)\s/.test(l) && !/<[a-z][^>]*>/.test(l) && !/\|\s*ctopo\b/.test(l))
    .filter((l) => !/^(helm test|kubectl ctopo)\s/.test(l));
}

function sh(
  command: string,
  s: ControlPlaneState,
  helmDir: string,
  home = tmpdir(),
  cwd = repo,
): Promise<{ code: number; out: string }> {
  return new Promise((ok) => {
    execFile(
      'bash',
      ['-euo', 'pipefail', '-c', command],
      {
        cwd,
        timeout: 120_000,
        env: {
          ...process.env,
          KUBECONFIG: s.kubeconfig,
          HOME: home, // helm keeps its cache and config here, not in the user's home
          PATH: `${dirname(s.binaries.kubectl)}:${helmDir}:${process.env.PATH ?? ''}`,
        },
      },
      (err, stdout, stderr) =>
        ok({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, out: stdout + stderr }),
    );
  });
}

const version = (JSON.parse(await readFile(join(repo, 'package.json'), 'utf8')) as { version: string })
  .version;
const chartPackage = `release/${version}/cluster-topology-${version}.tgz`;

/** The pages a new user installs from, and a command each must contain (so an empty parse fails). */
const pages: [string, string][] = [
  ['README.md', `helm install ctopo ${chartPackage}`],
  ['examples/README.md', 'kubectl apply -f examples/single-replica.yaml'],
  ['charts/cluster-topology/README.md', `helm install ctopo ${chartPackage}`],
];

/** A directory that shows the repository's files, with release/<version>/ holding the chart package. */
async function withRelease(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'ctopo-readme-repo-'));
  for (const entry of await readdir(repo))
    if (entry !== 'release') await symlink(join(repo, entry), join(dir, entry));
  await mkdir(join(dir, 'release', version), { recursive: true });
  await helmOk(['package', CHART_DIR, '-d', join(dir, 'release', version)]);
  return dir;
}

describe("the install pages' commands", () => {
  it('joins continued lines and leaves out placeholders and pipes into ctopo', () => {
    const md =
      '```sh\nhelm install a b \\\n  --set x=1   # why\nkubectl logs <pod>\nkubectl get pods -o json | ctopo resolve -f -\nnpm test\n```\n';
    expect(clusterCommands(md)).toEqual(['helm install a b --set x=1']);
    expect(clusterCommands('```sh\nhelm test ct\nkubectl ctopo check\n```\n')).toEqual([]);
  });

  for (const [page, mustHave] of pages) {
    describe(page, () => {
      let cluster: { state: ControlPlaneState; stop: () => Promise<void> } | undefined;
      afterAll(async () => {
        await cluster?.stop();
      });

      it('finds its install commands', async () => {
        const commands = clusterCommands(await readFile(resolve(repo, page), 'utf8'));
        expect(commands.some((c) => c.startsWith(mustHave))).toBe(true);
      });

      it('runs every kubectl and helm line as printed, in order', async () => {
        cluster = await privateCluster();
        const s = cluster.state;
        const helmDir = dirname(await helmBinary());
        const home = await mkdtemp(join(tmpdir(), 'ctopo-readme-'));
        const commands = clusterCommands(await readFile(resolve(repo, page), 'utf8'));
        const cwd = await withRelease();
        for (const c of commands) {
          const r = await sh(c, s, helmDir, home, cwd);
          expect({ command: c, code: r.code, out: r.code === 0 ? '' : r.out }).toEqual({
            command: c,
            code: 0,
            out: '',
          });
        }
      }, 600_000);
    });
  }
});
