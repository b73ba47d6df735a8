import { spawn } from 'node:child_process';

/** Runs a script with its stderr lines passed to `log`; resolves with its KEY=VALUE stdout lines. */
export function runScript(
  script: string,
  args: string[],
  log: (line: string) => void,
  env: NodeJS.ProcessEnv = {},
): Promise<Record<string, string>> {
  return new Promise((ok, fail) => {
    const child = spawn('bash', [script, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...env },
    });
    let out = '';
    let pending = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => {
      pending += d.toString();
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const l of lines) if (l.trim()) log(l);
    });
    child.on('error', fail);
    child.on('close', (code) => {
      if (pending.trim()) log(pending);
      if (code !== 0) return fail(new Error(`${script} ${args.join(' ')} exited with ${code}`));
      const kv: Record<string, string> = {};
      for (const line of out.split('\n')) {
        const m = /^([A-Z_]+)=(.*)$/.exec(line);
        if (m) kv[m[1]!] = m[2]!;
      }
      ok(kv);
    });
  });
}
