import { afterAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { privateCluster } from '../support/cluster.js';
import type { ControlPlaneState } from '../../dev/cluster/control-plane.js';
import { helmBinary } from '../support/helm.js';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

/**
 * The docs' promise that every command a reader copies works as printed: each `kubectl` and `helm`
 * line of the `sh` blocks of the install pages runs, in order and verbatim (continued lines joined),
 * against a real control plane of its own per page. Lines with a placeholder (`<pod>`) or piped into
 * another program are for the reader to adapt and are left out. (The `npm` lines are the suite
 * itself and the packaging test; they are not re-run here.)
 */
export function clusterCommands(markdown: string): string[] {
  const blocks = [...markdown.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
  return blocks
    .map((b) => b.replace(/\\\n\s*/g, ''))
    .flatMap((b) => b.split('\n'))
    .map((l) => l.replace(/\s+#\s.*$/, '').trim())
    .filter((l) => /^(kubectl|helm)\s/.test(l) && !/<[a-z][^>]*>/.test(l) && !/\|\s*ctopo\b/.test(l));
}

function sh(
  command: string,
  s: ControlPlaneState,
  helmDir: string,
  home = tmpdir(),
): Promise<{ code: number; out: string }> {
  return new Promise((ok) => {
    execFile(
      'bash',
      ['-euo', 'pipefail', '-c', command],
      {
        cwd: repo,
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

/** The pages a new user installs from, and a command each must contain (so an empty parse fails). */
const pages: [string, string][] = [
  ['README.md', 'kubectl -n netzlive get ctopo'],
  ['examples/README.md', 'kubectl apply -f examples/single-replica.yaml'],
  ['charts/cluster-topology/README.md', 'helm install ctopo charts/cluster-topology'],
];

describe("the install pages' commands", () => {
  it('joins continued lines and leaves out placeholders and pipes into ctopo', () => {
    const md =
      '```sh\nhelm install a b \\\n  --set x=1   # why\nkubectl logs <pod>\nkubectl get pods -o json | ctopo resolve -f -\nnpm test\n```\n';
    expect(clusterCommands(md)).toEqual(['helm install a b --set x=1']);
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
        for (const c of commands) {
          const r = await sh(c, s, helmDir, home);
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
