import { spawn } from 'node:child_process';
import { constants as fsConstants } from 'node:fs';
import { access, stat } from 'node:fs/promises';

/**
 * Runs one program with an argument array — never through a shell — with a time limit. The child
 * gets its own process group, so on timeout the whole group (the program and anything it
 * started) is killed with SIGKILL and the promise settles even if a grandchild still held the
 * output pipes.
 */

export interface RunOptions {
  readonly env: NodeJS.ProcessEnv;
  readonly timeoutMs: number;
  readonly cwd?: string;
  /** Output kept per stream; the rest is dropped (default 1 MiB). */
  readonly maxOutputBytes?: number;
  /** Called once the child runs, with its pid and exactly the argv it was given. */
  readonly onSpawn?: (info: SpawnInfo) => void;
}

export interface SpawnInfo {
  readonly pid: number;
  readonly file: string;
  readonly args: readonly string[];
}

export interface RunResult {
  /** null when the program could not be started (see `spawnError`) or died by a signal. */
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly timedOut: boolean;
  readonly spawnError?: string;
  readonly ms: number;
}

export function runProcess(file: string, args: readonly string[], opts: RunOptions): Promise<RunResult> {
  const started = performance.now();
  const limit = opts.maxOutputBytes ?? 1024 * 1024;
  return new Promise<RunResult>((resolve) => {
    let settled = false;
    let timedOut = false;
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let outLen = 0;
    let errLen = 0;
    const finish = (r: Omit<RunResult, 'ms' | 'stdout' | 'stderr' | 'timedOut'>): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({
        ...r,
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
        timedOut,
        ms: performance.now() - started,
      });
    };

    const child = spawn(file, [...args], {
      env: opts.env,
      cwd: opts.cwd,
      shell: false,
      detached: true, // own process group, so the timeout can kill everything it started
      stdio: ['ignore', 'pipe', 'pipe'],
      windowsHide: true,
    });
    const killGroup = (): void => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        try {
          child.kill('SIGKILL');
        } catch {
          // already gone
        }
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
      // Settle on exit; if a grandchild escaped the group and holds a pipe, 'close' may never
      // come, so do not wait for it.
    }, opts.timeoutMs);

    child.stdout.on('data', (b: Buffer) => {
      if (outLen < limit) out.push(b.subarray(0, limit - outLen));
      outLen += b.length;
    });
    child.stderr.on('data', (b: Buffer) => {
      if (errLen < limit) err.push(b.subarray(0, limit - errLen));
      errLen += b.length;
    });
    child.on('error', (e) => finish({ code: null, signal: null, spawnError: e.message }));
    child.on('exit', (code, signal) => {
      if (timedOut) {
        finish({ code, signal });
        return;
      }
      // Give the pipes a moment to drain, then settle even if something still holds them.
      const drain = setTimeout(() => {
        killGroup();
        finish({ code, signal });
      }, 200);
      child.on('close', () => {
        clearTimeout(drain);
        finish({ code, signal });
      });
    });
    if (child.pid !== undefined) opts.onSpawn?.({ pid: child.pid, file, args: [...args] });
  });
}

/** One line for logs about how a run ended (never includes the environment). */
export function describeRun(r: RunResult): string {
  if (r.spawnError !== undefined) return `could not start: ${r.spawnError}`;
  if (r.timedOut) return `timed out after ${Math.round(r.ms)} ms and was killed`;
  const tail = (s: string): string => {
    const t = s.trim();
    return t.length > 500 ? `${t.slice(0, 500)}…` : t;
  };
  const why = r.signal !== null ? `killed by ${r.signal}` : `exit code ${r.code}`;
  const stderr = tail(r.stderr);
  const stdout = tail(r.stdout);
  return [why, stderr && `stderr: ${stderr}`, stdout && `stdout: ${stdout}`].filter(Boolean).join('; ');
}

/** A regular file with an execute bit that this process may execute. */
export async function isExecutableFile(path: string): Promise<boolean> {
  try {
    const st = await stat(path);
    // access(X_OK) alone answers yes to root for any file with some x bit, and to directories.
    if (!st.isFile() || (st.mode & 0o111) === 0) return false;
    await access(path, fsConstants.X_OK);
    return true;
  } catch {
    return false;
  }
}
