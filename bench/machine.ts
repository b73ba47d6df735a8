/** The machine and software a benchmark ran on, for the report. */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { cpus, loadavg, release, totalmem, type } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Machine } from './report.js';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The CPU model from /proc/cpuinfo text: the first `model name` (x86) or `Model`/`Hardware` (ARM) line. */
export function parseCpuModel(cpuinfo: string): string | undefined {
  for (const key of ['model name', 'Model', 'Hardware', 'cpu model']) {
    const m = new RegExp(`^${key}\\s*:\\s*(.+)$`, 'm').exec(cpuinfo);
    if (m) return m[1]!.trim();
  }
  return undefined;
}

export async function machine(): Promise<Machine> {
  let model: string | undefined;
  try {
    model = parseCpuModel(await readFile('/proc/cpuinfo', 'utf8'));
  } catch {
    /* not Linux */
  }
  return {
    cpuModel: model ?? cpus()[0]?.model ?? 'unknown',
    cores: cpus().length,
    memoryBytes: totalmem(),
    kernel: `${type()} ${release()}`,
    loadAverage: loadavg(),
  };
}

function output(bin: string, args: string[]): Promise<string> {
  return new Promise((ok) =>
    execFile(bin, args, { timeout: 30_000, cwd: repoRoot }, (err, stdout, stderr) =>
      ok(err ? 'unknown' : (stdout || stderr).trim()),
    ),
  );
}

/** Node, the package, the git commit, and (when `binaries` is given) kube-apiserver, etcd, kubectl. */
export async function versions(binaries?: {
  kubeApiserver: string;
  etcd: string;
  kubectl: string;
}): Promise<Record<string, string>> {
  const pkg = JSON.parse(await readFile(join(repoRoot, 'package.json'), 'utf8')) as {
    name: string;
    version: string;
  };
  const commit = await output('git', ['rev-parse', '--short', 'HEAD']);
  const dirty = (await output('git', ['status', '--porcelain'])) !== '';
  const out: Record<string, string> = {
    [pkg.name]: `${pkg.version} (commit ${commit}${dirty ? ', with uncommitted changes' : ''})`,
    node: process.version,
  };
  if (binaries) {
    out['kube-apiserver'] = await output(binaries.kubeApiserver, ['--version']);
    out.etcd = (await output(binaries.etcd, ['--version'])).split('\n')[0] ?? 'unknown';
    const kubectl = await output(binaries.kubectl, ['version', '--client', '-o', 'json']);
    try {
      out.kubectl = (
        JSON.parse(kubectl) as { clientVersion: { gitVersion: string } }
      ).clientVersion.gitVersion;
    } catch {
      out.kubectl = 'unknown';
    }
  }
  return out;
}
