import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createExecConnector } from '../../../operator/agent/connectors/exec.js';
import type { SpawnInfo } from '../../../operator/agent/connectors/process.js';
import type { Connector } from '../../../operator/agent/connectors/types.js';
import { waitFor } from '../../support/wait.js';

// A real program: appends its argv (NUL-separated, one record per line) to $LOG; a node name
// starting with "fail" exits 3, one starting with "slow" starts an hour's sleep and waits for it
// (only the connector's kill can end it within a test).

let dir: string;
let script: string;
let log: string;
let sleepPidFile: string;
const spawned: SpawnInfo[] = [];

function records(): string[][] {
  if (!existsSync(log)) return [];
  return readFileSync(log, 'utf8')
    .split('\x1e')
    .filter((r) => r.length > 0)
    .map((r) => r.split('\0').slice(0, -1));
}

async function connector(timeoutMs = 5000, args: string[] = []): Promise<Connector> {
  return createExecConnector(
    { kind: 'exec', program: script, args, timeoutMs },
    { env: { PATH: process.env.PATH, LOG: log, SLEEP_PID: sleepPidFile }, onSpawn: (i) => spawned.push(i) },
  );
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ctopo-exec-'));
  script = join(dir, 'hook.sh');
  log = join(dir, 'argv.log');
  sleepPidFile = join(dir, 'sleep.pid');
  await writeFile(
    script,
    [
      '#!/bin/sh',
      'for a in "$@"; do printf "%s\\000" "$a" >> "$LOG"; done',
      'printf "\\036" >> "$LOG"',
      'case "$CTOPO_NODE" in',
      '  fail*) echo "cannot do $CTOPO_ACTION" >&2; exit 3 ;;',
      '  slow*) sleep 3600 & echo $! > "$SLEEP_PID"; wait ;;',
      'esac',
      'exit 0',
      '',
    ].join('\n'),
    { mode: 0o755 },
  );
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('exec connector', () => {
  it('runs the program with exactly [args..., action, node], also for names that look like options', async () => {
    const c = await connector(5000, ['--cluster', 'web']);
    const names = ['web-0@10.1.2.3', '-rf@127.0.0.1', '--help@h', 'a_b-c@x-y.z', 'x@::1', 'a@fd00::1:2'];
    for (const n of names) {
      expect(await c.connect(n)).toMatchObject({ ok: true, action: 'connect', node: n });
    }
    expect(await c.disconnect('web-0@10.1.2.3')).toMatchObject({ ok: true, action: 'disconnect' });
    expect(records()).toEqual([
      ...names.map((n) => ['--cluster', 'web', 'connect', n]),
      ['--cluster', 'web', 'disconnect', 'web-0@10.1.2.3'],
    ]);
    await c.close();
  });

  it('reports a non-zero exit as refused, with stderr in the message', async () => {
    const c = await connector();
    const r = await c.connect('fail-1@10.0.0.1');
    expect(r).toMatchObject({ ok: false, failure: 'Refused' });
    if (!r.ok) {
      expect(r.error).toContain('exit code 3');
      expect(r.error).toContain('cannot do connect');
    }
  });

  it('kills the program and everything it started on timeout', async () => {
    const c = await connector(500);
    // It answers at all only because the connector gave up: the program waits an hour.
    const r = await c.connect('slow-1@10.0.0.1');
    expect(r).toMatchObject({ ok: false, failure: 'Timeout' });
    const sleepPid = Number(readFileSync(sleepPidFile, 'utf8'));
    const alive = () => {
      try {
        process.kill(sleepPid, 0);
        return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${sleepPid}/stat`, 'utf8'));
      } catch {
        return false;
      }
    };
    const killed = await waitFor("the program's child to be killed", () => !alive()).then(
      () => true,
      () => false,
    );
    if (!killed) process.kill(sleepPid, 'SIGKILL'); // not left behind for an hour
    expect(killed).toBe(true);
  });

  it('refuses invalid names before running anything; no shell ever sees them', async () => {
    const c = await connector();
    const marker = join(dir, 'pwned');
    const before = spawned.length;
    const logBefore = records().length;
    for (const n of [
      `a@h; touch ${marker}`,
      `$(touch ${marker})@h`,
      `\`touch ${marker}\`@h`,
      "a'@h",
      'a@h\nb@h',
      '',
    ]) {
      expect(await c.connect(n)).toMatchObject({ ok: false, failure: 'InvalidNodeName' });
      expect(await c.disconnect(n)).toMatchObject({ ok: false, failure: 'InvalidNodeName' });
    }
    expect(spawned.length).toBe(before);
    expect(records().length).toBe(logBefore);
    expect(existsSync(marker)).toBe(false);
  });

  it('refuses a relative or non-executable program at creation', async () => {
    await expect(createExecConnector({ kind: 'exec', program: 'hook.sh' })).rejects.toThrow(/absolute/);
    await expect(createExecConnector({ kind: 'exec', program: log })).rejects.toThrow(/not an executable/);
  });

  it('reports a program that vanished', async () => {
    const gone = join(dir, 'gone.sh');
    await writeFile(gone, '#!/bin/sh\nexit 0\n', { mode: 0o755 });
    const c = await createExecConnector({ kind: 'exec', program: gone });
    await rm(gone);
    const r = await c.connect('a@h');
    expect(r).toMatchObject({ ok: false, failure: 'Error' });
    if (!r.ok) expect(r.error).toMatch(/could not start/);
  });
});
