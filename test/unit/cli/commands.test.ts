import { afterEach, describe, expect, it } from '@jest/globals';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fixturePath, runCli } from './helpers.js';

// The commands in-process, through main() (flag parsing, UsageError → 64); the end-to-end runs of
// the real binary are in test/integration/cli-*.test.ts.

const pods = (name: string) => fixturePath('pods', name);
const layout = (name: string) => fixturePath('layouts', name);

describe('ctopo resolve (in process)', () => {
  it('reads pods from standard input and prints exactly {peers, excluded}', async () => {
    const r = await runCli(
      ['resolve', '-f', '-', '-o', 'json'],
      readFileSync(pods('several-replicas.yaml'), 'utf8'),
    );
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.out) as { peers: { nodeName: string }[]; excluded: { reason: string }[] };
    expect(Object.keys(doc)).toEqual(['peers', 'excluded']);
    expect(doc.peers.map((p) => p.nodeName)).toEqual([
      'redispatch-7d9c6b5f4-2xkqp@10.42.1.21',
      'redispatch-7d9c6b5f4-9wzlm@10.42.2.8',
    ]);
    expect(doc.excluded.map((e) => e.reason)).toEqual(['NoPodIP']);
  });

  it('applies the naming of --topology', async () => {
    const r = await runCli([
      'resolve',
      '-f',
      pods('custom-annotations.yaml'),
      '--topology',
      pods('custom-topology.yaml'),
    ]);
    expect(r.code).toBe(0);
    expect(r.out).toContain('ledger@ledger-0.ledger.payments.svc.cluster.local');
  });

  it.each([
    [['resolve'], 'say which pods with -f FILE'],
    [['resolve', '-f', pods('single-replica.json'), '-o', 'yaml'], '-o/--output must be table or json'],
    [['resolve', '-f', pods('single-replica.json'), 'extra'], "Unexpected argument 'extra'"],
    [['resolve', '-f', '-', '--topology', '-'], 'standard input can hold the pods or the topology, not both'],
    [['resolve', '--bogus'], "Unknown option '--bogus'"],
  ])('usage mistakes exit 64: %j', async (argv, message) => {
    const r = await runCli(argv);
    expect(r.code).toBe(64);
    expect(r.err).toContain(message);
    expect(r.out).toBe('');
  });

  it.each([
    ['bad-not-pods.yaml', 'has kind "Service", not Pod, List or PodList'],
    ['bad-truncated.txt', 'neither valid JSON nor valid YAML'],
    ['bad-empty.json', 'the input is empty'],
    ['missing.json', 'no such file'],
  ])('bad input %s exits 64 with a message', async (file, message) => {
    const r = await runCli(['resolve', '-f', pods(file)]);
    expect(r.code).toBe(64);
    expect(r.err).toContain(message);
    expect(r.out).toBe('');
  });

  it('an invalid --topology lists its problems and exits 64', async () => {
    const r = await runCli([
      'resolve',
      '-f',
      pods('single-replica.json'),
      '--topology',
      pods('bad-topology.yaml'),
    ]);
    expect(r.code).toBe(64);
    expect(r.err).toContain(
      'is not a valid ClusterTopology:\n  - spec.naming: unknown field "hostAnnotation"\n  - spec.onForbidden',
    );
  });
});

