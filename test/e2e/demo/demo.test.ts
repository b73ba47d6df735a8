import { describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { CtopoProcess, ctopoDevBin } from '../../support/operator-process.js';

/** `npm run demo -- args…` after its build: the dev tools' entry. */
const demo = (args: string[] = []) => new CtopoProcess(['demo', ...args], {}, ctopoDevBin);

/**
 * The processes a demo started and left behind: everything it starts (operator, agents, BEAM nodes
 * through their HOME) carries its `ctopo-demo-…` directory in its arguments; other tests' BEAM
 * nodes, which may run at the same time, do not.
 */
const ours = () =>
  new Promise<string[]>((ok) =>
    execFile('ps', ['-eo', 'pid,args'], (_e, out) =>
      ok(out.split('\n').filter((l) => /ctopo-demo-/.test(l))),
    ),
  );

describe('npm run demo (the README’s first command)', () => {
  it.each(['erlang', 'file'])(
    'runs end to end with the %s connector, shows the expected quorum verdicts, and leaves nothing behind',
    async (connector) => {
      const p = demo(['--connector', connector]);
      expect(await p.wait()).toBe(0);
      const out = p.output;
      expect(out).toMatch(
        /NAME\s+PEERS\s+EXCLUDED\s+API\s+READY\s+REASON\s+QUORUM\s+MESH\s+LAST POLL\s+AGE\nweb\s+3\s+4\s+200\s+True\s+Listed\s+Breaks/,
      );
      for (const reason of ['NoPodIP', 'InvalidJSONPath', 'DuplicateNodeName']) expect(out).toContain(reason);
      expect(out).toContain('as expected: losing site A (2 of 3 voters) → Breaks');
      expect(out).toContain('as expected: losing hypervisor hv-1 (2 voters) → Breaks');
      expect(out).toContain('as expected: losing site B (1 of 3 voters) → Survives');
      if (connector === 'erlang')
        expect(out).toContain('web-0@127.0.0.1 sees: dispatch-0@127.0.0.1, web-1@127.0.0.1');
      else expect(out).toContain("web-0's agent wrote: dispatch-0@127.0.0.1");
      expect(await ours()).toEqual([]);
    },
  );

  it('by default joins its BEAM nodes with the OTP client library, no sidecar, and prints what each client reports', async () => {
    const p = demo();
    expect(await p.wait()).toBe(0);
    const out = p.output;
    expect(out).toContain('each running the OTP client library (clients/cluster_topology), no sidecar');
    expect(out).not.toMatch(/with an agent/);
    expect(out).toContain('as expected: losing site A (2 of 3 voters) → Breaks');
    expect(out).toContain('web-0@127.0.0.1 sees: dispatch-0@127.0.0.1, web-1@127.0.0.1');
    expect(out).toContain("WHAT EACH NODE'S CLIENT REPORTS");
    for (const [node, others] of [
      ['dispatch-0', 'web-0@127.0.0.1, web-1@127.0.0.1'],
      ['web-0', 'dispatch-0@127.0.0.1, web-1@127.0.0.1'],
      ['web-1', 'dispatch-0@127.0.0.1, web-0@127.0.0.1'],
    ])
      expect(out).toContain(
        `  ${node}@127.0.0.1 (pod ${node}), its client reports:\n    peers listed 3, connected 2: ${others}\n    self check: ok (the operator computed ${node}@127.0.0.1)\n    operator liveness: live`,
      );
    expect(await ours()).toEqual([]);
  });

  it('tears everything down when interrupted', async () => {
    const p = demo(['--connector', 'erlang']);
    const deadline = Date.now() + 60_000;
    while (!/starting real BEAM nodes/.test(p.output) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 100));
    p.child.kill('SIGINT');
    expect(await p.wait()).toBe(130);
    // Nodes halt when their watchdog sees the demo gone; give them a moment, then nothing may be left.
    const deadline2 = Date.now() + 15_000;
    let left = await ours();
    while (left.length && Date.now() < deadline2) {
      await new Promise((r) => setTimeout(r, 250));
      left = await ours();
    }
    expect(left).toEqual([]);
  });
});
