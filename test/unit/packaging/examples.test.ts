import { beforeAll, describe, expect, it } from '@jest/globals';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { validateSpec } from '../../../operator/api/validate.js';
import { CHART_DIR, EXAMPLES_DIR } from './paths.js';

/** The examples agree with the seed, with the chart and with each other (on the API server: test/integration/chart-operator). */

// The seed's annotation, verbatim (seeds/000, "Single replica, stable DNS name").
const SEED_JSONPATH = "$.spec.containers[?(@.name >= '0')].env[?(@.name == 'EXTERNAL_DNS')].value";
/** Where the examples' agents keep the nodes they connected (`--state-file`). */
const STATE_FILE = '/tmp/ctopo-agent-state.json';

type Obj = Record<string, unknown> & { kind: string; metadata: { name: string; namespace?: string } };
interface Container {
  name: string;
  image: string;
  args?: string[];
  env?: { name: string; value?: string; valueFrom?: Record<string, unknown> }[];
  securityContext?: Record<string, unknown>;
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[];
}
interface PodTemplate {
  metadata: { labels: Record<string, string>; annotations?: Record<string, string> };
  spec: {
    serviceAccountName: string;
    containers: Container[];
    volumes: { name: string; emptyDir?: Record<string, unknown> }[];
  };
}

const load = async (f: string) =>
  parseAllDocuments(await readFile(join(EXAMPLES_DIR, f), 'utf8')).map((d) => d.toJS() as Obj);
const template = (o: Obj) => (o.spec as { template: PodTemplate }).template;
const env = (c: Container, n: string) => c.env?.find((e) => e.name === n);

