/**
 * What the kernel says about a process: its memory — VmRSS (resident now) and VmHWM (the
 * resident peak over its life) from /proc/PID/status — and the CPU time it has used
 * (utime + stime from /proc/PID/stat).
 */
import { readFile } from 'node:fs/promises';

export interface Memory {
  rssBytes: number;
  peakRssBytes: number;
}

/** Parses the `VmRSS:` and `VmHWM:` lines (in kB) of /proc/PID/status text. */
export function parseProcStatus(text: string): Memory {
  const kb = (key: string) => {
    const m = new RegExp(`^${key}:\\s+(\\d+)\\s+kB$`, 'm').exec(text);
    if (!m) throw new Error(`/proc status has no ${key} line`);
    return Number(m[1]) * 1024;
  };
  return { rssBytes: kb('VmRSS'), peakRssBytes: kb('VmHWM') };
}

export async function processMemory(pid: number): Promise<Memory> {
  return parseProcStatus(await readFile(`/proc/${pid}/status`, 'utf8'));
}

/**
 * The flags a Node.js process runs with: the arguments of /proc/PID/cmdline (NUL-separated)
 * between the executable and the script. `ctopo operator` re-executes itself with its runtime
 * flags (bin/ctopo.js), so this is where to read what was measured.
 */
export function parseNodeFlags(cmdline: string): string[] {
  const args = cmdline.split('\0').filter((a) => a !== '');
  const flags: string[] = [];
  for (const a of args.slice(1)) {
    if (!a.startsWith('-')) break;
    flags.push(a);
  }
  return flags;
}

export async function nodeFlagsOf(pid: number): Promise<string[]> {
  return parseNodeFlags(await readFile(`/proc/${pid}/cmdline`, 'utf8'));
}

/** Reads a process's memory every `everyMs` until stopped. */
export class MemorySampler {
  readonly readings: Memory[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly pid: number,
    private readonly everyMs: number,
  ) {}

  start(): void {
    const read = () =>
      void processMemory(this.pid).then(
        (m) => this.readings.push(m),
        () => {}, // exited: no reading
      );
    read();
    this.timer = setInterval(read, this.everyMs);
  }

  async stop(): Promise<Memory[]> {
    clearInterval(this.timer);
    try {
      this.readings.push(await processMemory(this.pid));
    } catch {
      /* exited */
    }
    return this.readings;
  }
}

/** Clock ticks per second of /proc/PID/stat times (USER_HZ: 100 on every Linux architecture in use). */
export const CLOCK_TICKS = 100;

/** CPU seconds (user + system) from /proc/PID/stat text; the command name may hold spaces and parentheses. */
export function parseProcStatCpu(text: string, ticksPerSecond = CLOCK_TICKS): number {
  const close = text.lastIndexOf(')');
  if (close < 0) throw new Error('not /proc/PID/stat text');
  const fields = text
    .slice(close + 2)
    .trim()
    .split(/\s+/); // fields[0] is field 3 (state)
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  if (!Number.isFinite(utime) || !Number.isFinite(stime)) throw new Error('/proc/PID/stat: no utime/stime');
  return (utime + stime) / ticksPerSecond;
}

export async function processCpuSeconds(pid: number): Promise<number> {
  return parseProcStatCpu(await readFile(`/proc/${pid}/stat`, 'utf8'));
}
