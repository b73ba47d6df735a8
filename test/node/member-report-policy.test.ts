import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { readState, type ControlPlaneState } from '../../dev/cluster/control-plane.js';
import { installCrd } from '../../dev/cluster/crd.js';
import { ApiError, connect } from '../../operator/kube/client.js';
import { memberReport, memberView } from '../../operator/protocol/member-report.js';
import { writeMemberReport } from '../../operator/protocol/member-report-writer.js';
import { kubeconfigForToken, kubectl, kubectlOk } from '../support/cluster.js';
import { EXAMPLES_DIR, renderChart, type K8sObject } from '../support/helm.js';
import { waitFor } from '../support/wait.js';

/**
 * A member can report only itself, on a real node: pods whose processes write reports with the
 * service-account token the kubelet projects into them (the chart's admission policy checks the
 * pod that token is bound to), and the report going when its pod goes (the garbage collector
 * follows the ownerReference). Run only with CTOPO_REAL_NODE=1 (jest project `node`).
 */

let s: ControlPlaneState;
const ns = 'member-reports';
let cleanup: K8sObject[] = [];

/**
 * What runs in each pod: it writes its own report, then (if told of another pod) that pod's, with
 * one server-side apply each, as a reader does (docs/status-protocol.md §8.3), and prints the
 * answers. Plain Node.js, so the image's contents do not matter.
 */
const WRITER = String.raw`
const fs = require('fs'), https = require('https');
const dir = '/var/run/secrets/kubernetes.io/serviceaccount/';
const token = fs.readFileSync(dir + 'token', 'utf8'), ca = fs.readFileSync(dir + 'ca.crt');
const e = process.env, ns = e.POD_NAMESPACE;
const report = (pod, uid) => ({
  apiVersion: 'cluster.netzlive.io/v1alpha1', kind: 'ClusterTopologyMember',
  metadata: { name: pod + '.web', namespace: ns, labels: { 'cluster.netzlive.io/topology': 'web' },
    ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: pod, uid }] },
  spec: { topology: 'web', pod: { name: pod, uid } },
  status: { reportedAt: new Date().toISOString().replace(/\.\d+Z$/, 'Z'), node: pod + '@h', listed: 0, connected: 0,
    invalid: 0, connectedOfListed: '0/0', notConnected: [], selfCheck: { result: 'Unknown', actual: pod + '@h' } },
});
const apply = (r) => new Promise((ok) => {
  const body = JSON.stringify(r);
  const req = https.request({ host: e.KUBERNETES_SERVICE_HOST, port: e.KUBERNETES_SERVICE_PORT, method: 'PATCH', ca,
    path: '/apis/cluster.netzlive.io/v1alpha1/namespaces/' + ns + '/clustertopologymembers/' + r.metadata.name + '?fieldManager=probe&force=true',
    headers: { Authorization: 'Bearer ' + token, 'Content-Type': 'application/apply-patch+yaml', 'Content-Length': Buffer.byteLength(body) } },
    (res) => { let t = ''; res.on('data', (d) => (t += d));
      res.on('end', () => { let m = ''; try { m = JSON.parse(t).message || ''; } catch { m = t; } ok(res.statusCode + ' ' + m); }); });
  req.on('error', (err) => ok('0 ' + err.message));
  req.end(body);
});
(async () => {
  console.log('own ' + (await apply(report(e.POD_NAME, e.POD_UID))));
  if (e.OTHER_POD) console.log('other ' + (await apply(report(e.OTHER_POD, e.OTHER_UID))));
})();
`;

function writerPod(name: string, other?: { name: string; uid: string }) {
  const field = (fieldPath: string) => ({ valueFrom: { fieldRef: { fieldPath } } });
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: ns },
    spec: {
      serviceAccountName: 'web-agent',
      restartPolicy: 'Never',
      containers: [
        {
          name: 'writer',
          image: 'localhost/cluster-topology:dev',
          imagePullPolicy: 'Never',
          command: ['node', '-e', WRITER],
          env: [
            { name: 'POD_NAME', ...field('metadata.name') },
            { name: 'POD_UID', ...field('metadata.uid') },
            { name: 'POD_NAMESPACE', ...field('metadata.namespace') },
            ...(other
              ? [
                  { name: 'OTHER_POD', value: other.name },
                  { name: 'OTHER_UID', value: other.uid },
                ]
              : []),
          ],
        },
      ],
    },
  };
}

const podJson = async (name: string) =>
  JSON.parse(await kubectlOk(s, ['-n', ns, 'get', 'pod', name, '-o', 'json'])) as {
    metadata: { uid: string };
    status: { phase?: string };
  };

