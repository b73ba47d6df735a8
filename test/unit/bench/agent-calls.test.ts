import { describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { appendFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  bursts,
  CallLogReader,
  firstCall,
  firstCallAfter,
  nanosToMs,
  parseCallLog,
  parseProcStatChildrenCpu,
  toWallMs,
  writeCallScript,
  type Call,
} from '../../../bench/agent-calls.js';

describe('nanosToMs', () => {
  it('keeps the microseconds of a present-day timestamp', () => {
    expect(nanosToMs('1767225600123456789')).toBe(1767225600123 + 0.456789);
    expect(nanosToMs('1767225600123000000')).toBe(1767225600123);
  });
  it('reads small counts', () => {
    expect(nanosToMs('0')).toBe(0);
    expect(nanosToMs('1500000')).toBe(1.5);
    expect(nanosToMs('250')).toBeCloseTo(0.00025, 12);
  });
  it('refuses what is not a count', () => {
    expect(() => nanosToMs('')).toThrow();
    expect(() => nanosToMs('-5')).toThrow();
    expect(() => nanosToMs('1e9')).toThrow();
  });
});

describe('parseCallLog', () => {
  it('reads whole lines and leaves an unfinished one', () => {
    const text =
      '1767225600000000000 connect web-1@10.0.0.1\n' +
      '1767225600001500000 disconnect web-2@10.0.0.2\n' +
      '17672256000';
    const { calls, consumed } = parseCallLog(text);
    expect(calls).toEqual([
      { atMs: 1767225600000, action: 'connect', node: 'web-1@10.0.0.1' },
      { atMs: 1767225600001.5, action: 'disconnect', node: 'web-2@10.0.0.2' },
    ]);
    expect(text.slice(consumed)).toBe('17672256000');
  });
  it('reads nothing from nothing or from half a line', () => {
    expect(parseCallLog('')).toEqual({ calls: [], consumed: 0 });
    expect(parseCallLog('1767225600000000000 conn')).toEqual({ calls: [], consumed: 0 });
  });
  it('throws on a whole line of another shape', () => {
    expect(() => parseCallLog('hello world\n')).toThrow(/not a call-log line/);
    expect(() => parseCallLog('1767225600000000000 connect\n')).toThrow(/not a call-log line/);
    expect(() => parseCallLog('1767225600000000000 connect a b\n')).toThrow(/not a call-log line/);
  });
});

const call = (atMs: number, action: string, node: string): Call => ({ atMs, action, node });

describe('firstCall / firstCallAfter', () => {
  const calls = [
    call(100, 'connect', 'a@h'),
    call(110, 'connect', 'b@h'),
    call(200, 'disconnect', 'a@h'),
    call(300, 'connect', 'a@h'),
  ];
  it('finds the first call of an action on a node at or after a time', () => {
    expect(firstCall(calls, 'connect', 'a@h', 0)).toBe(calls[0]);
    expect(firstCall(calls, 'connect', 'a@h', 101)).toBe(calls[3]);
    expect(firstCall(calls, 'disconnect', 'a@h', 200)).toBe(calls[2]);
    expect(firstCall(calls, 'disconnect', 'b@h', 0)).toBeUndefined();
    expect(firstCall(calls, 'connect', 'a@h', 301)).toBeUndefined();
  });
  it('finds the first call of any kind at or after a time', () => {
    expect(firstCallAfter(calls, 105)).toBe(calls[1]);
    expect(firstCallAfter(calls, 110)).toBe(calls[1]);
    expect(firstCallAfter(calls, 301)).toBeUndefined();
  });
});

describe('bursts', () => {
  it('splits calls at quiet gaps of at least gapMs', () => {
    const calls = [
      call(0, 'connect', 'a@h'),
      call(10, 'connect', 'b@h'),
      call(25, 'connect', 'c@h'),
      call(2025, 'connect', 'a@h'),
      call(2030, 'connect', 'b@h'),
      call(3029, 'connect', 'c@h'), // 999 ms after the previous call: the same burst
      call(5000, 'connect', 'a@h'),
    ];
    expect(bursts(calls, 1000)).toEqual([
      { startMs: 0, endMs: 25, calls: 3 },
      { startMs: 2025, endMs: 3029, calls: 3 },
      { startMs: 5000, endMs: 5000, calls: 1 },
    ]);
  });
  it('orders by time first and accepts no calls', () => {
    expect(bursts([call(5, 'connect', 'b@h'), call(0, 'connect', 'a@h')], 10)).toEqual([
      { startMs: 0, endMs: 5, calls: 2 },
    ]);
    expect(bursts([], 10)).toEqual([]);
  });
});

describe('toWallMs', () => {
  it('moves a performance.now() reading onto the real-time clock of the anchor', () => {
    const anchor = { wallMs: 1_767_225_600_000, perfMs: 5000 };
    expect(toWallMs(anchor, 5000)).toBe(1_767_225_600_000);
    expect(toWallMs(anchor, 5250.5)).toBe(1_767_225_600_250.5);
    expect(toWallMs(anchor, 4000)).toBe(1_767_225_599_000);
  });
});

describe('parseProcStatChildrenCpu', () => {
  // After the command: state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt
  // utime stime cutime cstime …
  const rest = 'S 1 2 3 0 -1 4194304 124 0 0 0 250 50 700 120 20 0 1 0 322623 3133440 410';
  it('adds cutime and cstime, even when the command name has spaces and parentheses', () => {
    expect(parseProcStatChildrenCpu(`4242 (node) ${rest}`)).toBeCloseTo(8.2, 10);
    expect(parseProcStatChildrenCpu(`4242 (a (b) c) ${rest}`, 1000)).toBeCloseTo(0.82, 10);
  });
  it('throws on text that is not /proc/PID/stat', () => {
    expect(() => parseProcStatChildrenCpu('nothing')).toThrow();
    expect(() => parseProcStatChildrenCpu('1 (x) S 1 2 3')).toThrow(/cutime/);
  });
});

describe('the call script and CallLogReader', () => {
  it('records each call as a line parseCallLog reads, and the reader follows the file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ctopo-agent-calls-test-'));
    try {
      const { script, log } = await writeCallScript(dir);
      const reader = new CallLogReader(log);
      expect(await reader.poll()).toBe(0);
      const before = Date.now();
      await new Promise<void>((ok, fail) =>
        execFile(script, ['connect', 'web-0@10.0.0.1'], (e) => (e ? fail(e) : ok())),
      );
      expect(await reader.poll()).toBe(1);
      const [c] = reader.calls;
      expect(c).toMatchObject({ action: 'connect', node: 'web-0@10.0.0.1' });
      expect(c!.atMs).toBeGreaterThanOrEqual(before - 5);
      expect(c!.atMs).toBeLessThanOrEqual(Date.now() + 5);

      // A line written in two pieces is read once it is whole.
      await appendFile(log, '1767225600000000000 disconn');
      expect(await reader.poll()).toBe(0);
      await appendFile(log, 'ect web-0@10.0.0.1\n');
      expect(await reader.poll()).toBe(1);
      expect(reader.calls[1]).toEqual({ atMs: 1767225600000, action: 'disconnect', node: 'web-0@10.0.0.1' });
      expect(reader.between(1767225600000, 1767225600001)).toEqual([reader.calls[1]]);
      expect(await reader.waitFor((cs) => firstCall(cs, 'connect', 'web-0@10.0.0.1', 0), 100)).toBe(c);
      expect(await reader.waitFor(() => undefined, 20)).toBeUndefined();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
