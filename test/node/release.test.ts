import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { join } from 'node:path';
import { readFile } from 'node:fs/promises';
import { readState, type ControlPlaneState } from '../../dev/cluster/control-plane.js';
import { kubectl, kubectlOk } from '../support/cluster.js';
import { helm, helmBinary, helmOk, parseManifests, repoRoot } from '../support/helm.js';
import { libraryWorkload, meshed, meshView, nodeName, ready, type Pod } from '../support/beam-mesh.js';
import { waitFor } from '../support/wait.js';
import {
  buildRelease,
  readRelease,
  removeReleaseTemp,
  run,
  runOk,
  type Release,
} from '../support/release.js';

/**
 * A release as a team installs it, on the real node (CTOPO_REAL_NODE=1, jest project `node`):
 * `npm run release` in a clean clone of this commit, and again in a clone with one more commit
 * (the next patch version, cut as CONTRIBUTING.md says); then, from those artifacts only, what the
 * chart README tells: the image loaded from the OCI archive, `helm install` of the chart package
 * (its default image pinned by digest), `helm test`, BEAM pods meshing through the OTP library,
 * `ctopo check` from the npm package, `helm upgrade` to the later package with every pod's nodes()
 * sampled each second, the CRD applied by hand, the operator scaled to 0, `helm uninstall`.
 *
 * CTOPO_RELEASE_DIR and CTOPO_RELEASE_LATER_DIR name releases already built, so a shared machine's
 * real node is not held while they build: `node dist/test/support/release.js` builds both.
 */

let s: ControlPlaneState;
const release = 'rel';
const opNs = 'rel-system';
const appNs = 'relapp';
const fullname = `${release}-cluster-topology`;
const COOKIE = 'release-test-cookie';
/** Where tools/node/node.sh puts the node's containerd socket. */
const CONTAINERD_SOCK = '/run/ctopo-node/containerd.sock';

/**
 * The node's containerd takes the image from the OCI archive as the chart README says for a node
 * without a registry: named by its tag and by `<repository>@<digest>`, the name the kubelet asks
 * for when the chart pins the digest (without --digests it tries to pull, and fails here).
 */
async function loadImage(r: Release): Promise<void> {
  const ctr = join(s.node!.dirs.CONTAINERD_DIR, 'ctr');
  await runOk(
    ctr,
    ['-a', CONTAINERD_SOCK, '-n', 'k8s.io', 'images', 'import', '--local'].concat([
      '--base-name',
      'ghcr.io/netzlive/cluster-topology',
      '--digests',
      r.image,
    ]),
    { timeoutMs: 600_000 },
  );
}

/** `ctopo check` of a release's npm package, with Node.js 24 (the repository's) first on PATH. */
const check = (r: Release, args: string[]) =>
  run(r.ctopo, ['check', '--kubeconfig', s.kubeconfig, ...args], {
    env: { PATH: `${join(repoRoot, 'node_modules', '.bin')}:${process.env.PATH ?? ''}` },
  });
const line = (out: string, subject: string) => out.split('\n').find((l) => l.includes(` ${subject}:`)) ?? '';

const json = async <T>(args: string[]) => JSON.parse(await kubectlOk(s, [...args, '-o', 'json'])) as T;
const pods = async (ns: string, selector: string) =>
  (await json<{ items: Pod[] }>(['-n', ns, 'get', 'pods', '-l', selector])).items;
const members = async () =>
  (await pods(appNs, 'app.kubernetes.io/name=myname-api')).filter(
    (p) => !p.metadata.deletionTimestamp && ready(p) && !!p.status.podIP,
  );
/** The image the operator Deployment runs. */
const operatorImage = async () =>
  (
    await json<{ spec: { template: { spec: { containers: { image: string }[] } } } }>([
      '-n',
      opNs,
      'get',
      'deployment',
      fullname,
    ])
  ).spec.template.spec.containers[0]!.image;
const operatorPods = async () =>
  (await pods(opNs, `app.kubernetes.io/instance=${release},app.kubernetes.io/component=operator`)).filter(
    (p) => !p.metadata.deletionTimestamp,
  );

let first: Release;
let later: Release;

