import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createExecConnector, parseListOutput } from '../../../operator/agent/connectors/exec.js';
import { RoundLoop } from '../../../operator/agent/round-loop.js';

// A real program standing in for an application: it keeps the nodes it is connected to in
// $HELD, one per line; "list" prints them. Emptying $HELD is the application restarting.

let dir: string;
let program: string;
let held: string;
let calls: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ctopo-exec-list-'));
  program = join(dir, 'app.sh');
  held = join(dir, 'held');
  calls = join(dir, 'calls');
  await writeFile(
    program,
    [
      '#!/bin/sh',
      'echo "$1 $2" >> "$CALLS"',
      'touch "$HELD"',
      'case "$1" in',
      '  connect) grep -qxF -- "$2" "$HELD" || echo "$2" >> "$HELD" ;;',
      '  disconnect) grep -vxF -- "$2" "$HELD" > "$HELD.new"; mv "$HELD.new" "$HELD" ;;',
      '  list) [ -n "$LIST_BROKEN" ] && { echo "not a node name!"; exit 0; }; cat "$HELD" ;;',
      'esac',
      '',
    ].join('\n'),
    { mode: 0o755 },
  );
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const callLog = () =>
  readFileSync(calls, 'utf8')
    .split('\n')
    .filter(Boolean)
    .filter((l) => !l.startsWith('list'));
const env = (extra: NodeJS.ProcessEnv = {}) => ({
  PATH: process.env.PATH,
  HELD: held,
  CALLS: calls,
  ...extra,
});

describe('exec connector: the list answer', () => {
  it('parses one node per line and refuses a line that is not a node name', () => {
    expect(parseListOutput('a@h\n\n  b@h  \n')).toEqual({ ok: true, nodes: ['a@h', 'b@h'] });
    expect(parseListOutput('a@h\n$(boom)\n')).toMatchObject({ ok: false });
  });

  it('with --exec-list, a round after the application restarted tells it the whole list again', async () => {
    await writeFile(held, '');
    await writeFile(calls, '');
    const c = await createExecConnector({ kind: 'exec', program, list: true }, { env: env() });
    expect(c.connectsStick).toBeUndefined();
    const loop = new RoundLoop({ connector: c, self: 's@h' });
    const peers = ['a@h', 'b@h'];
    await loop.submit({ kind: 'status', peers });
    await loop.submit({ kind: 'status', peers }); // nothing missing: no call
    // Connects run in parallel: their order in the log is not the behaviour under test.
    expect(callLog().sort()).toEqual(['connect a@h', 'connect b@h']);
    await writeFile(held, ''); // the application restarted
    await loop.submit({ kind: 'status', peers });
    expect(callLog().slice(2).sort()).toEqual(['connect a@h', 'connect b@h']);
    expect(readFileSync(held, 'utf8').split('\n').filter(Boolean).sort()).toEqual(peers);
  });

  it('without it, the program is called per change only (the application restarting goes unseen)', async () => {
    await writeFile(held, '');
    await writeFile(calls, '');
    const c = await createExecConnector({ kind: 'exec', program }, { env: env() });
    expect(c.connectsStick).toBe(true);
    const loop = new RoundLoop({ connector: c, self: 's@h' });
    await loop.submit({ kind: 'status', peers: ['a@h'] });
    await writeFile(held, '');
    await loop.submit({ kind: 'status', peers: ['a@h'] });
    expect(callLog()).toEqual(['connect a@h']);
    expect(readFileSync(calls, 'utf8')).not.toContain('list');
  });

  it('an answer that cannot be read is a failure, and the round connects everyone', async () => {
    await writeFile(held, '');
    await writeFile(calls, '');
    const c = await createExecConnector(
      { kind: 'exec', program, list: true },
      { env: env({ LIST_BROKEN: '1' }) },
    );
    const r = await c.connected!();
    expect(r).toMatchObject({ ok: false, failure: 'Error' });
    if (!r.ok) expect(r.error).toMatch(/list: line "not a node name!"/);
    const loop = new RoundLoop({ connector: c, self: 's@h' });
    await loop.submit({ kind: 'status', peers: ['a@h'] });
    await loop.submit({ kind: 'status', peers: ['a@h'] });
    expect(callLog()).toEqual(['connect a@h', 'connect a@h']);
  });
});
