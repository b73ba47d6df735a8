/**
 * Helpers of the agent benchmark (agent.bench.ts):
 *
 * - the exec connector's call log: a fixed shell script appends one line per call,
 *   `<date +%s%N> <action> <node>`, to `calls.log` beside itself; `parseCallLog` reads those
 *   lines (pure) and `CallLogReader` follows the file as it grows;
 * - wall-clock time from `performance.now()` (what the bench measures with) so it can be
 *   compared with the script's `date` (the system's real-time clock);
 * - the CPU time of a process's reaped children (cutime + cstime of /proc/PID/stat): what the
 *   programs the exec connector ran cost.
 */
import { chmod, mkdir, open, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { CLOCK_TICKS } from './proc.js';

export interface Call {
  /** When the script ran, milliseconds since the Unix epoch (sub-millisecond precision). */
  atMs: number;
  action: string;
  node: string;
}

/**
 * Parses call-log text. Only whole lines (ending in a newline) are read; `consumed` is the
 * number of characters they take, so a reader can keep the unfinished tail for later. A
 * whole line that is not `<digits> <action> <node>` throws: the script wrote something else.
 */
export function parseCallLog(text: string): { calls: Call[]; consumed: number } {
  const calls: Call[] = [];
  const end = text.lastIndexOf('\n') + 1;
  for (const line of text.slice(0, end).split('\n')) {
    if (line === '') continue;
    const m = /^(\d{7,}) (\S+) (\S+)$/.exec(line);
    if (!m) throw new Error(`not a call-log line: ${JSON.stringify(line.slice(0, 120))}`);
    calls.push({ atMs: nanosToMs(m[1]!), action: m[2]!, node: m[3]! });
  }
  return { calls, consumed: end };
}

/**
 * A decimal count of nanoseconds as milliseconds, without going through a number of
 * nanoseconds (about 1.8e18 today: past 2^53, so a plain Number would lose the microseconds).
 */
export function nanosToMs(nanos: string): number {
  if (!/^\d+$/.test(nanos)) throw new Error(`not a count of nanoseconds: ${JSON.stringify(nanos)}`);
  const padded = nanos.padStart(7, '0');
  return Number(padded.slice(0, -6)) + Number(padded.slice(-6)) / 1e6;
}

/** The first call of `action` on `node` at or after `afterMs` (calls are in file order). */
export function firstCall(
  calls: readonly Call[],
  action: string,
  node: string,
  afterMs: number,
): Call | undefined {
  return calls.find((c) => c.action === action && c.node === node && c.atMs >= afterMs);
}

export interface Burst {
  startMs: number;
  endMs: number;
  calls: number;
}

/**
 * Groups calls (in time order) into bursts separated by quiet gaps of at least `gapMs`: with
 * nothing changing, each burst is one polling round of the agent (rounds never overlap, and the
 * next one starts a whole polling interval after the previous one ended).
 */
export function bursts(calls: readonly Call[], gapMs: number): Burst[] {
  const out: Burst[] = [];
  let cur: Burst | undefined;
  for (const c of [...calls].sort((a, b) => a.atMs - b.atMs)) {
    if (cur && c.atMs - cur.endMs < gapMs) {
      cur.endMs = c.atMs;
      cur.calls++;
    } else {
      cur = { startMs: c.atMs, endMs: c.atMs, calls: 1 };
      out.push(cur);
    }
  }
  return out;
}

/** The first call of any kind at or after `afterMs`. */
export function firstCallAfter(calls: readonly Call[], afterMs: number): Call | undefined {
  return calls.find((c) => c.atMs >= afterMs);
}

/**
 * The script the exec connector runs. Fixed text: it records the time, the action and the node
 * name it was given (as printf arguments, never evaluated) in calls.log beside itself.
 * `printf` is a shell builtin, so each line is one write() to a file opened for appending.
 */
export const CALL_SCRIPT = [
  '#!/bin/sh',
  '# ctopo agent benchmark: records each connector call as "<ns since epoch> <action> <node>".',
  'now=$(date +%s%N)',
  'printf \'%s %s %s\\n\' "$now" "$1" "$2" >> "${0%/*}/calls.log"',
  '',
].join('\n');

/** Writes the call script into `dir` (created if needed); returns its absolute path and its log's. */
export async function writeCallScript(dir: string): Promise<{ script: string; log: string }> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const script = join(dir, 'record-call.sh');
  const log = join(dir, 'calls.log');
  await writeFile(script, CALL_SCRIPT, { mode: 0o700 });
  await chmod(script, 0o700);
  await writeFile(log, '');
  return { script, log };
}

