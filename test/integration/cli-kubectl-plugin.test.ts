import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, stat, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import type { ControlPlaneState } from '../../dev/cluster/control-plane.js';
import type { RunResult } from '../support/cluster.js';
import { sharedCluster } from '../support/cluster.js';
import { ctopoBin } from '../support/operator-process.js';
import { fixture } from './cli-run.js';

// bin/ctopo.js is also installed as `kubectl-ctopo` (package.json bin), which makes it a kubectl
// plugin: kubectl finds executables named kubectl-* on PATH. Here the real kubectl runs it.

describe('kubectl ctopo (kubectl plugin)', () => {
  let s: ControlPlaneState;
  let dir: string;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    s = await sharedCluster();
    dir = await mkdtemp(join(tmpdir(), 'ctopo-plugin-'));
    await symlink(ctopoBin, join(dir, 'kubectl-ctopo'));
    // `#!/usr/bin/env node` takes the first node on PATH; the machine's may be too old (it needs
    // ≥ 22.19), so this test's Node goes first, as npm puts the package's Node first.
    env = { ...process.env, PATH: [dirname(process.execPath), dir, process.env.PATH ?? ''].join(delimiter) };
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const kubectl = (args: string[]): Promise<RunResult> =>
    new Promise((ok) => {
      execFile(s.binaries.kubectl, args, { env, timeout: 60_000 }, (err, stdout, stderr) =>
        ok({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr }),
      );
    });

  it('the entry is executable and starts with #!/usr/bin/env node', async () => {
    expect((await stat(ctopoBin)).mode & 0o111).toBe(0o111);
    expect((await readFile(ctopoBin, 'utf8')).split('\n', 1)[0]).toBe('#!/usr/bin/env node');
  });

  it('kubectl plugin list finds it', async () => {
    const r = await kubectl(['plugin', 'list']);
    expect(r.stdout).toContain(join(dir, 'kubectl-ctopo'));
  });

  it('kubectl ctopo analyze --layout prints the table and passes the exit status through', async () => {
    const r = await kubectl(['ctopo', 'analyze', '--layout', fixture('layouts', 'two-sites.yaml')]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('Verdict: Breaks');
    expect(r.stdout).toMatch(/\| site A \(etcd-1, etcd-2\) +\| 1 of 3 +\| No +\|/);
    const ok = await kubectl(['ctopo', 'analyze', '--layout', fixture('layouts', 'three-sites.yaml')]);
    expect(ok.code).toBe(0);
  });

  it('kubectl ctopo resolve -f and kubectl ctopo explain --help work too', async () => {
    const r = await kubectl(['ctopo', 'resolve', '-f', fixture('pods', 'single-replica.json'), '-o', 'json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ peers: [{ pod: 'myname-web-0' }] });
    const help = await kubectl(['ctopo', 'explain', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('kubectl ctopo explain');
  });

  it('kubectl ctopo check reads the cluster and passes its exit status through', async () => {
    const r = await kubectl(['ctopo', 'check', '--kubeconfig', s.kubeconfig, '-o', 'json']);
    const report = JSON.parse(r.stdout) as { code: number; server: string; checks: { subject: string }[] };
    expect(report.server).toBe(s.server);
    expect(report.checks[0]!.subject).toBe('CRD clustertopologies.cluster.netzlive.io');
    expect(r.code).toBe(report.code);
  });

  it('a bad command line exits 64 through kubectl', async () => {
    const r = await kubectl(['ctopo', 'analyze']);
    expect(r.code).toBe(64);
    expect(r.stderr).toContain('give a ClusterTopology NAME (live) or --layout FILE (offline)');
  });
});
