import { describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { ErlangTestEnv, processAlive, waitFor } from '../../support/erlang.js';

// The helper must leave nothing behind: after stop(), and when the test process dies outright.

const helper = fileURLToPath(new URL('../../support/erlang.js', import.meta.url));

describe('test/support/erlang', () => {
  it('stop() ends every node and the epmd and removes the temp dirs', async () => {
    const world = await ErlangTestEnv.start();
    const x = await world.startNode('x');
    await world.startNode('y');
    expect(await world.rpc(x.name, "net_kernel connect_node ['y@127.0.0.1']")).toMatchObject({
      code: 0,
      stdout: 'true',
    });
    await world.waitForNodes(x.name, ['y@127.0.0.1']);
    const pids = world.pids();
    expect(pids).toHaveLength(3);
    await world.stop();
    for (const pid of pids) expect(processAlive(pid)).toBe(false);
    expect(existsSync(world.root)).toBe(false);
    await world.stop(); // idempotent
  }, 60_000);

  it('a test process killed with SIGKILL takes its nodes and epmd with it', async () => {
    const script = `
      const { ErlangTestEnv } = await import(${JSON.stringify(helper)});
      const world = await ErlangTestEnv.start();
      await world.startNode('p');
      await world.startNode('q');
      process.stdout.write(JSON.stringify({ pids: world.pids(), root: world.root }) + '\\n');
      setTimeout(() => {}, 60_000);
    `;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    const { pids, root } = await waitFor(
      () => (out.includes('\n') ? (JSON.parse(out) as { pids: number[]; root: string }) : undefined),
      {
        timeoutMs: 30_000,
        what: 'the child to start its world',
      },
    );
    expect(pids).toHaveLength(3);
    child.kill('SIGKILL');
    await waitFor(() => pids.every((p) => !processAlive(p)), {
      timeoutMs: 10_000,
      what: 'the world to go away',
    });
    // Only its temp dir stays (nothing runs in a SIGKILLed process); tidy up for it.
    await rm(root, { recursive: true, force: true });
  }, 60_000);
});