describe('examples/', () => {
  let single: Obj[];
  let multi: Obj[];
  let rbac: Obj[];
  let chartImage: string;
  beforeAll(async () => {
    single = await load('single-replica.yaml');
    multi = await load('multi-replica.yaml');
    rbac = await load('agent-rbac.yaml');
    const chart = parse(await readFile(join(CHART_DIR, 'Chart.yaml'), 'utf8')) as { appVersion: string };
    const values = parse(await readFile(join(CHART_DIR, 'values.yaml'), 'utf8')) as {
      image: { repository: string };
    };
    chartImage = `${values.image.repository}:${chart.appVersion}`;
  });

  it('both set-ups carry the same, valid ClusterTopology "web" (one cluster of every cluster-service pod)', () => {
    const [a] = single.filter((o) => o.kind === 'ClusterTopology');
    const [b] = multi.filter((o) => o.kind === 'ClusterTopology');
    expect(a).toEqual(b);
    expect(a!.metadata.name).toBe('web');
    const check = validateSpec(a!.spec);
    expect(check).toMatchObject({ ok: true });
  });

  it('single replica: the seed’s annotation, EXTERNAL_DNS, one replica that is never two (Recreate), a headless Service for the name', () => {
    const dep = single.find((o) => o.kind === 'Deployment')!;
    const spec = dep.spec as { replicas: number; strategy: { type: string } };
    expect(spec.replicas).toBe(1);
    expect(spec.strategy.type).toBe('Recreate');
    const t = template(dep);
    expect(t.metadata.annotations!['netzlive/hostname-naming-jsonpath']).toBe(SEED_JSONPATH);
    expect(t.metadata.labels['netzlive/pod-type']).toBe('cluster-service');
    const dns = env(t.spec.containers[0]!, 'EXTERNAL_DNS')!.value!;
    expect(dns).toBe('myname-web.netzlive.svc.cluster.local');
    const svc = single.find((o) => o.kind === 'Service')!;
    expect(dns.startsWith(`${svc.metadata.name}.${svc.metadata.namespace}.svc.`)).toBe(true);
    expect(svc.spec).toMatchObject({ clusterIP: 'None', publishNotReadyAddresses: true });
  });

  it('several replicas: no hostname annotation (the pod IP fallback), POD_IP from the downward API', () => {
    const sts = multi.find((o) => o.kind === 'StatefulSet')!;
    expect((sts.spec as { replicas: number }).replicas).toBeGreaterThan(1);
    const t = template(sts);
    expect(t.metadata.annotations?.['netzlive/hostname-naming-jsonpath']).toBeUndefined();
    expect(env(t.spec.containers[0]!, 'POD_IP')!.valueFrom).toEqual({
      fieldRef: { fieldPath: 'status.podIP' },
    });
  });

  it('the agent sidecar: the chart’s image, `ctopo agent --topology web --connector erlang --state-file …` (the file in a mounted emptyDir), RELEASE_NODE as env.sh.eex builds it, cookie from a Secret, hardened', () => {
    for (const [w, host] of [
      [single.find((o) => o.kind === 'Deployment')!, '$(EXTERNAL_DNS)'],
      [multi.find((o) => o.kind === 'StatefulSet')!, '$(POD_IP)'],
    ] as const) {
      const t = template(w);
      const agent = t.spec.containers.find((c) => c.name === 'ctopo-agent')!;
      expect(agent.image).toBe(chartImage);
      expect(agent.args).toEqual([
        'agent',
        '--topology',
        'web',
        '--connector',
        'erlang',
        '--state-file',
        STATE_FILE,
      ]);
      // The state file lies in a volume mounted into the agent that is an emptyDir: writable
      // under a read-only root file system, and it outlives a restart of the agent's container.
      const mount = agent.volumeMounts!.find((m) => STATE_FILE.startsWith(m.mountPath.replace(/\/*$/, '/')));
      expect(mount).toBeDefined();
      expect(mount!.readOnly).not.toBe(true);
      expect(t.spec.volumes.find((v) => v.name === mount!.name)?.emptyDir).toBeDefined();
      expect(env(agent, 'POD_NAME')!.valueFrom).toEqual({ fieldRef: { fieldPath: 'metadata.name' } });
      expect(env(agent, 'RELEASE_NODE')!.value).toBe(`$(POD_NAME)@${host}`);
      expect(env(agent, 'RELEASE_DISTRIBUTION')!.value).toBe('name');
      expect(env(agent, 'RELEASE_COOKIE')!.valueFrom).toEqual({
        secretKeyRef: { name: 'erlang-cookie', key: 'cookie' },
      });
      // $(VAR) only expands variables defined earlier in the same container.
      const names = agent.env!.map((e) => e.name);
      const ref = host.slice(2, -1);
      expect(names.indexOf(ref)).toBeLessThan(names.indexOf('RELEASE_NODE'));
      expect(names.indexOf('POD_NAME')).toBeLessThan(names.indexOf('RELEASE_NODE'));
      expect(agent.securityContext).toMatchObject({
        runAsNonRoot: true,
        readOnlyRootFilesystem: true,
        allowPrivilegeEscalation: false,
      });
      expect(t.spec.serviceAccountName).toBe('web-agent');
    }
  });

  it('rel/*.env.sh.eex set RELEASE_NODE with long names, from HOSTNAME and the same host as the annotations', async () => {
    const one = await readFile(join(EXAMPLES_DIR, 'rel', 'single-replica.env.sh.eex'), 'utf8');
    const many = await readFile(join(EXAMPLES_DIR, 'rel', 'multi-replica.env.sh.eex'), 'utf8');
    for (const f of [one, many]) expect(f).toMatch(/^export RELEASE_DISTRIBUTION=name$/m);
    expect(one).toMatch(/^export RELEASE_NODE="\$\{HOSTNAME\}@\$\{EXTERNAL_DNS\}"$/m);
    expect(many).toMatch(/^export RELEASE_NODE="\$\{HOSTNAME\}@\$\{POD_IP\}"$/m);
  });

  it('agent RBAC: a Role for the one topology "web" and its liveness Lease (resourceNames), bound to the pods’ ServiceAccount; read verbs only, but for member reports', () => {
    const role = rbac.find((o) => o.kind === 'Role')!;
    expect((role as unknown as { rules: unknown[] }).rules).toEqual([
      {
        apiGroups: ['cluster.netzlive.io'],
        resources: ['clustertopologies'],
        resourceNames: ['web'],
        verbs: ['get', 'list', 'watch'],
      },
      // Its liveness Lease (docs/status-protocol.md), and only that one.
      {
        apiGroups: ['coordination.k8s.io'],
        resources: ['leases'],
        resourceNames: ['clustertopology.web'],
        verbs: ['get', 'list', 'watch'],
      },
      // Its member report (docs/status-protocol.md §8); the chart's admission policy limits each pod to its own.
      {
        apiGroups: ['cluster.netzlive.io'],
        resources: ['clustertopologymembers'],
        verbs: ['create', 'update', 'patch'],
      },
    ]);
    const binding = rbac.find((o) => o.kind === 'RoleBinding')!;
    expect(binding).toMatchObject({
      roleRef: { kind: 'Role', name: role.metadata.name },
      subjects: [{ kind: 'ServiceAccount', name: 'web-agent', namespace: 'netzlive' }],
    });
    expect(rbac.find((o) => o.kind === 'ServiceAccount')!.metadata.name).toBe('web-agent');
  });
});
