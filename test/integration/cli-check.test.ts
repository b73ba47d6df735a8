import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import type { ControlPlaneState } from '../../dev/cluster/control-plane.js';
import { kubeconfigForToken, kubeconfigForUser, kubectlOk, privateCluster } from '../support/cluster.js';
import { CHART_DIR, helmOk } from '../support/helm.js';
import { applyTopology, createPod, seedPods, setPodStatus, topologyStatus } from '../support/objects.js';
import { startOperator, type CtopoProcess } from '../support/operator-process.js';
import { runCtopo } from './cli-run.js';

/**
 * `ctopo check` against a real kube-apiserver with the chart installed (a control plane of this
 * file's own: it changes the CRD and deletes ClusterRoles). No controllers run here, so the chart's
 * Deployment never makes pods: the operator runs as a local process with the Deployment's lease,
 * and a pod object named as its identity stands for the leader's pod (its Ready condition set by
 * hand, as a kubelet would).
 */

const release = 'ctk';
const opNs = 'ctopo-system';
const appNs = 'app';
const fullname = `${release}-cluster-topology`;
const leader = `${fullname}-7d9f8b6c5d-abcde`;

describe('ctopo check on a real API server', () => {
  let s: ControlPlaneState;
  let stop: () => Promise<void>;
  let op: CtopoProcess | undefined;
  const check = (args: string[], kubeconfig = s.kubeconfig) =>
    runCtopo(['check', '--kubeconfig', kubeconfig, ...args], { timeoutMs: 90_000 });
  const line = (out: string, subject: string) =>
    out.split('\n').find((l) => l.includes(` ${subject}:`)) ?? '';

  beforeAll(async () => {
    ({ state: s, stop } = await privateCluster());
    await kubectlOk(s, ['create', 'namespace', appNs]);
    await helmOk(
      [
        'install',
        release,
        CHART_DIR,
        '-n',
        opNs,
        '--create-namespace',
        '--set',
        `scope.namespaces={${appNs}}`,
      ],
      { kubeconfig: s.kubeconfig },
    );
    await kubectlOk(s, [
      'wait',
      '--for=condition=Established',
      '--timeout=60s',
      'crd/clustertopologies.cluster.netzlive.io',
    ]);
    await createPod(s, opNs, leader, { labels: { 'app.kubernetes.io/name': 'cluster-topology' } });
    await setPodStatus(s, opNs, leader, { ip: '10.20.0.2', ready: true });
    await seedPods(s, appNs, 2, { subnet: '10.20.1' });
    await applyTopology(s, appNs, 'web', {
      selector: 'netzlive/pod-type=cluster-service',
      pollingInterval: '1s',
    });
  }, 120_000);

  afterAll(async () => {
    await op?.stop();
    await stop?.();
  });

  it('before any replica runs: the operator check fails, saying that no replica took the Lease (exit 1)', async () => {
    const r = await check([]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^ctopo 0\.1\.0 checking https:/);
    expect(line(r.stdout, `operator ${opNs}/${fullname}`)).toMatch(
      /^FAIL .*no replica has taken its Lease: the Deployment ctopo-system\/ctk-cluster-topology wants 2 replica\(s\) and none is ready/,
    );
    for (const crd of ['clustertopologies', 'clustertopologymembers'])
      expect(line(r.stdout, `CRD ${crd}.cluster.netzlive.io`)).toMatch(
        /^ok .*established, serves v1alpha1, release 0\.1\.0/,
      );
  });

  it('installed and running: every check passes, the operator’s version is shown; Meshed is "not reported" (exit 0)', async () => {
    op = startOperator(s.kubeconfig, [
      `--namespaces=${appNs}`,
      '--leader-elect',
      `--lease-namespace=${opNs}`,
      `--lease-name=${fullname}`,
      `--identity=${leader}`,
      '--no-watch-nodes',
    ]);
    const r = await check(['-n', appNs, 'web', '--wait', '60s']);
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    expect(line(r.stdout, `operator ${opNs}/${fullname}`)).toBe(
      `ok    operator ${opNs}/${fullname}: led by pod ${leader} (Ready), version 0.1.0`,
    );
    expect(line(r.stdout, 'reader ClusterRole')).toMatch(new RegExp(`^ok .*${fullname}-agent: get/watch`));
    expect(line(r.stdout, `${appNs}/web live`)).toMatch(/^ok .*the operator renewed its Lease at/);
    expect(line(r.stdout, `${appNs}/web peers`)).toMatch(/^ok .*2 published, 0 excluded$/);
    expect(line(r.stdout, `${appNs}/web Meshed`)).toMatch(/^- .*not reported/);
    expect(r.stdout).not.toMatch(/^FAIL|^\?/m);
    const json = await check(['-n', appNs, 'web', '-o', 'json']);
    expect(json.code).toBe(0);
    const parsed = JSON.parse(json.stdout) as {
      version: string;
      code: number;
      checks: { verdict: string }[];
    };
    expect(parsed.version).toBe('0.1.0');
    expect(parsed.checks.map((c) => c.verdict)).toEqual(['ok', 'ok', 'ok', 'ok', 'ok', 'ok', 'none']);
  });

  it('with the chart’s own check ServiceAccount (what `helm test` runs): every check can be made and passes', async () => {
    const token = (await kubectlOk(s, ['-n', opNs, 'create', 'token', `${fullname}-check`])).trim();
    const kubeconfig = await kubeconfigForToken(s, 'check-sa.kubeconfig', token);
    const r = await check(['--operator-namespace', opNs], kubeconfig);
    expect({ code: r.code, stdout: r.stdout }).toEqual({
      code: 0,
      stdout: expect.not.stringMatching(/^(FAIL|\?)/m),
    });
  });

  it('the leader’s pod not Ready: the operator check fails and names the pod', async () => {
    await setPodStatus(s, opNs, leader, { ip: '10.20.0.2', ready: false });
    const r = await check(['--operator-namespace', opNs]);
    expect(r.code).toBe(1);
    expect(line(r.stdout, `operator ${opNs}/${fullname}`)).toMatch(
      new RegExp(`^FAIL .*led by ${leader} .*whose pod is not Ready`),
    );
    expect(r.stdout).toContain(`fix: kubectl -n ${opNs} describe pod ${leader}`);
    await setPodStatus(s, opNs, leader, { ip: '10.20.0.2', ready: true });
  });

  it('a topology in a namespace the operator does not serve: "no operator serves this namespace" and the chart value to set', async () => {
    await kubectlOk(s, ['create', 'namespace', 'other']);
    await applyTopology(s, 'other', 'lone', { selector: 'x=y' });
    const r = await check(['-n', 'other', 'lone']);
    expect(r.code).toBe(1);
    expect(line(r.stdout, 'other/lone live')).toMatch(
      /^FAIL .*no status and no liveness Lease: no operator serves this namespace/,
    );
    expect(r.stdout).toContain("--set 'scope.namespaces={…,other}'");
    expect(line(r.stdout, 'other/lone peers')).toMatch(/^FAIL .*not published yet/);
  });

  it('the operator scaled to 0: red, saying so, with the command that scales it up (exit 1)', async () => {
    await op!.stop(); // SIGTERM: the leader lets its Lease go, as a pod stopped by a scale-down does
    await kubectlOk(s, ['-n', opNs, 'scale', 'deployment', fullname, '--replicas=0']);
    await kubectlOk(s, ['-n', opNs, 'delete', 'pod', leader, '--wait=false']);
    const r = await check(['-n', appNs, 'web']);
    expect(r.code).toBe(1);
    expect(line(r.stdout, `operator ${opNs}/${fullname}`)).toBe(
      `FAIL  operator ${opNs}/${fullname}: no replica holds its Lease (the last leader let it go); the Deployment ${opNs}/${fullname} is scaled to 0 replicas`,
    );
    expect(r.stdout).toContain(`fix: kubectl -n ${opNs} scale deployment ${fullname} --replicas=2`);
  });

  it('a Meshed condition is read when the status has one: False fails with its message, True passes', async () => {
    const st = await topologyStatus(s, appNs, 'web');
    const meshed = (status: 'True' | 'False', reason: string, message: string) =>
      kubectlOk(s, [
        '-n',
        appNs,
        'patch',
        'ctopo',
        'web',
        '--subresource=status',
        '--type=merge',
        '-p',
        JSON.stringify({
          status: {
            conditions: [
              ...(st?.conditions ?? []).filter((c) => c.type !== 'Meshed'),
              { type: 'Meshed', status, reason, message, lastTransitionTime: new Date().toISOString() },
            ],
          },
        }),
      ]);
    await meshed('False', 'NotConnected', 'web-1 is not connected to web-0');
    let r = await check(['-n', appNs, 'web']);
    expect(line(r.stdout, `${appNs}/web Meshed`)).toBe(
      `FAIL  ${appNs}/web Meshed: NotConnected: web-1 is not connected to web-0`,
    );
    await meshed('True', 'AllConnected', 'every member is connected to every listed peer');
    r = await check(['-n', appNs, 'web']);
    expect(line(r.stdout, `${appNs}/web Meshed`)).toMatch(/^ok .*AllConnected: every member is connected/);
  });

  it('the CRD of another release: the CRD check fails and names the command that applies this release’s CRDs', async () => {
    const crd = 'crd/clustertopologies.cluster.netzlive.io';
    await kubectlOk(s, ['annotate', '--overwrite', crd, 'cluster.netzlive.io/release=0.0.9']);
    try {
      const r = await check([]);
      expect(r.code).toBe(1);
      expect(line(r.stdout, 'CRD clustertopologies.cluster.netzlive.io')).toMatch(
        /^FAIL .*is from release 0\.0\.9, this ctopo is 0\.1\.0: Helm installs CRDs but never upgrades them/,
      );
      expect(r.stdout).toContain(
        'fix: apply the CRDs of this release: kubectl apply --server-side --force-conflicts -f crds/',
      );
    } finally {
      await kubectlOk(s, ['annotate', '--overwrite', crd, 'cluster.netzlive.io/release=0.1.0']);
    }
  });

  it('no reader ClusterRole: the check fails and says how to get one', async () => {
    await kubectlOk(s, ['delete', 'clusterrole', `${fullname}-agent`]);
    const r = await check([]);
    expect(line(r.stdout, 'reader ClusterRole')).toMatch(/^FAIL .*none/);
    expect(r.stdout).toContain('--set rbac.agentClusterRole=true');
  });

  it('a user who may read nothing: every check could not be made, each says which permission (exit 69)', async () => {
    const nobody = await kubeconfigForUser(s, 'nobody');
    const r = await check([], nobody);
    expect(r.code).toBe(69);
    expect(line(r.stdout, 'CRD clustertopologies.cluster.netzlive.io')).toMatch(/^\? .*403/);
    expect(r.stdout).toContain('fix: ask for get on customresourcedefinitions');
    expect(r.stdout).toContain('fix: ask for list on leases');
    expect(r.stdout).not.toMatch(/^FAIL/m);
  });

  it('an API server that does not answer: one sentence on stderr, exit 69', async () => {
    // A port that was free a moment ago: nothing listens there.
    const port = await new Promise<number>((ok) => {
      const srv = createServer().listen(0, '127.0.0.1', () => {
        const p = (srv.address() as { port: number }).port;
        srv.close(() => ok(p));
      });
    });
    const file = join(s.dir, 'nowhere.kubeconfig');
    const text = await readFile(s.kubeconfig, 'utf8');
    await writeFile(file, text.replace(/server: https:\/\/\S+/, `server: https://127.0.0.1:${port}`));
    const r = await check([], file);
    expect(r.code).toBe(69);
    expect(r.stderr).toMatch(
      new RegExp(`^ctopo check: cannot reach the API server at https://127\\.0\\.0\\.1:${port}`),
    );
    expect(r.stdout).toBe('');
  });
});
