import { afterAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sharedCluster } from '../support/cluster.js';
import type { ControlPlaneState } from '../../operator/devcluster/control-plane.js';
import { helmBinary } from '../support/helm.js';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

/**
 * The README's promise that every command a reader copies works as printed: each `kubectl` and
 * `helm` line of its `sh` blocks runs, in order and verbatim, against the real control plane.
 * (The `npm` lines are the suite itself and the packaging test; they are not re-run here.)
 */
export function clusterCommands(markdown: string): string[] {
  const blocks = [...markdown.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
  return blocks
    .flatMap((b) => b.split('\n'))
    .map((l) => l.replace(/\s+#\s.*$/, '').trim())
    .filter((l) => /^(kubectl|helm)\s/.test(l));
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

describe("the README's commands", () => {
  let s: ControlPlaneState;
  let helmDir = '';
  afterAll(async () => {
    if (!s) return;
    await sh('helm uninstall ctopo -n ctopo-system || true', s, helmDir);
    await sh('kubectl delete namespace netzlive ctopo-system --wait=false || true', s, helmDir);
  });

  it('finds the install commands in the README', async () => {
    const commands = clusterCommands(await readFile(resolve(repo, 'README.md'), 'utf8'));
    expect(commands.some((c) => c.startsWith('helm install'))).toBe(true);
    expect(commands.some((c) => c.startsWith('kubectl -n netzlive get ctopo'))).toBe(true);
  });

  it('runs every kubectl and helm line as printed, in order', async () => {
    s = await sharedCluster();
    helmDir = dirname(await helmBinary());
    const home = await mkdtemp(join(tmpdir(), 'ctopo-readme-'));
    const commands = clusterCommands(await readFile(resolve(repo, 'README.md'), 'utf8'));
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
