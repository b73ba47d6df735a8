import { describe, expect, it } from '@jest/globals';
import { CtopoProcess, ctopoDevBin } from '../../support/operator-process.js';
import { processesMatching } from '../../support/processes.js';
import { waitFor } from '../../support/wait.js';

/**
 * The wrong-cookie scene (BEAM modes): web-1 started again with another cookie → MESH 2/3, Meshed
 * False naming its links, its report saying Refused, `ctopo mesh`'s matrix.
 */
function expectWrongCookieScene(out: string): void {
  expect(out).toContain('ONE NODE WITH ANOTHER ERLANG COOKIE');
  expect(out).toMatch(/\nweb\s+3\s+4\s+200\s+True\s+Listed\s+Breaks\s+2\/3\s/);
  expect(out).toContain('Meshed=False (LinkBroken): Groups dispatch-0, web-0 | web-1. Broken links:');
  expect(out).toMatch(/web-1\.web\s+web-1@127\.0\.0\.1\s+0\/2\s+Match/);
  expect(out).toContain(
    '[{"node":"dispatch-0@127.0.0.1","reason":"Refused"},{"node":"web-0@127.0.0.1","reason":"Refused"}]',
  );
  expect(out).toContain('ClusterTopology netzlive/web: MESH 2/3');
  expect(out).toMatch(/3 web-1 +✗r +✗r +·/);
}

/** `npm run demo -- args…` after its build: the dev tools' entry. */
const demo = (args: string[] = []) => new CtopoProcess(['demo', ...args], {}, ctopoDevBin);

/**
 * The processes a demo started and left behind: everything it starts (operator, agents, BEAM nodes
 * through their HOME) carries its `ctopo-demo-…` directory in its arguments; other tests' BEAM
 * nodes, which may run at the same time, do not. The interrupted run below shows that this finds
 * a running demo's processes.
 */
const ours = () => processesMatching(/ctopo-demo-/);

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
      if (connector === 'erlang') {
        expect(out).toContain('web-0@127.0.0.1 sees: dispatch-0@127.0.0.1, web-1@127.0.0.1');
        expectWrongCookieScene(out);
      } else expect(out).toContain("web-0's agent wrote: dispatch-0@127.0.0.1");
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
    expectWrongCookieScene(out);
    expect(await ours()).toEqual([]);
  });

  it('tears everything down when interrupted', async () => {
    const p = demo(['--connector', 'erlang']);
    await waitFor(
      'the demo to start its BEAM nodes',
      () => /starting real BEAM nodes/.test(p.output),
      120_000,
    );
    // Its processes are there to be found (the check below is not blind) …
    const running = await waitFor(
      "the demo's processes",
      async () => {
        const found = await ours();
        return found.some((l) => /\berl|beam/.test(l)) ? found : undefined;
      },
      60_000,
    );
    expect(running.length).toBeGreaterThan(0);
    p.child.kill('SIGINT');
    expect(await p.wait()).toBe(130);
    // … and gone once it stopped: nodes halt when their watchdog sees the demo gone.
    await waitFor('nothing of the demo left', async () => (await ours()).length === 0, 15_000).catch(
      () => undefined,
    );
    expect(await ours()).toEqual([]);
  }, 240_000);
});
