import { readdir, readFile } from 'node:fs/promises';

/**
 * The processes on this machine whose command line matches `pattern`, as "pid: argv…", read from
 * /proc (no `ps` needed, and a /proc that cannot be read throws rather than reading as "none").
 */
export async function processesMatching(pattern: RegExp): Promise<string[]> {
  const found: string[] = [];
  for (const pid of await readdir('/proc')) {
    if (!/^\d+$/.test(pid) || Number(pid) === process.pid) continue;
    // A process may end between the listing and the read: then it is not there.
    const cmd = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    const args = cmd.split('\0').filter(Boolean).join(' ');
    if (args && pattern.test(args)) found.push(`${pid}: ${args}`);
  }
  return found;
}