describe('ctopo analyze --layout (in process)', () => {
  it('seed 003: Breaks, exit 1, the seed table', async () => {
    const r = await runCli(['analyze', '--layout', layout('two-sites.yaml')]);
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/\| site A \(etcd-1, etcd-2\) +\| 1 of 3 +\| No +\|/);
    expect(r.out).toMatch(/\| site B \(etcd-3\) +\| 2 of 3 +\| Yes +\|/);
  });

  it('three sites: Survives, exit 0; -o json is the analysis', async () => {
    const r = await runCli(['analyze', '--layout', layout('three-sites.yaml'), '-o', 'json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({ verdict: 'Survives', quorum: 3 });
  });

  it('reads the layout from standard input', async () => {
    const r = await runCli(['analyze', '--layout', '-'], readFileSync(layout('two-sites.json'), 'utf8'));
    expect(r.code).toBe(1);
  });

  it('an empty layout (no voters) is NoVoters, exit 3', async () => {
    const r = await runCli(['analyze', '--layout', '-'], 'voters: []\n');
    expect(r.code).toBe(3);
    expect(r.out).toContain('NoVoters');
  });

  it('an unplaced voter makes it AtRisk, exit 2', async () => {
    const text =
      'levels: [{key: site}]\nvoters: [{name: a, labels: {site: A}}, {name: b, labels: {site: B}}, {name: c}]\n';
    const r = await runCli(['analyze', '--layout', '-'], text);
    expect(r.code).toBe(2);
    expect(r.out).toContain('AtRisk');
  });

  it('a bad layout prints every problem and exits 64', async () => {
    const r = await runCli(['analyze', '--layout', layout('bad-types.yaml')]);
    expect(r.code).toBe(64);
    expect(r.err).toContain('has 5 problems:');
    expect(r.err.match(/^ {2}- /gm)).toHaveLength(5);
  });

  it.each([
    [['analyze'], 'give a ClusterTopology NAME (live) or --layout FILE (offline)'],
    // NAME with --layout compares them; the layout is read first.
    [['analyze', '--layout', 'x.yaml', 'web'], 'cannot read --layout x.yaml: no such file'],
    [
      ['analyze', '--layout', 'x.yaml', 'web', '-o', 'json'],
      'comparing NAME with --layout prints a list of differences; -o json does not apply',
    ],
    [['analyze', '--layout', 'x.yaml', '-n', 'ns'], '--namespace applies to a live ClusterTopology'],
    [['analyze', 'a', 'b'], 'unexpected argument "b"'],
    [
      ['analyze', 'web', '--kubeconfig', '/nonexistent/kubeconfig'],
      'cannot use --kubeconfig /nonexistent/kubeconfig',
    ],
    [
      ['analyze', '--layout', '/nonexistent/layout.yaml'],
      'cannot read --layout /nonexistent/layout.yaml: no such file',
    ],
  ])('usage mistakes exit 64: %j', async (argv, message) => {
    const r = await runCli(argv);
    expect(r.code).toBe(64);
    expect(r.err).toContain(message);
  });
});

describe('ctopo explain (in process, usage only)', () => {
  it.each([
    [['explain'], 'missing NAME and POD'],
    [['explain', 'web'], 'missing POD'],
    [['explain', 'web', 'pod', 'more'], 'unexpected argument "more"'],
    [['explain', 'web', 'pod', '--kubeconfig', '/nonexistent/kubeconfig'], 'cannot use --kubeconfig'],
  ])('%j exits 64', async (argv, message) => {
    const r = await runCli(argv);
    expect(r.code).toBe(64);
    expect(r.err).toContain(message);
  });
});

describe('analyze and explain without a usable kubeconfig: 69 (cannot tell), never a verdict', () => {
  const saved = { KUBECONFIG: process.env.KUBECONFIG, HOME: process.env.HOME };
  const home = mkdtempSync(join(tmpdir(), 'ctopo-no-kubeconfig-'));
  const garbage = join(home, 'garbage.kubeconfig');
  writeFileSync(garbage, 'apiVersion: v1\nkind: Config\n');
  afterEach(() => {
    for (const [k, v] of Object.entries(saved))
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
  });

  it.each([
    [{ KUBECONFIG: join(home, 'missing') }, `${join(home, 'missing')}: no such file`],
    [{ KUBECONFIG: garbage }, 'no current context'],
    [{ KUBECONFIG: undefined }, `$KUBECONFIG is not set, ${join(home, '.kube', 'config')} does not exist`],
  ])('%j: exit 69 and says why', async (env, why) => {
    process.env.HOME = home;
    if (env.KUBECONFIG === undefined) delete process.env.KUBECONFIG;
    else process.env.KUBECONFIG = env.KUBECONFIG;
    for (const argv of [
      ['analyze', 'web'],
      ['explain', 'web', 'web-0'],
    ]) {
      const r = await runCli(argv);
      expect({ argv, code: r.code, out: r.out }).toEqual({ argv, code: 69, out: '' });
      expect(r.err).toContain(`ctopo ${argv[0]}: no usable kubeconfig`);
      expect(r.err).toContain(why);
    }
  });
});

describe('--help', () => {
  it.each(['resolve', 'analyze', 'explain'])(
    '%s: usage, flags, exit codes, examples incl. the kubectl plugin',
    async (cmd) => {
      const r = await runCli([cmd, '--help']);
      expect(r.code).toBe(0);
      expect(r.out).toContain(`Usage: ctopo ${cmd}`);
      expect(r.out).toContain('Flags:');
      expect(r.out).toContain('Exit status:');
      if (cmd === 'explain')
        for (const line of [
          /^ {2}1 +it is not/m,
          /^ {2}69 +the ClusterTopology is not found or cannot be read/m,
        ])
          expect(r.out).toMatch(line);
      if (cmd === 'analyze')
        // Verdicts apart from "could not analyse".
        for (const line of [
          /^ {2}1 +Breaks/m,
          /^ {2}69 +the ClusterTopology is not found or cannot be read/m,
          /^ {2}4 +Off/m,
        ])
          expect(r.out).toMatch(line);
      expect(r.out).toContain('Examples:');
      expect(r.out).toContain(`kubectl ctopo ${cmd}`);
    },
  );

  it('the overview lists the three commands', async () => {
    const r = await runCli(['--help']);
    for (const cmd of ['resolve', 'analyze', 'explain'])
      expect(r.out).toMatch(new RegExp(`^  ${cmd} +\\S`, 'm'));
  });
});
