import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ControlPlaneState } from '../../dev/cluster/control-plane.js';
import { freshNamespace, kubeconfigForUser, kubectlOk, sharedCluster } from '../support/cluster.js';
import { applyTopology, createNode, createPod, setPodStatus, topologyStatus } from '../support/objects.js';
import { startOperator, type CtopoProcess } from '../support/operator-process.js';
import { waitFor } from '../support/wait.js';
import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import { fixture, runCtopo } from './cli-run.js';
import { operatorNamespace } from '../support/world.js';

// `ctopo analyze` end to end: offline on layout files, and live on the analysis the real operator
// writes for pods bound to Nodes with failure-domain labels (seed 003's three voters).

const SITE = 'example.com/site';
const HV = 'example.com/hypervisor';

describe('ctopo analyze --layout (offline)', () => {
  it("seed 003 (2+1 over two sites, two voters on one hypervisor): the seed's table, Breaks, exit 1", async () => {
    const r = await runCtopo(['analyze', '--layout', fixture('layouts', 'two-sites.yaml')]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('Verdict: Breaks');
    expect(r.stdout).toMatch(/\| What disappears +\| Voters left +\| Writes still commit +\|/);
    expect(r.stdout).toMatch(/\| site A \(etcd-1, etcd-2\) +\| 1 of 3 +\| No +\|/);
    expect(r.stdout).toMatch(/\| site B \(etcd-3\) +\| 2 of 3 +\| Yes +\|/);
    expect(r.stdout).toMatch(/\| hypervisor hv-1 \(etcd-1, etcd-2\) +\| 1 of 3 +\| No +\|/);
    expect(r.stdout).toMatch(
      /\| the link between sites only +\| 2 of 3 on one side +\| Only on the majority side +\|/,
    );
  });

  it('the JSON layout gives the same analysis; -o json is the analysis document', async () => {
    const yaml = await runCtopo(['analyze', '--layout', fixture('layouts', 'two-sites.yaml'), '-o', 'json']);
    const json = await runCtopo(['analyze', '--layout', fixture('layouts', 'two-sites.json'), '-o', 'json']);
    expect(yaml.code).toBe(1);
    expect(JSON.parse(json.stdout)).toEqual(JSON.parse(yaml.stdout));
    expect(JSON.parse(yaml.stdout)).toMatchObject({
      verdict: 'Breaks',
      voters: 3,
      quorum: 2,
      faultTolerance: 1,
    });
  });

  it('three sites: Survives, exit 0', async () => {
    const r = await runCtopo(['analyze', '--layout', fixture('layouts', 'three-sites.yaml')]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Verdict: Survives');
  });

  it('reads the layout on standard input', async () => {
    const r = await runCtopo(['analyze', '--layout', '-'], {
      input:
        'levels: [{key: zone}]\nvoters: [{name: a, labels: {zone: z1}}, {name: b, labels: {zone: z2}}, {name: c}]\n',
    });
    expect(r.code).toBe(2); // c's zone is unknown: AtRisk
    expect(r.stdout).toContain('Verdict: AtRisk');
  });

  it.each([
    ['bad-types.yaml', 5],
    ['bad-unknown-key.yaml', 3],
    ['bad-within-cycle.yaml', 2],
    ['bad-not-yaml.txt', 2],
  ])('a bad layout (%s) prints every problem, exit 64', async (file, count) => {
    const r = await runCtopo(['analyze', '--layout', fixture('layouts', file)]);
    expect(r.code).toBe(64);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(`has ${count} problem`);
    expect(r.stderr.match(/^ {2}- /gm)).toHaveLength(count);
  });

  it.each([
    [['analyze'], 'give a ClusterTopology NAME (live) or --layout FILE (offline)'],
    [['analyze', '--layout', fixture('layouts', 'none.yaml')], 'no such file'],
    [
      ['analyze', '--layout', fixture('layouts', 'two-sites.yaml'), '-o', 'yaml'],
      '-o/--output must be table or json',
    ],
  ])('usage mistakes exit 64: %j', async (args, message) => {
    const r = await runCtopo(args);
    expect(r.code).toBe(64);
    expect(r.stderr).toContain(message);
  });
});

describe('ctopo analyze NAME (live, the real operator)', () => {
  let s: ControlPlaneState;
  let ns: string;
  let op: CtopoProcess;
  const node = (i: number) => `${ns}-vm-${i}`;
  const analyze = (...extra: string[]) =>
    runCtopo(['analyze', '--kubeconfig', s.kubeconfig, '-n', ns, 'etcd', ...extra]);

  beforeAll(async () => {
    let kubeconfig: string;
    ({ s, ns, kubeconfig } = await operatorNamespace('cli-analyze'));
    // Seed 003: three VMs, two on hypervisor hv-1 at site A, one at site B.
    await createNode(s, node(1), { [SITE]: 'A', [HV]: `${ns}-hv-1` });
    await createNode(s, node(2), { [SITE]: 'A', [HV]: `${ns}-hv-1` });
    await createNode(s, node(3), { [SITE]: 'B', [HV]: `${ns}-hv-2` });
    for (const i of [1, 2, 3]) {
      await createPod(s, ns, `etcd-${i}`, { nodeName: node(i) });
      await setPodStatus(s, ns, `etcd-${i}`, { ip: `10.9.0.${i}`, ready: true });
    }
    await applyTopology(s, ns, 'etcd', {
      selector: 'netzlive/pod-type=cluster-service',
      pollingInterval: '10m',
      failureDomains: { levels: [{ key: SITE }, { key: HV }] },
    });
    op = startOperator(kubeconfig, ['--namespaces', ns, '--no-leader-elect']);
    await op.port();
    await waitFor(
      'the operator to analyse three voters',
      async () => (await topologyStatus(s, ns, 'etcd'))?.failureDomains?.voters === 3,
    ).catch((e: Error) => {
      // Whatever kept the status from being written (a refused status write, say) is in its log.
      throw new Error(`${e.message}\noperator output (last 3000 characters):\n${op.output.slice(-3000)}`);
    });
  });
  afterAll(async () => {
    await op?.stop();
    if (s && ns) await kubectlOk(s, ['delete', 'node', node(1), node(2), node(3), '--ignore-not-found']);
  });

  it("prints the seed's table for the live topology: Breaks, exit 1", async () => {
    const r = await analyze();
    expect(r.stderr).toBe('');
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(new RegExp(`^ClusterTopology ${ns}/etcd\\n`));
    expect(r.stdout).toContain('3 voters (3 votes), 0 learners; quorum 2 of 3');
    expect(r.stdout).toContain('Verdict: Breaks');
    expect(r.stdout).toMatch(/\| site A \(etcd-1, etcd-2\) +\| 1 of 3 +\| No +\|/);
    expect(r.stdout).toMatch(/\| site B \(etcd-3\) +\| 2 of 3 +\| Yes +\|/);
    expect(r.stdout).toMatch(
      new RegExp(`\\| hypervisor ${ns}-hv-1 \\(etcd-1, etcd-2\\) +\\| 1 of 3 +\\| No +\\|`),
    );
  });

  it('-o json prints exactly .status.failureDomains', async () => {
    const r = await analyze('-o', 'json');
    expect(r.code).toBe(1);
    const st = await topologyStatus(s, ns, 'etcd');
    expect(JSON.parse(r.stdout)).toEqual(st!.failureDomains);
  });

  it('relabelling the Nodes (each voter its own site and hypervisor) turns the verdict to Survives, exit 0', async () => {
    await kubectlOk(s, ['label', 'node', node(2), `${SITE}=C`, `${HV}=${ns}-hv-3`, '--overwrite']);
    await waitFor(
      'the status verdict Survives',
      async () => (await topologyStatus(s, ns, 'etcd'))?.failureDomains?.verdict === 'Survives',
    );
    const r = await analyze();
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Verdict: Survives');
    expect(r.stdout).toMatch(/\| site C \(etcd-2\) +\| 2 of 3 +\| Yes +\|/);
    // Every single domain may go; only a partition into three single-vote sides stops writes.
    for (const [level, domain, pod] of [
      ['site', 'A', 'etcd-1'],
      ['site', 'B', 'etcd-3'],
      ['hypervisor', `${ns}-hv-1`, 'etcd-1'],
      ['hypervisor', `${ns}-hv-2`, 'etcd-3'],
      ['hypervisor', `${ns}-hv-3`, 'etcd-2'],
    ])
      expect(r.stdout).toMatch(new RegExp(`\\| ${level} ${domain} \\(${pod}\\) +\\| 2 of 3 +\\| Yes +\\|`));
    expect(r.stdout).toMatch(
      /\| the links between sites only +\| at most 1 of 3 on any side +\| No \(no side holds a majority\) +\|/,
    );
  });

  it('a Node losing its label makes it AtRisk (exit 2), naming the voter of unknown placement', async () => {
    await kubectlOk(s, ['label', 'node', node(3), `${HV}-`]);
    await waitFor(
      'the status verdict AtRisk',
      async () => (await topologyStatus(s, ns, 'etcd'))?.failureDomains?.verdict === 'AtRisk',
    );
    const r = await analyze();
    expect(r.code).toBe(2);
    expect(r.stdout).toContain('Verdict: AtRisk');
    expect(r.stdout).toContain('- hypervisor: 1 vote of unknown placement (etcd-3)');
    await kubectlOk(s, ['label', 'node', node(3), `${HV}=${ns}-hv-2`]);
    await waitFor(
      'Survives again',
      async () => (await topologyStatus(s, ns, 'etcd'))?.failureDomains?.verdict === 'Survives',
    );
  });

  // Issue: "could not analyse" is no longer exit 1, which is Breaks.
  it('a ClusterTopology that does not exist: a clear message, exit 69 (could not analyse)', async () => {
    const r = await runCtopo(['analyze', '--kubeconfig', s.kubeconfig, '-n', ns, 'nope']);
    expect(r.code).toBe(69);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(`ClusterTopology ${ns}/nope not found`);
  });

  it('a ClusterTopology without an analysis yet (no operator serves it): says so, exit 75', async () => {
    const other = await freshNamespace(s, 'cli-analyze-idle');
    await applyTopology(s, other, 'idle', { selector: 'app=idle' });
    const r = await runCtopo(['analyze', '--kubeconfig', s.kubeconfig, '-n', other, 'idle']);
    expect(r.code).toBe(75);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(
      `ClusterTopology ${other}/idle has no failure-domain analysis in its status yet`,
    );
    expect(r.stderr).toContain(`serves namespace ${other}`);
  });

  it('an API server that refuses: a clear message, exit 69 (could not analyse)', async () => {
    const kubeconfig = await kubeconfigForUser(s, `nobody-${ns}`);
    const r = await runCtopo(['analyze', '--kubeconfig', kubeconfig, '-n', ns, 'etcd']);
    // A user without RBAC: the API server answers 403, which is said in one sentence.
    expect(r.code).toBe(69);
    expect(r.stderr).toMatch(/cannot read ClusterTopology .*\/etcd: 403 Forbidden/);
  });
});

describe('declared voters and analysis Off (the real operator)', () => {
  let s: ControlPlaneState;
  let ns: string;
  let op: CtopoProcess;
  const node = (i: number) => `${ns}-n${i}`;

  beforeAll(async () => {
    let kubeconfig: string;
    ({ s, ns, kubeconfig } = await operatorNamespace('cli-voters'));
    for (const [i, site] of [
      [1, 'A'],
      [2, 'B'],
      [3, 'C'],
    ] as const)
      await createNode(s, node(i), { [SITE]: site });
    // A Ra cluster of three voters (one with 2 votes), an observer that replicates without a
    // vote, and two web pods of the same Erlang cluster that are no Ra members at all.
    const pods: [string, number, Record<string, string>, Record<string, string>?][] = [
      ['ra-0', 1, { app: 'chat', ra: 'voter' }],
      ['ra-1', 2, { app: 'chat', ra: 'voter' }, { 'netzlive/votes': '2' }],
      ['ra-2', 3, { app: 'chat', ra: 'voter' }],
      ['observer', 1, { app: 'chat', ra: 'observer' }],
      ['web-0', 1, { app: 'chat' }],
      ['web-1', 2, { app: 'chat' }],
    ];
    for (const [name, i, labels, annotations] of pods) {
      await createPod(s, ns, name, { nodeName: node(i), labels, ...(annotations ? { annotations } : {}) });
      await setPodStatus(s, ns, name, { ip: `10.19.0.${10 + i}`, ready: true });
    }
    await applyTopology(s, ns, 'ra', {
      selector: 'app=chat',
      pollingInterval: '10m',
      failureDomains: {
        levels: [{ key: SITE }],
        voters: { selector: 'ra', learnerSelector: 'ra=observer' },
      },
    });
    await applyTopology(s, ns, 'phoenix', {
      selector: 'app=chat',
      pollingInterval: '10m',
      failureDomains: { analysis: 'Off' },
    });
    op = startOperator(kubeconfig, ['--namespaces', ns, '--no-leader-elect']);
    await op.port();
    await waitFor('both analyses', async () => {
      const [ra, phoenix] = [await topologyStatus(s, ns, 'ra'), await topologyStatus(s, ns, 'phoenix')];
      return ra?.failureDomains?.voters !== undefined && phoenix?.failureDomains?.verdict === 'Off';
    }).catch((e: Error) => {
      throw new Error(`${e.message}\noperator output (last 3000 characters):\n${op.output.slice(-3000)}`);
    });
  });
  afterAll(async () => {
    await op?.stop();
    if (s && ns) await kubectlOk(s, ['delete', 'node', node(1), node(2), node(3), '--ignore-not-found']);
  });

  it('counts only the declared voters, their votes from the annotation; shows the learner', async () => {
    const st = await topologyStatus(s, ns, 'ra');
    expect(st!.peerCount).toBe(6);
    expect(st!.failureDomains).toMatchObject({
      voters: 3,
      votingWeight: 4,
      learners: 1,
      ignoredPeers: 2,
      quorum: 3,
      verdict: 'Breaks', // site B holds 2 of 4 votes: 2 left < 3
    });
    const r = await runCtopo(['analyze', '--kubeconfig', s.kubeconfig, '-n', ns, 'ra']);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(
      '3 voters (4 votes), 1 learner, 2 peers outside the declared voters; quorum 3 of 4',
    );
    expect(r.stdout).toMatch(/\| site A \(observer, ra-0\) +\| 3 of 4 +\| Yes +\|/);
    expect(r.stdout).toMatch(/\| site B \(ra-1\) +\| 2 of 4 +\| No +\|/);
  });

  it('a peer made a learner by its label changes nothing but the learner count', async () => {
    await kubectlOk(s, ['label', 'pod', '-n', ns, 'web-0', 'ra=observer']);
    await waitFor(
      'two learners',
      async () => (await topologyStatus(s, ns, 'ra'))?.failureDomains?.learners === 2,
    );
    const st = await topologyStatus(s, ns, 'ra');
    expect(st!.failureDomains).toMatchObject({
      voters: 3,
      votingWeight: 4,
      ignoredPeers: 1,
      verdict: 'Breaks',
    });
  });

  it('analysis Off: verdict Off, no QuorumAtRisk warning, Quorum column Off, exit 4', async () => {
    const st = await topologyStatus(s, ns, 'phoenix');
    expect(st!.failureDomains).toEqual({ verdict: 'Off' });
    expect(st!.conditions?.find((c) => c.type === 'QuorumAtRisk')).toMatchObject({
      status: 'Unknown',
      reason: 'AnalysisOff',
    });
    const table = await kubectlOk(s, ['get', 'ctopo', '-n', ns, 'phoenix']);
    expect(table).toMatch(/\nphoenix +6 +0 +200 +True +\S+ +Off +/);
    const r = await runCtopo(['analyze', '--kubeconfig', s.kubeconfig, '-n', ns, 'phoenix']);
    expect(r.code).toBe(4);
    expect(r.stdout).toContain('Failure-domain analysis is off (spec.failureDomains.analysis: Off)');
  });
});

describe("the control plane's own etcd (examples/control-plane-etcd.yaml, the real operator)", () => {
  let s: ControlPlaneState;
  let podNs: string;
  let topoNs: string;
  let op: CtopoProcess;
  const HOST = 'kubernetes.io/hostname';
  const node = (i: number) => `${podNs}-cp-${i}`;
  const analyze = (...extra: string[]) =>
    runCtopo(['analyze', '--kubeconfig', s.kubeconfig, '-n', topoNs, 'control-plane-etcd', ...extra]);

  beforeAll(async () => {
    s = await sharedCluster();
    // A stand-in for kube-system: the kubeadm static pods' labels, one etcd per control-plane Node.
    podNs = await freshNamespace(s, 'cli-etcd-system');
    let kubeconfig: string;
    ({ ns: topoNs, kubeconfig } = await operatorNamespace('cli-etcd-ctopo', [podNs]));
    for (const i of [1, 2, 3]) {
      await createNode(s, node(i), { [HOST]: node(i) });
      await createPod(s, podNs, `etcd-${node(i)}`, {
        nodeName: node(i),
        labels: { component: 'etcd', tier: 'control-plane' },
      });
      await setPodStatus(s, podNs, `etcd-${node(i)}`, { ip: `10.19.1.${i}`, ready: true });
    }
    const example = readFileSync(
      new URL('../../../examples/control-plane-etcd.yaml', import.meta.url),
      'utf8',
    )
      .replace('namespace: kube-system', `namespace: ${podNs}`)
      .replace('namespace: ctopo-system', `namespace: ${topoNs}`);
    expect(parseAllDocuments(example)).toHaveLength(1);
    await kubectlOk(s, ['apply', '-f', '-'], { input: example });
    op = startOperator(kubeconfig, [
      '--namespaces',
      topoNs,
      '--allow-target-namespaces',
      podNs,
      '--no-leader-elect',
    ]);
    await op.port();
    await waitFor(
      'the etcd analysis',
      async () => (await topologyStatus(s, topoNs, 'control-plane-etcd'))?.failureDomains?.voters === 3,
    ).catch((e: Error) => {
      throw new Error(`${e.message}\noperator output (last 3000 characters):\n${op.output.slice(-3000)}`);
    });
  });
  afterAll(async () => {
    await op?.stop();
    if (s && podNs) await kubectlOk(s, ['delete', 'node', node(1), node(2), node(3), '--ignore-not-found']);
  });

  it('kubectl get ctopo shows the live verdict; unlabelled region and zone do not cry wolf', async () => {
    const table = await kubectlOk(s, ['get', 'ctopo', '-n', topoNs, 'control-plane-etcd']);
    expect(table).toMatch(/\ncontrol-plane-etcd +3 +0 +200 +True +\S+ +Survives +/);
    const st = await topologyStatus(s, topoNs, 'control-plane-etcd');
    expect(st!.failureDomains!.levels!.map((l) => [l.key, l.state])).toEqual([
      ['topology.kubernetes.io/region', 'NotLabelled'],
      ['topology.kubernetes.io/zone', 'NotLabelled'],
      [HOST, 'Judged'],
    ]);
    expect(st!.conditions?.find((c) => c.type === 'QuorumAtRisk')?.status).toBe('False');
  });

  it('compares a layout (the diagram) with the live placement: the same exits 0, a drifted one 5', async () => {
    const voters = [1, 2, 3].map((i) => `  - { name: etcd-${node(i)}, labels: { ${HOST}: ${node(i)} } }`);
    const match = await runCtopo(
      ['analyze', '--kubeconfig', s.kubeconfig, '-n', topoNs, 'control-plane-etcd', '--layout', '-'],
      { input: `levels: [{ key: ${HOST} }]\nvoters:\n${voters.join('\n')}\n` },
    );
    expect(match.stdout).toContain('matches ClusterTopology');
    expect(match.code).toBe(0);
    const drifted = await runCtopo(
      ['analyze', '--kubeconfig', s.kubeconfig, '-n', topoNs, 'control-plane-etcd', '--layout', '-'],
      {
        input:
          `levels: [{ key: ${HOST} }]\nvoters:\n${voters[0]}\n${voters[1]}\n` +
          `  - { name: etcd-${node(1)}-twin, labels: { ${HOST}: ${node(1)} } }\n`,
      },
    );
    expect(drifted.code).toBe(5);
    expect(drifted.stdout).toContain(`- in the layout, not live: etcd-${node(1)}-twin`);
    expect(drifted.stdout).toContain(`- live, not in the layout: etcd-${node(3)}`);
  });

  it('an etcd member lost from the pods still counts (expectedVoters): AtRisk, exit 2', async () => {
    // No kubelet runs here: a forced delete is what removes a pod at once.
    await kubectlOk(s, ['delete', 'pod', '-n', podNs, `etcd-${node(3)}`, '--grace-period=0', '--force']);
    await waitFor(
      'AtRisk',
      async () =>
        (await topologyStatus(s, topoNs, 'control-plane-etcd'))?.failureDomains?.verdict === 'AtRisk',
    );
    const r = await analyze();
    expect(r.code).toBe(2);
    expect(r.stdout).toContain('(missing voter 1)');
  });
});