async function runToEnd(name: string): Promise<string> {
  await waitFor(
    `pod ${name} to finish`,
    async () => ['Succeeded', 'Failed'].includes((await podJson(name)).status.phase ?? ''),
    180_000,
    500,
  );
  return kubectlOk(s, ['-n', ns, 'logs', name]);
}

beforeAll(async () => {
  const dir = process.env.CTOPO_NODE_STATE_DIR;
  if (!dir)
    throw new Error('CTOPO_NODE_STATE_DIR is not set: run with CTOPO_REAL_NODE=1 (jest project node)');
  s = (await readState(dir))!;
  await installCrd(s);
  await kubectlOk(s, ['create', 'namespace', ns]);
  const rendered = await renderChart('mr', ns);
  cleanup = rendered.filter((o) => o.kind.startsWith('ValidatingAdmissionPolicy'));
  const rbac = parseAllDocuments(await readFile(join(EXAMPLES_DIR, 'agent-rbac.yaml'), 'utf8')).map(
    (d) => d.toJS() as K8sObject & { subjects?: { namespace?: string }[] },
  );
  for (const o of rbac) {
    o.metadata.namespace = ns;
    for (const subj of o.subjects ?? []) subj.namespace = ns;
  }
  await kubectlOk(s, ['apply', '-f', '-'], {
    input: [...cleanup, ...rbac].map((o) => JSON.stringify(o)).join('\n'),
  });
}, 120_000);

afterAll(async () => {
  if (process.env.CTOPO_KEEP_TEST_STATE) return;
  await kubectl(s, ['delete', 'namespace', ns, '--timeout=120s']);
  for (const o of cleanup)
    await kubectl(s, ['delete', o.kind.toLowerCase(), o.metadata.name, '--ignore-not-found']);
}, 180_000);

describe('member reports on a real node, with kubelet-projected tokens', () => {
  it("a pod writes its own report and is refused another pod's, with a message saying which it may write", async () => {
    // b first, so that a can be told b's uid; b writes only its own.
    await kubectlOk(s, ['apply', '-f', '-'], { input: JSON.stringify(writerPod('b')) });
    const bUid = (await podJson('b')).metadata.uid;
    expect(await runToEnd('b')).toMatch(/^own 20[01] /m);
    // The policy acts once the API server has loaded it: a token bound to b (made by the test) is
    // refused another pod's report before a's process runs.
    const token = (
      await kubectlOk(s, [
        '-n',
        ns,
        'create',
        'token',
        'web-agent',
        '--bound-object-kind',
        'Pod',
        '--bound-object-name',
        'b',
      ])
    ).trim();
    const asB = connect({ kubeconfig: await kubeconfigForToken(s, 'member-reports-b.kubeconfig', token) });
    const forged = memberReport(
      { namespace: ns, topology: 'probe', pod: { name: 'nobody', uid: 'x' } },
      memberView({ node: 'nobody@h', pod: 'nobody', connected: [] }),
      new Date(),
    );
    await waitFor('the policy to refuse b another pod report', async () => {
      const w = await writeMemberReport(asB, forged, 'probe');
      return (
        w.outcome === 'forbidden' &&
        w.error instanceof ApiError &&
        /may write only its own/.test(w.error.message)
      );
    });
    await kubectlOk(s, ['apply', '-f', '-'], {
      input: JSON.stringify(writerPod('a', { name: 'b', uid: bUid })),
    });
    const aUid = (await podJson('a')).metadata.uid;
    const log = await runToEnd('a');
    expect(log).toMatch(/^own 20[01] /m);
    expect(log).toMatch(
      new RegExp(
        `^other 403 .*denied request: pod a may write only its own report \\(a\\.<topology> with spec\\.pod name a and uid ${aUid}\\), not b\\.web for pod b$`,
        'm',
      ),
    );
    const stored = JSON.parse(await kubectlOk(s, ['-n', ns, 'get', 'ctm', 'b.web', '-o', 'json'])) as {
      spec: { pod: { uid: string } };
    };
    expect(stored.spec.pod.uid).toBe(bUid); // b's own report, untouched by a
  });

  it('the report goes when its pod goes (ownerReference, garbage collector)', async () => {
    await kubectlOk(s, ['-n', ns, 'get', 'ctm', 'a.web']);
    await kubectlOk(s, ['-n', ns, 'delete', 'pod', 'a', '--wait=true']);
    await waitFor(
      'a.web to be collected',
      async () => (await kubectl(s, ['-n', ns, 'get', 'ctm', 'a.web'])).stderr.includes('NotFound'),
      120_000,
      500,
    );
    expect((await kubectl(s, ['-n', ns, 'get', 'ctm', 'b.web'])).code).toBe(0);
  });
});
