import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { clientDir, repoRoot } from '../../support/beam-client.js';

/**
 * Laptops and CI: an Elixir application with `{:cluster_topology, name: "web"}` in its
 * supervision tree (as it runs in a pod) passes `mix test` where there is no pod — no service
 * account mount, no api_url, no KUBERNETES_SERVICE_HOST: the client's start_link returns
 * `ignore` and says why in one log line. With `enabled: true` the same application does not
 * start, and the error names the missing setting (the negative control).
 */

let dir: string;
let app: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ctopo-laptop-'));
  app = join(dir, 'laptop');
  await cp(join(repoRoot, 'test', 'fixtures', 'beam-client', 'elixir-laptop'), app, { recursive: true });
  const template = await readFile(join(app, 'mix.exs.template'), 'utf8');
  await writeFile(join(app, 'mix.exs'), template.replace('@LIBRARY@', clientDir));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** `mix test` in the application, with an environment as a laptop has it (no Kubernetes). */
function mixTest(extra: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; out: string }> {
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: dir,
    LANG: 'C.UTF-8',
    MIX_HOME: join(dir, 'mix-home'),
    HEX_OFFLINE: '1',
    ...extra,
  };
  return new Promise((resolve) => {
    const c = spawn('mix', ['test'], { cwd: app, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    c.stdout.on('data', (b: Buffer) => (out += b.toString()));
    c.stderr.on('data', (b: Buffer) => (out += b.toString()));
    const t = setTimeout(() => c.kill('SIGKILL'), 300_000);
    c.on('close', (code) => {
      clearTimeout(t);
      resolve({ code, out });
    });
  });
}

/** ExUnit's counts from its summary: "1 test, 0 failures" (Elixir 1.14-1.18) or "Result: 1 passed" (1.20). */
function exunitCounts(out: string): { passed: number; failed: number } | undefined {
  const old = /(\d+) tests?, (\d+) failures?/.exec(out);
  if (old) return { passed: Number(old[1]) - Number(old[2]), failed: Number(old[2]) };
  const result = /^Result: (.*)$/m.exec(out);
  if (!result) return undefined;
  const count = (word: string) => Number(new RegExp(`(\\d+) ${word}`).exec(result[1]!)?.[1] ?? 0);
  return { passed: count('passed'), failed: count('failed') };
}

it('an application with the client in its tree passes mix test outside a pod', async () => {
  // This machine is no pod (else the test would prove nothing).
  expect(existsSync('/var/run/secrets/kubernetes.io/serviceaccount')).toBe(false);
  const r = await mixTest();
  expect({ code: r.code, counts: exunitCounts(r.out) }).toEqual({
    code: 0,
    counts: { passed: 1, failed: 0 },
  });
  // One line says why, and how to turn it on.
  const lines = r.out.split('\n').filter((l) => l.includes('cluster_topology: not started'));
  expect(lines).toHaveLength(1);
  expect(lines[0]).toContain('not in a Kubernetes pod');
  expect(lines[0]).toContain('enabled => true');
}, 360_000);

it('with enabled: true the same application does not start, and the error names the setting', async () => {
  const r = await mixTest({ CT_ENABLED: 'true' });
  expect(r.code).not.toBe(0);
  expect(r.out).toContain('namespace is not set');
  // The application never started, so no test ran.
  expect(exunitCounts(r.out)).toBeUndefined();
}, 360_000);