/** Follows a call log as it grows: every call read so far, in file order. */
export class CallLogReader {
  readonly calls: Call[] = [];
  private offset = 0;
  private tail = '';

  constructor(private readonly path: string) {}

  /** Reads what was appended since the last read; returns the number of new calls. */
  async poll(): Promise<number> {
    const fh = await open(this.path, 'r');
    let text: string;
    try {
      const { size } = await fh.stat();
      if (size <= this.offset) return 0;
      const buf = Buffer.alloc(size - this.offset);
      const { bytesRead } = await fh.read(buf, 0, buf.length, this.offset);
      this.offset += bytesRead;
      text = this.tail + buf.subarray(0, bytesRead).toString('utf8');
    } finally {
      await fh.close();
    }
    const { calls, consumed } = parseCallLog(text);
    this.tail = text.slice(consumed);
    this.calls.push(...calls);
    return calls.length;
  }

  /**
   * Polls every `everyMs` until `find` returns a call, or `timeoutMs` has passed (then
   * undefined). `find` sees every call read so far.
   */
  async waitFor(
    find: (calls: readonly Call[]) => Call | undefined,
    timeoutMs: number,
    everyMs = 5,
  ): Promise<Call | undefined> {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      await this.poll();
      const c = find(this.calls);
      if (c) return c;
      if (performance.now() > deadline) return undefined;
      await new Promise((r) => setTimeout(r, everyMs));
    }
  }

  /** The calls with atMs in [fromMs, toMs). */
  between(fromMs: number, toMs: number): Call[] {
    return this.calls.filter((c) => c.atMs >= fromMs && c.atMs < toMs);
  }
}

/**
 * A pairing of performance.now() with the real-time clock, to turn the one into the other.
 * Date.now() counts whole milliseconds, so the anchor is taken just as it ticks over: the pair
 * is then accurate to well under a millisecond. Take a fresh anchor for each measurement; the
 * two clocks may drift apart slowly (NTP slews the real-time clock, not the monotonic one).
 */
export interface ClockAnchor {
  wallMs: number;
  perfMs: number;
}

export function clockAnchor(): ClockAnchor {
  const start = Date.now();
  let wall = start;
  // Bounded: Date.now() ticks within a millisecond; the cap only guards against a stuck clock.
  for (let i = 0; i < 10_000_000 && wall === start; i++) wall = Date.now();
  return { wallMs: wall, perfMs: performance.now() };
}

/** The real-time clock reading (ms since the epoch) at performance.now() = `perfMs`. */
export function toWallMs(anchor: ClockAnchor, perfMs: number): number {
  return anchor.wallMs + (perfMs - anchor.perfMs);
}

/** CPU seconds (user + system) of a process's children it has waited for: cutime + cstime of /proc/PID/stat. */
export function parseProcStatChildrenCpu(text: string, ticksPerSecond = CLOCK_TICKS): number {
  const close = text.lastIndexOf(')');
  if (close < 0) throw new Error('not /proc/PID/stat text');
  const fields = text
    .slice(close + 2)
    .trim()
    .split(/\s+/); // fields[0] is field 3 (state); cutime is field 16, cstime field 17
  const cutime = Number(fields[13]);
  const cstime = Number(fields[14]);
  if (!Number.isFinite(cutime) || !Number.isFinite(cstime))
    throw new Error('/proc/PID/stat: no cutime/cstime');
  return (cutime + cstime) / ticksPerSecond;
}
