import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ControlPlaneState } from '../../dev/cluster/control-plane.js';
import { freshNamespace, kubectlOk, sharedCluster } from '../support/cluster.js';
import { createPod, setPodStatus } from '../support/objects.js';
import { fixture, runCtopo } from './cli-run.js';

// `ctopo resolve` end to end: the real binary on fixture files, on standard input, and on what
// the real kubectl prints for pods on the real API server.

interface ResolveJson {
  peers: { nodeName: string; pod: string; uid: string; hostSource: string; nameSource: string }[];
  excluded: { pod: string; reason: string; message: string }[];
}

const json = (stdout: string) => JSON.parse(stdout) as ResolveJson;
const pods = (name: string) => fixture('pods', name);

describe('ctopo resolve on fixture files', () => {
  it("the seed's single-replica set-up: host from EXTERNAL_DNS via the annotation", async () => {
    const r = await runCtopo(['resolve', '-f', pods('single-replica.json')]);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(r.stdout).toMatch(/^PEERS \(1\)\n/);
    expect(r.stdout).toMatch(
      /myname-web-0@myname-web\.netzlive\.svc\.cluster\.local +myname-web-0 +10\.42\.0\.17 +Annotation +PodName +no/,
    );
    expect(r.stdout).toContain('EXCLUDED (0)\nno excluded pods');
  });

  it("the seed's several-replica set-up (YAML): pod-IP fallback, and the pending pod excluded", async () => {
    const r = await runCtopo(['resolve', '-f', pods('several-replicas.yaml'), '-o', 'json']);
    expect(r.code).toBe(0);
    const out = json(r.stdout);
    expect(out.peers.map((p) => [p.nodeName, p.hostSource, p.nameSource])).toEqual([
      ['redispatch-7d9c6b5f4-2xkqp@10.42.1.21', 'PodIP', 'PodName'],
      ['redispatch-7d9c6b5f4-9wzlm@10.42.2.8', 'PodIP', 'PodName'],
    ]);
    expect(out.excluded).toEqual([
      {
        pod: 'redispatch-7d9c6b5f4-pending',
        reason: 'NoPodIP',
        message: expect.stringContaining('no IP yet'),
      },
    ]);
  });

  it('the shared-DNS trap: replicas sharing one node name are all excluded, with the fix', async () => {
    const r = await runCtopo(['resolve', '-f', pods('shared-dns.json'), '-o', 'json']);
    expect(r.code).toBe(0);
    const out = json(r.stdout);
    expect(out.peers).toEqual([]);
    expect(out.excluded.map((e) => e.reason)).toEqual([
      'DuplicateNodeName',
      'DuplicateNodeName',
      'DuplicateNodeName',
    ]);
    expect(out.excluded[0]!.message).toContain('myname-web@myname-web.netzlive.svc.cluster.local');
    expect(out.excluded[0]!.message).toContain('${HOSTNAME}@${POD_IP}');
  });

  it('a broken JSONPath: InvalidJSONPath naming the annotation and the problem', async () => {
    const r = await runCtopo(['resolve', '-f', pods('broken-jsonpath.json')]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('PEERS (0)\nno peers');
    expect(r.stdout).toMatch(
      /broken-0 +InvalidJSONPath +the hostname annotation netzlive\/hostname-naming-jsonpath is not a usable JSONPath/,
    );
  });

  it('-o json is exactly {peers, excluded} on one line', async () => {
    const r = await runCtopo(['resolve', '-f', pods('single-replica.json'), '-o', 'json']);
    expect(r.stdout.trimEnd().split('\n')).toHaveLength(1);
    const out = json(r.stdout);
    expect(Object.keys(out)).toEqual(['peers', 'excluded']);
    expect(Object.keys(out.peers[0]!)).toEqual([
      'nodeName',
      'pod',
      'uid',
      'podIP',
      'node',
      'hostSource',
      'nameSource',
      'terminating',
      'ready',
      'serving',
    ]);
  });

  it('--topology applies its spec.naming (a multi-document manifest)', async () => {
    const plain = await runCtopo(['resolve', '-f', pods('custom-annotations.yaml'), '-o', 'json']);
    expect(json(plain.stdout).peers[0]!.nodeName).toBe('ledger-0@10.42.3.3');
    const r = await runCtopo([
      'resolve',
      '-f',
      pods('custom-annotations.yaml'),
      '--topology',
      pods('custom-topology.yaml'),
      '-o',
      'json',
    ]);
    expect(r.code).toBe(0);
    expect(json(r.stdout).peers[0]).toMatchObject({
      nodeName: 'ledger@ledger-0.ledger.payments.svc.cluster.local',
      hostSource: 'Annotation',
      nameSource: 'Annotation',
    });
  });

  it('reads standard input with -f -', async () => {
    const r = await runCtopo(['resolve', '-f', '-'], {
      input: readFileSync(pods('several-replicas.yaml'), 'utf8'),
    });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('PEERS (2)');
  });

  describe('bad input: a clear message on stderr, nothing on stdout, exit 64', () => {
    it.each([
      [['resolve'], 'resolve: say which pods with -f FILE (or -f - for standard input)'],
      [
        ['resolve', '-f', pods('no-such-file.json')],
        `cannot read -f ${pods('no-such-file.json')}: no such file`,
      ],
      [['resolve', '-f', fixture('pods', '')], 'it is a directory'],
      [['resolve', '-f', pods('bad-not-pods.yaml')], 'has kind "Service", not Pod, List or PodList'],
      [['resolve', '-f', pods('bad-truncated.txt')], 'the input is neither valid JSON nor valid YAML (JSON:'],
      [['resolve', '-f', pods('bad-not-yaml.txt')], 'the input is neither valid JSON nor valid YAML (YAML:'],
      [['resolve', '-f', pods('bad-empty.json')], 'the input is empty'],
      [['resolve', '-f', '-'], 'standard input: the input is empty'],
      [
        ['resolve', '-f', pods('single-replica.json'), '--topology', pods('bad-topology.yaml')],
        'is not a valid ClusterTopology:\n  - spec.naming: unknown field "hostAnnotation"\n  - spec.onForbidden: must be one of "Retain", "Disconnect"',
      ],
      [
        ['resolve', '-f', pods('single-replica.json'), '--topology', pods('single-replica.json')],
        'no ClusterTopology found (found: "Pod")',
      ],
      [
        ['resolve', '-f', pods('single-replica.json'), '--topology', pods('nope.yaml')],
        'cannot read --topology',
      ],
      [
        ['resolve', '-f', pods('single-replica.json'), '-o', 'wide'],
        '-o/--output must be table or json, not "wide"',
      ],
      [['resolve', '-f'], "Option '-f, --filename <value>' argument missing"],
    ])('%j', async (args, message) => {
      const r = await runCtopo(args);
      expect(r.code).toBe(64);
      expect(r.stderr).toContain(message);
      expect(r.stdout).toBe('');
    });
  });
});

describe('ctopo resolve on real kubectl output', () => {
  let s: ControlPlaneState;
  let ns: string;
  let dir: string;

  beforeAll(async () => {
    s = await sharedCluster();
    ns = await freshNamespace(s, 'cli-resolve');
    dir = await mkdtemp(join(tmpdir(), 'ctopo-cli-resolve-'));
    await createPod(s, ns, 'myname-web-0', {
      annotations: {
        'netzlive/hostname-naming-jsonpath':
          "$.spec.containers[?(@.name >= '0')].env[?(@.name == 'EXTERNAL_DNS')].value",
      },
      env: [{ name: 'EXTERNAL_DNS', value: 'myname-web.netzlive.svc.cluster.local' }],
    });
    await setPodStatus(s, ns, 'myname-web-0', { ip: '10.7.0.5', ready: true });
    for (const [i, ip] of ['10.7.1.10', '10.7.1.11'].entries()) {
      await createPod(s, ns, `redispatch-${i}`);
      await setPodStatus(s, ns, `redispatch-${i}`, { ip, ready: true });
    }
    await createPod(s, ns, 'pending-0'); // no status: no IP
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('resolves `kubectl get pods -o json` written to a file, keyed by the real pod UIDs', async () => {
    const dump = await kubectlOk(s, ['-n', ns, 'get', 'pods', '-o', 'json']);
    const file = join(dir, 'pods.json');
    await writeFile(file, dump);
    const r = await runCtopo(['resolve', '-f', file, '-o', 'json']);
    expect(r.code).toBe(0);
    const out = json(r.stdout);
    expect(out.peers.map((p) => p.nodeName)).toEqual([
      'myname-web-0@myname-web.netzlive.svc.cluster.local',
      'redispatch-0@10.7.1.10',
      'redispatch-1@10.7.1.11',
    ]);
    const uids = (JSON.parse(dump) as { items: { metadata: { name: string; uid: string } }[] }).items;
    for (const p of out.peers) expect(p.uid).toBe(uids.find((u) => u.metadata.name === p.pod)!.metadata.uid);
    expect(out.excluded).toEqual([{ pod: 'pending-0', reason: 'NoPodIP', message: expect.any(String) }]);
  });

  it('resolves `kubectl get pods -o yaml` piped to -f -', async () => {
    const dump = await kubectlOk(s, ['-n', ns, 'get', 'pods', '-o', 'yaml']);
    const r = await runCtopo(['resolve', '-f', '-'], { input: dump });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('PEERS (3)');
    expect(r.stdout).toMatch(/pending-0 +NoPodIP/);
  });

  it('resolves a single pod from `kubectl get pod NAME -o json`', async () => {
    const dump = await kubectlOk(s, ['-n', ns, 'get', 'pod', 'redispatch-1', '-o', 'json']);
    const r = await runCtopo(['resolve', '-f', '-', '-o', 'json'], { input: dump });
    expect(json(r.stdout).peers.map((p) => p.nodeName)).toEqual(['redispatch-1@10.7.1.11']);
  });
});
