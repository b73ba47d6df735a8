import { afterAll, describe, expect, it } from '@jest/globals';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readState, stopControlPlane } from '../../dev/cluster/control-plane.js';
import { kubectl } from '../support/cluster.js';
import { waitFor } from '../support/wait.js';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

/** The `sh` block under a heading of a markdown page. */
export function shBlockUnder(markdown: string, heading: string): string {
  const at = markdown.indexOf(`\n${heading}\n`);
  if (at < 0) throw new Error(`no heading ${JSON.stringify(heading)}`);
  const block = /```sh\n([\s\S]*?)```/.exec(markdown.slice(at));
  if (!block) throw new Error(`no sh block under ${JSON.stringify(heading)}`);
  return block[1]!;
}

/**
 * CONTRIBUTING's "try it by hand" block, run as printed by bash from the repository's root: a dev
 * cluster, a topology, the operator, and the sidecar agent with the examples' restricted
 * permissions. The one change: `.ctopo/` becomes a temporary directory. Done when the operator has
 * served the topology (API 200) and the agent, through its own kubeconfig, has written the one peer the block made.
 */
describe("CONTRIBUTING's commands", () => {
  let dir = '';
  let script: ChildProcess | undefined;
  let output = '';
  afterAll(async () => {
    if (script?.pid) {
      try {
        process.kill(-script.pid, 'SIGTERM'); // the block's whole process group: operator and agent
      } catch {
        /* already gone */
      }
    }
    if (dir) await stopControlPlane(join(dir, 'dev'));
  });

  it('start a dev cluster, the operator and a restricted sidecar that hears its topology', async () => {
    const page = await readFile(resolve(repo, 'CONTRIBUTING.md'), 'utf8');
    const block = shBlockUnder(page, '## Try the operator and the sidecar by hand');
    expect(block).toContain('npx ctopo agent');
    dir = await mkdtemp(join(tmpdir(), 'ctopo-contributing-'));
    const commands = block.replaceAll('$PWD/.ctopo/', `${dir}/`).replaceAll('.ctopo/', `${dir}/`);
    script = spawn('bash', ['-euo', 'pipefail', '-c', commands], {
      cwd: repo,
      detached: true,
      // The Node.js running the tests first, as `npm test` has it (the CLI needs Node >= 22.19).
      env: { ...process.env, PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}` },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    script.stdout!.on('data', (b: Buffer) => (output += b.toString()));
    script.stderr!.on('data', (b: Buffer) => (output += b.toString()));
    let exit: number | null = null;
    script.on('exit', (code) => (exit = code ?? -1));

    // Each wait also ends when the block does (it must not: the agent runs until stopped).
    const stateDir = join(dir, 'dev');
    const served = await waitFor(
      'the operator serving web',
      async () => {
        if (exit !== null) return 'ended';
        const s = await readState(stateDir);
        if (!s) return false;
        const r = await kubectl(s, [
          '-n',
          'netzlive',
          'get',
          'ctopo',
          'web',
          '-o',
          'jsonpath={.status.lastResponse.code}',
        ]);
        return r.stdout.trim() === '200' && 'served';
      },
      300_000,
      500,
    );
    expect({ served, exit, output: served === 'served' ? '' : output }).toEqual({
      served: 'served',
      exit: null,
      output: '',
    });
    const peers = await waitFor(
      "the agent's peers file to read web-0@10.0.0.7",
      async () => {
        if (exit !== null) return 'ended';
        const text = await readFile(join(dir, 'peers'), 'utf8').catch(() => '');
        return text === 'web-0@10.0.0.7\n' && 'written';
      },
      120_000,
      500,
    ).catch((e: Error) => `${e.message}\n${output}`);
    expect({ peers, exit, output: peers === 'written' ? '' : output }).toEqual({
      peers: 'written',
      exit: null,
      output: '',
    });
    expect(output).not.toMatch(/Forbidden|refusing to start|self check failed/);
    // Out of a pod the agent has no own entry to check, and says so once.
    expect(output.match(/self check off/g)).toHaveLength(1);
  }, 480_000);
});