beforeAll(async () => {
  const dir = process.env.CTOPO_NODE_STATE_DIR;
  if (!dir)
    throw new Error('CTOPO_NODE_STATE_DIR is not set: run with CTOPO_REAL_NODE=1 (jest project node)');
  s = (await readState(dir))!;
  // One after the other: each build keeps both cores busy.
  first = await readRelease(process.env.CTOPO_RELEASE_DIR ?? (await buildRelease(false)));
  later = await readRelease(process.env.CTOPO_RELEASE_LATER_DIR ?? (await buildRelease(true)));
}, 3_000_000);

afterAll(async () => {
  if (process.env.CTOPO_KEEP_TEST_STATE) return;
  // The releases built here (a handed-over CTOPO_RELEASE_DIR stays) and the installed CLIs.
  await removeReleaseTemp();
  await helm(['uninstall', release, '--namespace', opNs, '--wait'], {
    kubeconfig: s.kubeconfig,
    timeoutMs: 400_000,
  });
  await kubectl(s, ['-n', appNs, 'delete', 'pods', '--all', '--grace-period=0', '--force']);
  await kubectl(s, ['delete', 'namespace', appNs, opNs, '--timeout=120s']);
}, 300_000);

describe('a release, installed from its artifacts on a real node', () => {
  it('the two releases: checksums pass; each names its commit in the image labels and chart annotations; the later one is the next patch version', async () => {
    expect(later.version).not.toBe(first.version);
    expect(later.digest).not.toBe(first.digest);
    for (const r of [first, later]) {
      // Every artifact the release promises, each under the checksums readRelease checked.
      const sums = await readFile(join(r.dir, 'SHA256SUMS'), 'utf8');
      const n = `cluster-topology-${r.version}`;
      for (const artifact of [
        `${n}-image.oci.tar`,
        `${n}-image.digest`,
        `${n}-image.dpkg.txt`,
        `${n}.tgz`,
        `${n}-npm.tgz`,
        `${n}-npm.cdx.json`,
        `${n}-src.tar.gz`,
        `cluster_topology-${r.version}.tar`,
        `cluster_topology-${r.version}-doc.tar.gz`,
        `cluster_topology-${r.version}-src.tar.gz`,
        'RELEASE',
      ])
        expect(sums).toMatch(new RegExp(`^[0-9a-f]{64}  ${artifact.replace(/\./g, '\\.')}$`, 'm'));
      // The Hex package is of this version (Hex's metadata.config inside the tar).
      expect(
        await runOk('tar', ['-xOf', join(r.dir, `cluster_topology-${r.version}.tar`), 'metadata.config']),
      ).toContain(`{<<"version">>,<<"${r.version}">>}`);
      const chart = await helmOk(['show', 'chart', r.chart]);
      expect(chart).toContain(`cluster.netzlive.io/commit: ${r.commit}`);
      expect(chart).toMatch(new RegExp(`^appVersion: ${r.version.replace(/\./g, '\\.')}$`, 'm'));
      expect(await helmOk(['show', 'values', r.chart])).toContain(`digest: '${r.digest}'`);
      const index = await runOk('tar', ['-xOf', r.image, 'index.json']);
      const manifest = JSON.parse(
        await runOk('tar', ['-xOf', r.image, `blobs/sha256/${r.digest.slice('sha256:'.length)}`]),
      ) as { config: { digest: string } };
      expect(index).toContain(r.digest);
      const config = JSON.parse(
        await runOk('tar', [
          '-xOf',
          r.image,
          `blobs/sha256/${manifest.config.digest.slice('sha256:'.length)}`,
        ]),
      ) as { config: { Labels: Record<string, string> } };
      expect(config.config.Labels).toMatchObject({
        'org.opencontainers.image.revision': r.commit,
        'org.opencontainers.image.version': r.version,
      });
    }
  });

  it('helm install of the chart package runs the image loaded from the OCI archive, by digest; helm test passes', async () => {
    await loadImage(first);
    await kubectlOk(s, ['create', 'namespace', appNs]);
    await helmOk(
      [
        'install',
        release,
        first.chart,
        '-n',
        opNs,
        '--create-namespace',
        '--set',
        `scope.namespaces={${appNs}}`,
        '--wait',
        '--timeout',
        '5m',
      ],
      { kubeconfig: s.kubeconfig, timeoutMs: 400_000 },
    );
    expect(await operatorImage()).toBe(`ghcr.io/netzlive/cluster-topology@${first.digest}`);
    // The test pod is deleted once it has passed (hook-succeeded), so there are no logs to show.
    const r = await helm(['test', release, '-n', opNs, '--timeout', '4m'], {
      kubeconfig: s.kubeconfig,
      timeoutMs: 300_000,
    });
    expect({ code: r.code, out: r.code === 0 ? '' : r.stdout + r.stderr }).toEqual({ code: 0, out: '' });
    expect(r.stdout).toMatch(new RegExp(`TEST SUITE:\\s+${fullname}-check\\n(.*\\n){2}Phase:\\s+Succeeded`));
  }, 600_000);

  it('BEAM pods with the OTP library form a mesh; ctopo check (the npm package) is green for the operator and the topology', async () => {
    await kubectlOk(s, ['apply', '-f', '-'], { input: await libraryWorkload(appNs, COOKIE) });
    await waitFor(
      'three meshed BEAM pods',
      async () => {
        const l = await members();
        return l.length === 3 && meshed(l, await meshView(l, COOKIE)) ? true : undefined;
      },
      240_000,
      1000,
    );
    const r = await check(first, ['--operator-namespace', opNs, '-n', appNs, 'web', '--wait', '60s']);
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    expect(line(r.stdout, `${appNs}/web peers`)).toMatch(/^ok .*3 published/);
  }, 300_000);

  it('helm upgrade to the later package: the mesh holds (nodes() sampled each second); the new version leads; ctopo check says the CRD is old until it is applied as the docs say', async () => {
    await loadImage(later);
    const before = await members();
    let sampling = true;
    const broken: string[] = [];
    let samples = 0;
    const sampler = (async () => {
      while (sampling) {
        const view = await meshView(before, COOKIE);
        samples++;
        for (const p of before)
          for (const q of before) {
            const seen = view.get(nodeName(p));
            if (p !== q && !seen?.includes(nodeName(q)))
              broken.push(`${nodeName(p)} ✗ ${nodeName(q)} (${seen ? 'not connected' : 'no answer'})`);
          }
        await new Promise((ok) => setTimeout(ok, 1000));
      }
    })();
    try {
      await helmOk(
        [
          'upgrade',
          release,
          later.chart,
          '-n',
          opNs,
          '--reset-then-reuse-values',
          '--wait',
          '--timeout',
          '5m',
        ],
        { kubeconfig: s.kubeconfig, timeoutMs: 400_000 },
      );
      // The later operator holds the Lease: the old replicas are gone, a new one leads.
      await waitFor(
        'the later version leading',
        async () => {
          const lease = await json<{
            metadata: { annotations?: Record<string, string> };
            spec: { holderIdentity?: string };
          }>(['-n', opNs, 'get', 'lease', fullname]);
          const holder = lease.spec.holderIdentity;
          return lease.metadata.annotations?.['cluster.netzlive.io/operator-version'] === later.version &&
            (await operatorPods()).some((p) => p.metadata.name === holder && ready(p))
            ? true
            : undefined;
        },
        180_000,
        1000,
      );
      // A few more samples with the new leader publishing.
      const more = samples + 5;
      await waitFor('five more samples', () => samples >= more, 60_000, 200);
    } finally {
      sampling = false;
      await sampler;
    }
    expect(broken).toEqual([]);
    expect((await members()).map(nodeName).sort()).toEqual(before.map(nodeName).sort());
    expect(await operatorImage()).toBe(`ghcr.io/netzlive/cluster-topology@${later.digest}`);

    // Helm never upgrades CRDs: the later ctopo says so and names the fix ...
    let r = await check(later, ['--operator-namespace', opNs]);
    expect(r.code).toBe(1);
    expect(line(r.stdout, 'CRD clustertopologies.cluster.netzlive.io')).toContain(
      `is from release ${first.version}, this ctopo is ${later.version}`,
    );
    expect(line(r.stdout, `operator ${opNs}/${fullname}`)).toContain(`version ${later.version}`);
    // ... and the chart README's command applies them.
    await runOk(
      'bash',
      ['-c', `helm show crds "$1" | kubectl apply --server-side --force-conflicts -f -`, 'sh', later.chart],
      {
        env: {
          KUBECONFIG: s.kubeconfig,
          PATH: `${join(s.binaries.kubectl, '..')}:${join(await helmBinary(), '..')}:${process.env.PATH ?? ''}`,
          HELM_CACHE_HOME: '/tmp/ctopo-release-helm/cache',
          HELM_CONFIG_HOME: '/tmp/ctopo-release-helm/config',
          HELM_DATA_HOME: '/tmp/ctopo-release-helm/data',
        },
      },
    );
    r = await check(later, ['--operator-namespace', opNs, '-n', appNs, 'web', '--wait', '60s']);
    // The lines that are not ok, so a failure shows them.
    const notOk = r.stdout.split('\n').filter((l) => /^(FAIL|\?)/.test(l));
    expect({ code: r.code, notOk }).toEqual({ code: 0, notOk: [] });
    expect(line(r.stdout, 'CRD clustertopologies.cluster.netzlive.io')).toContain(`release ${later.version}`);
    expect(line(r.stdout, 'CRD clustertopologymembers.cluster.netzlive.io')).toContain(
      `release ${later.version}`,
    );
  }, 900_000);

  it('the operator scaled to 0: ctopo check is red, saying so and how to scale it up', async () => {
    await kubectlOk(s, ['-n', opNs, 'scale', 'deployment', fullname, '--replicas=0']);
    await waitFor(
      'no operator pod',
      async () => ((await operatorPods()).length === 0 ? true : undefined),
      120_000,
      1000,
    );
    const r = await check(later, ['--operator-namespace', opNs]);
    expect(r.code).toBe(1);
    expect(line(r.stdout, `operator ${opNs}/${fullname}`)).toMatch(/^FAIL .*is scaled to 0 replicas/);
    expect(r.stdout).toContain(`fix: kubectl -n ${opNs} scale deployment ${fullname} --replicas=2`);
  }, 180_000);

  it('helm uninstall removes every object the chart created; what stays is what the chart README says (the CRD, the Leases)', async () => {
    const manifest = parseManifests(
      await helmOk(['get', 'manifest', release, '-n', opNs], { kubeconfig: s.kubeconfig }),
    );
    expect(manifest.length).toBeGreaterThan(10);
    await helmOk(['uninstall', release, '-n', opNs, '--wait', '--timeout', '3m'], {
      kubeconfig: s.kubeconfig,
      timeoutMs: 240_000,
    });
    const left: string[] = [];
    for (const o of manifest) {
      const args = [
        'get',
        o.kind,
        o.metadata.name,
        ...(o.metadata.namespace ? ['-n', o.metadata.namespace] : []),
      ];
      if ((await kubectl(s, args)).code === 0) left.push(`${o.kind} ${o.metadata.name}`);
    }
    expect(left).toEqual([]);
    // Nothing labelled as the release's is left either (the helm test pod included). The
    // Deployment's pods are deleted by the garbage collector after helm's --wait has seen the
    // Deployment go, and end their grace period: waited for, not expected at once.
    const labelledLeft = async () =>
      (
        await kubectlOk(s, [
          'get',
          'all,serviceaccounts,roles,rolebindings,clusterroles,clusterrolebindings,poddisruptionbudgets',
          '-A',
          '-l',
          `app.kubernetes.io/instance=${release}`,
          '-o',
          'name',
        ])
      ).trim();
    let labelled = '';
    await waitFor(
      'nothing labelled as the release left',
      async () => (labelled = await labelledLeft()) === '',
      120_000,
      1000,
    ).catch(() => undefined);
    expect(labelled).toBe('');
    // What the chart README's table says stays:
    await kubectlOk(s, ['get', 'crd', 'clustertopologies.cluster.netzlive.io']);
    await kubectlOk(s, ['-n', opNs, 'get', 'lease', fullname]);
    await kubectlOk(s, ['-n', appNs, 'get', 'lease', 'clustertopology.web']);
    // ... and goes as it says: the leader Lease by hand.
    await kubectlOk(s, ['-n', opNs, 'delete', 'lease', fullname]);
  }, 420_000);
});
