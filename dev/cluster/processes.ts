import { spawn } from 'node:child_process';
import { open, readFile } from 'node:fs/promises';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

/** A free TCP port on `host` (a loopback address), found by binding port 0 and letting it go. */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  return (await freePorts([undefined], host))[0]!;
}

/**
 * Distinct free TCP ports on `host`, one per entry: the entry's own port when it is free and not
 * already chosen, else one the kernel picks. Every port stays bound until all are chosen, so no
 * two picks can return the same port (separate picks can: a port reused from a previous run is
 * not bound while the next one is picked, and a state that once recorded two equal ports kept
 * them on every restart).
 */
export async function freePorts(
  preferred: readonly (number | undefined)[],
  host = '127.0.0.1',
): Promise<number[]> {
  const held: Server[] = [];
  try {
    for (const want of preferred) {
      const chosen = held.map(portOf);
      const srv =
        (want !== undefined && !chosen.includes(want) ? await bound(want, host) : undefined) ??
        (await bound(0, host));
      if (!srv) throw new Error(`no free port on ${host}`);
      held.push(srv);
    }
    return held.map(portOf);
  } finally {
    await Promise.all(held.map((srv) => new Promise((ok) => srv.close(ok))));
  }
}

function bound(port: number, host: string): Promise<Server | undefined> {
  return new Promise((ok) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', () => ok(undefined));
    srv.listen(port, host, () => ok(srv));
  });
}

const portOf = (srv: Server) => (srv.address() as AddressInfo).port;

/**
 * Starts a long-running server detached from this process (so `dev-cluster up` can return),
 * its output appended to `logFile`. Returns its pid.
 */
export async function startDetached(binary: string, args: string[], logFile: string): Promise<number> {
  const log = await open(logFile, 'a');
  try {
    const child = spawn(binary, args, { detached: true, stdio: ['ignore', log.fd, log.fd] });
    const pid = await new Promise<number>((ok, fail) => {
      child.once('error', fail);
      child.once('spawn', () => ok(child.pid!));
    });
    child.unref();
    return pid;
  } finally {
    await log.close();
  }
}

/** Whether `pid` is alive and still runs `binary` (a recycled pid is never ours). */
export async function isOurs(pid: number, binary: string): Promise<boolean> {
  try {
    const cmd = await readFile(`/proc/${pid}/cmdline`, 'utf8');
    if (!cmd.split('\0')[0]?.endsWith(binary.split('/').pop()!)) return false;
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    return !/^\d+ \(.*\) Z/.test(stat); // a zombie has exited
  } catch {
    return false;
  }
}

/** SIGTERM, then SIGKILL after `graceMs`; resumes a paused process first so it can exit. */
export async function stopProcess(pid: number, binary: string, graceMs = 15_000): Promise<void> {
  if (!(await isOurs(pid, binary))) return;
  const signal = (s: NodeJS.Signals) => {
    try {
      process.kill(pid, s);
    } catch {
      /* already gone */
    }
  };
  signal('SIGCONT');
  signal('SIGTERM');
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline) {
    if (!(await isOurs(pid, binary))) return;
    await sleep(100);
  }
  signal('SIGKILL');
  for (let i = 0; i < 50 && (await isOurs(pid, binary)); i++) await sleep(100);
}

export async function tail(file: string, lines = 15): Promise<string> {
  try {
    return (await readFile(file, 'utf8')).trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}
