import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ControlPlaneState } from '../../../dev/cluster/control-plane.js';
import { freshNamespace, installCrd, kubectlOk, sharedCluster } from '../../support/cluster.js';
import { applyTopology } from '../../support/objects.js';
import { writeListedStatus } from '../../support/beam-client.js';
import { CtopoProcess, localAgentArgs } from '../../support/operator-process.js';
import { ErlangTestEnv } from '../../support/erlang.js';
import { waitFor } from '../../support/wait.js';

/**
 * The agent's rounds as docs/agent.md promises them, on real things: the real `ctopo agent`
 * process reading a real API server, an exec program that records every call in a file (and can
 * hold a connect until the test lets it go), the real state file, and for the erlang connector a
 * real BEAM node driven by the real erl_call behind a wrapper that counts its runs. The statuses
 * are written here as the operator writes them (no operator runs: what the agent reads is the
 * test's to choose).
 */

const full = (short: string) => `${short}@127.0.0.1`;

describe('the agent runs its rounds as documented (real agent, API server, files, BEAM)', () => {
  let s: ControlPlaneState;
  let ns: string;
  let work: string;
  let hook: string;

  /** `topology`'s status lists these pods; `polled` marks it, so the agent's gauge tells when it was read. */
  const writeStatus = (topology: string, shorts: readonly string[], polled: Date) =>
    writeListedStatus(s, ns, topology, shorts, 'OK', polled);
  let foreign = 0;
  let clock = Date.parse('2026-01-01T00:00:00Z');
  /** A new lastPollTime each time, a whole second apart (the field has seconds). */
  const nextPoll = () => new Date((clock += 1000));

  /** A folder of the exec program's own: its record of calls and the files that hold a connect. */
  const hookDir = async (name: string) => {
    const dir = join(work, name);
    await mkdir(dir);
    await writeFile(join(dir, 'calls'), '');
    return dir;
  };
  const callsIn = async (dir: string) =>
    (await readFile(join(dir, 'calls'), 'utf8')).split('\n').filter((l) => l !== '');

  const startExecAgent = (topology: string, dir: string, extra: string[] = []) =>
    new CtopoProcess(
      [
        ...localAgentArgs({ kubeconfig: s.kubeconfig, namespace: ns, topology, pod: 'me' }),
        '--connector',
        'exec',
        '--exec-program',
        hook,
        ...extra,
      ],
      { HOOK_DIR: dir },
    );
  const rounds = (a: CtopoProcess) => a.metricSum('ctopo_agent_rounds_total');
  /** Waits until `a` has run `n` more rounds than now (rounds come every pollingInterval, 1 s here). */
  const moreRounds = async (a: CtopoProcess, n: number) => {
    const from = await rounds(a);
    await waitFor(`${n} more rounds`, async () => (await rounds(a)) >= from + n, 60_000);
  };
  const statusRead = (a: CtopoProcess, polled: Date) =>
    waitFor(
      `the agent to read the status of ${polled.toISOString()}`,
      async () =>
        (await a.metric('ctopo_agent_last_status_seen_timestamp_seconds')) === polled.getTime() / 1000,
      30_000,
    );

  beforeAll(async () => {
    s = await sharedCluster();
    await installCrd(s);
    ns = await freshNamespace(s, 'rounds');
    work = await mkdtemp(join(tmpdir(), 'ctopo-rounds-'));
    hook = join(work, 'record.sh');
    // The application's program for the exec connector: it records each call's start and end, and
    // holds a connect of NODE while $HOOK_DIR/hold-NODE exists, until $HOOK_DIR/go-NODE does (or
    // the folder is gone: a test that failed before letting it go leaves nothing running).
    await writeFile(
      hook,
      [
        '#!/bin/sh',
        'echo "start $1 $2" >> "$HOOK_DIR/calls"',
        'if [ "$1" = connect ] && [ -e "$HOOK_DIR/hold-$2" ]; then',
        '  while [ ! -e "$HOOK_DIR/go-$2" ] && [ -d "$HOOK_DIR" ]; do sleep 0.05; done',
        'fi',
        'echo "end $1 $2" >> "$HOOK_DIR/calls"',
        '',
      ].join('\n'),
      { mode: 0o755 },
    );
  });
  afterAll(async () => {
    await CtopoProcess.stopAll();
    if (ns) await kubectlOk(s, ['delete', 'namespace', ns, '--wait=false']);
    if (work) await rm(work, { recursive: true, force: true });
  });

  it('rounds never overlap; while one runs, only the newest status waits', async () => {
    await applyTopology(s, ns, 'overlap', { selector: 'x=overlap', pollingInterval: '1s' });
    const dir = await hookDir('overlap');
    await writeFile(join(dir, `hold-${full('p1')}`), '');
    await writeStatus('overlap', ['me', 'p1'], nextPoll());
    const agent = startExecAgent('overlap', dir, ['--call-timeout', '5m']);
    await waitFor('the round to call connect p1', async () => (await callsIn(dir)).length > 0);
    // Three statuses while the round connecting p1 is held; the agent reads each one.
    for (const next of ['p2', 'p3', 'p4']) {
      const polled = nextPoll();
      await writeStatus('overlap', ['me', 'p1', next], polled);
      await statusRead(agent, polled);
    }
    expect(await callsIn(dir)).toEqual([`start connect ${full('p1')}`]);
    await writeFile(join(dir, `go-${full('p1')}`), '');
    await waitFor('the next round to connect p4', async () =>
      (await callsIn(dir)).includes(`end connect ${full('p4')}`),
    );
    await moreRounds(agent, 2);
    // One call at a time, the held round's first; then one round with the newest list: p2 and p3
    // (statuses that waited and were replaced) are never called.
    expect(await callsIn(dir)).toEqual([
      `start connect ${full('p1')}`,
      `end connect ${full('p1')}`,
      `start connect ${full('p4')}`,
      `end connect ${full('p4')}`,
    ]);
    await agent.stop();
  });

  it('the state file is written only when the set changes: idle rounds leave it untouched', async () => {
    await applyTopology(s, ns, 'memory', { selector: 'x=memory', pollingInterval: '1s' });
    const dir = await hookDir('memory');
    const file = join(work, 'memory.state.json');
    await writeStatus('memory', ['me', 'p1'], nextPoll());
    const agent = startExecAgent('memory', dir, ['--state-file', file]);
    await waitFor('the round to connect p1', async () =>
      (await callsIn(dir)).includes(`end connect ${full('p1')}`),
    );
    await moreRounds(agent, 1);
    const text = await readFile(file, 'utf8');
    expect(JSON.parse(text)).toEqual({ version: 1, topology: `${ns}/memory`, connected: [full('p1')] });
    const before = await stat(file);
    await moreRounds(agent, 3);
    // Written atomically (a new file renamed over the old), so a write shows in the mtime, and
    // mostly in the inode too.
    const after = await stat(file);
    expect({ ino: after.ino, mtimeMs: after.mtimeMs }).toEqual({ ino: before.ino, mtimeMs: before.mtimeMs });
    expect(await readFile(file, 'utf8')).toBe(text);
    // A change is written (so the look above could have seen one).
    await writeStatus('memory', ['me', 'p1', 'p2'], nextPoll());
    await waitFor('the state file to name p2', async () =>
      (JSON.parse(await readFile(file, 'utf8')) as { connected: string[] }).connected.includes(full('p2')),
    );
    expect((await stat(file)).mtimeMs).not.toBe(before.mtimeMs);
    await agent.stop();
  });

  it.each([
    [
      'written for another topology',
      (file: string) =>
        writeFile(file, JSON.stringify({ version: 1, topology: 'elsewhere/web', connected: [full('z')] })),
      /belongs to topology .*elsewhere\/web/,
    ],
    [
      'that is not JSON',
      (file: string) => writeFile(file, `{"version":1,"connected":["${full('z')}"`),
      /not JSON/,
    ],
    ['that cannot be read (a directory)', (file: string) => mkdir(file), /cannot read it/],
  ])(
    'a state file %s is ignored with a warning, and nobody it names is disconnected',
    async (_what, make, problem) => {
      const topology = `foreign${++foreign}`;
      await applyTopology(s, ns, topology, { selector: `x=${topology}`, pollingInterval: '1s' });
      const dir = await hookDir(topology);
      const file = join(work, `${topology}.state.json`);
      await make(file);
      await writeStatus(topology, ['me', 'p1'], nextPoll());
      const agent = startExecAgent(topology, dir, ['--state-file', file]);
      await waitFor('the round to connect p1', async () =>
        (await callsIn(dir)).includes(`end connect ${full('p1')}`),
      );
      await moreRounds(agent, 2);
      const said = agent.output.split('\n').filter((l) => l.includes('remembered connections read'));
      expect(said).toHaveLength(1);
      expect(said[0]).toMatch(/"level":"warn"/);
      expect(said[0]).toMatch(problem);
      // Had the file been taken, z (remembered, not listed) would have been disconnected.
      expect(await callsIn(dir)).toEqual([`start connect ${full('p1')}`, `end connect ${full('p1')}`]);
      await agent.stop();
    },
  );

  it('with nothing changing, a round of the erlang connector is one erl_call', async () => {
    const erl = await ErlangTestEnv.start();
    try {
      const a = await erl.startNode('a');
      const b = await erl.startNode('b');
      await applyTopology(s, ns, 'beam', { selector: 'x=beam', pollingInterval: '1s' });
      await writeStatus('beam', ['a', 'b'], nextPoll());
      // erl_call as the agent runs it, behind a wrapper that records each run (its arguments).
      const runs = join(work, 'erl_call.runs');
      const wrapper = join(work, 'erl_call');
      await writeFile(runs, '');
      await writeFile(
        wrapper,
        ['#!/bin/sh', `printf '%s\\n' "$*" >> '${runs}'`, `exec '${erl.erlCall}' "$@"`, ''].join('\n'),
        { mode: 0o755 },
      );
      const runsSoFar = async () => (await readFile(runs, 'utf8')).split('\n').filter((l) => l !== '');
      const agent = new CtopoProcess(
        [
          ...localAgentArgs({ kubeconfig: s.kubeconfig, namespace: ns, topology: 'beam', pod: 'a' }),
          '--connector',
          'erlang',
          '--cookie-file',
          erl.cookieFile,
          '--erl-call',
          wrapper,
        ],
        { ERL_EPMD_PORT: String(erl.epmdPort) },
      );
      await erl.waitForNodes(a.name, [b.name], 30_000);
      await moreRounds(agent, 2); // the mesh formed, and rounds have seen it
      const r0 = await rounds(agent);
      const c0 = (await runsSoFar()).length;
      await waitFor('5 idle rounds', async () => (await rounds(agent)) >= r0 + 5, 60_000);
      const window = (await runsSoFar()).slice(c0);
      const r1 = await rounds(agent);
      // Every run asked nodes(); a round in flight at either end of the window may add or take
      // one, so n rounds made n-1 to n+1 runs (two a round would be 2n-2 or more).
      expect(window.filter((l) => !l.endsWith('-a erlang nodes []'))).toEqual([]);
      expect(window.length).toBeGreaterThanOrEqual(r1 - r0 - 1);
      expect(window.length).toBeLessThanOrEqual(r1 - r0 + 1);
      expect(await erl.nodesOf(a.name)).toEqual([b.name]);
      await agent.stop();
    } finally {
      await erl.stop();
    }
  });
});
