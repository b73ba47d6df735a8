import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import type { ControlPlaneState } from '../../dev/cluster/control-plane.js';
import { freshNamespace, kubectl, kubectlOk, sharedCluster } from '../support/cluster.js';
import {
  CHART_DIR,
  find,
  helm,
  helmOk,
  parseManifests,
  renderChart,
  type K8sObject,
} from '../support/helm.js';
import { waitFor } from '../support/wait.js';
import { parseAllDocuments } from 'yaml';

/**
 * The Helm chart with the real helm: lint, rendering, values refused by the schema with the
 * field named, and `helm install` into the real kube-apiserver (no --wait, no hooks: the test
 * cluster has no controllers, so nothing would ever become ready).
 */

interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}
interface Container {
  name: string;
  args: string[];
  securityContext: Record<string, unknown>;
  resources: { requests?: Record<string, string>; limits?: Record<string, string> };
  livenessProbe: { httpGet: { path: string; port: string } };
  readinessProbe: { httpGet: { path: string; port: string } };
  env: { name: string; valueFrom?: { fieldRef?: { fieldPath: string } } }[];
  volumeMounts: { name: string; mountPath: string }[];
}
interface PodSpec {
  serviceAccountName: string;
  securityContext: Record<string, unknown>;
  containers: Container[];
  volumes: { name: string; emptyDir?: unknown }[];
}
const podSpec = (d: K8sObject) =>
  (d as unknown as { spec: { template: { spec: PodSpec } } }).spec.template.spec;
const rules = (o: K8sObject) => (o as unknown as { rules: Rule[] }).rules;
/** Every (apiGroup, resource, verb, resourceNames) a set of rules grants, as sorted strings. */
const grants = (rs: Rule[]) =>
  rs
    .flatMap((r) =>
      r.apiGroups.flatMap((g) =>
        r.resources.flatMap((res) =>
          r.verbs.map(
            (v) => `${g || 'core'}/${res}:${v}${r.resourceNames ? `[${r.resourceNames.join(',')}]` : ''}`,
          ),
        ),
      ),
    )
    .sort();

describe('helm lint and helm template', () => {
  it('helm lint --strict passes with the default values and with cluster-wide values', async () => {
    for (const sets of [[], ['scope.clusterWide=true', 'scope.allowTargetNamespaces={*}']]) {
      const r = await helm(['lint', '--strict', CHART_DIR, ...sets.flatMap((s) => ['--set', s])]);
      expect(r.stderr + r.stdout).toMatch(/1 chart\(s\) linted, 0 chart\(s\) failed/);
      expect(r.code).toBe(0);
      expect(r.stdout).not.toMatch(/\[(WARNING|ERROR)\]/);
    }
  });

  it('default values: a hardened 2-replica Deployment with leader election, probes, resources, PDB, metrics Service, no ServiceMonitor', async () => {
    const objs = await renderChart('ct', 'ctopo-system');
    const [dep] = find(objs, 'Deployment', 'ct-cluster-topology', 'ctopo-system');
    expect(dep).toBeDefined();
    expect((dep as unknown as { spec: { replicas: number } }).spec.replicas).toBe(2);
    const pod = podSpec(dep!);
    expect(pod.serviceAccountName).toBe('ct-cluster-topology');
    expect(pod.securityContext).toMatchObject({
      runAsNonRoot: true,
      runAsUser: 65532,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    const [c] = pod.containers;
    expect(c!.securityContext).toMatchObject({
      runAsNonRoot: true,
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      privileged: false,
      capabilities: { drop: ['ALL'] },
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(typeof c!.securityContext.runAsUser).toBe('number');
    expect(c!.resources.requests).toMatchObject({ cpu: expect.any(String), memory: expect.any(String) });
    expect(c!.resources.limits).toMatchObject({ memory: expect.any(String) });
    expect(c!.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
    expect(c!.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'http' });
    expect(c!.args).toEqual(
      expect.arrayContaining([
        'operator',
        '--namespaces=ctopo-system',
        '--leader-elect',
        '--lease-namespace=$(POD_NAMESPACE)',
        '--lease-name=ct-cluster-topology',
        '--identity=$(POD_NAME)',
        '--watch-nodes',
      ]),
    );
    const fieldRef = (n: string) => c!.env.find((e) => e.name === n)?.valueFrom?.fieldRef?.fieldPath;
    expect(fieldRef('POD_NAMESPACE')).toBe('metadata.namespace');
    expect(fieldRef('POD_NAME')).toBe('metadata.name');
    // The only writable path is an emptyDir on /tmp.
    expect(c!.volumeMounts).toEqual([{ name: 'tmp', mountPath: '/tmp' }]);
    expect(pod.volumes.find((v) => v.name === 'tmp')?.emptyDir).toBeDefined();

    expect(find(objs, 'PodDisruptionBudget')).toHaveLength(1);
    expect(find(objs, 'Service', 'ct-cluster-topology-metrics')).toHaveLength(1);
    expect(find(objs, 'ServiceMonitor')).toHaveLength(0);
  });

  it('default RBAC: exactly the operator calls, namespaced to the release namespace; Lease get/update by name only; agent ClusterRole reads and writes only member reports', async () => {
    const objs = await renderChart('ct', 'ctopo-system');
    expect(find(objs, 'ClusterRoleBinding').map((o) => o.metadata.name)).toEqual([
      'ct-cluster-topology-nodes',
      'ct-cluster-topology-check',
    ]);
    const [op] = find(objs, 'Role', 'ct-cluster-topology-operator', 'ctopo-system');
    expect(grants(rules(op!))).toEqual(
      [
        'cluster.netzlive.io/clustertopologies:get',
        'cluster.netzlive.io/clustertopologies:list',
        'cluster.netzlive.io/clustertopologies:watch',
        'cluster.netzlive.io/clustertopologies/status:patch',
        'cluster.netzlive.io/clustertopologymembers:list',
        'cluster.netzlive.io/clustertopologymembers:watch',
        'coordination.k8s.io/leases:create',
        'coordination.k8s.io/leases:patch',
        'core/events:create',
        'core/pods:list',
        'core/pods:watch',
      ].sort(),
    );
    const [lease] = find(objs, 'Role', 'ct-cluster-topology-leader-election', 'ctopo-system');
    expect(grants(rules(lease!))).toEqual(
      [
        'coordination.k8s.io/leases:create',
        'coordination.k8s.io/leases:get[ct-cluster-topology]',
        'coordination.k8s.io/leases:update[ct-cluster-topology]',
      ].sort(),
    );
    const [nodes] = find(objs, 'ClusterRole', 'ct-cluster-topology-nodes');
    expect(grants(rules(nodes!))).toEqual(['core/nodes:get', 'core/nodes:list', 'core/nodes:watch']);
    const [agent] = find(objs, 'ClusterRole', 'ct-cluster-topology-agent');
    expect(grants(rules(agent!))).toEqual([
      'cluster.netzlive.io/clustertopologies:get',
      'cluster.netzlive.io/clustertopologies:list',
      'cluster.netzlive.io/clustertopologies:watch',
      'cluster.netzlive.io/clustertopologymembers:create',
      'cluster.netzlive.io/clustertopologymembers:patch',
      'cluster.netzlive.io/clustertopologymembers:update',
      'coordination.k8s.io/leases:get',
      'coordination.k8s.io/leases:list',
      'coordination.k8s.io/leases:watch',
    ]);
    // Nothing anywhere grants a wildcard, secrets, or a write to pods.
    for (const o of objs.filter((o) => o.kind === 'Role' || o.kind === 'ClusterRole'))
      for (const g of grants(rules(o))) {
        expect(g).not.toMatch(/\*|secrets|configmaps/);
        expect(g).not.toMatch(/^core\/pods.*:(create|update|patch|delete)/);
      }
  });

  it('listed namespaces: a Role per namespace (topologies where served, pods also where targeted); no cluster-wide pods', async () => {
    const objs = await renderChart('ct', 'sys', [
      'scope.namespaces={app-a,app-b}',
      'scope.allowTargetNamespaces={shared}',
    ]);
    const [c] = podSpec(find(objs, 'Deployment')[0]!).containers;
    expect(c!.args).toEqual(
      expect.arrayContaining(['--namespaces=app-a,app-b', '--allow-target-namespaces=shared']),
    );
    for (const ns of ['app-a', 'app-b']) {
      const [role] = find(objs, 'Role', 'ct-cluster-topology-operator', ns);
      expect(grants(rules(role!))).toContain('cluster.netzlive.io/clustertopologies/status:patch');
      expect(find(objs, 'RoleBinding', 'ct-cluster-topology-operator', ns)).toHaveLength(1);
    }
    const [shared] = find(objs, 'Role', 'ct-cluster-topology-operator', 'shared');
    expect(grants(rules(shared!))).toEqual(['core/pods:list', 'core/pods:watch']);
    // The release namespace only holds the Lease: it is not served.
    expect(find(objs, 'Role', 'ct-cluster-topology-operator', 'sys')).toHaveLength(0);
    expect(find(objs, 'ClusterRole').flatMap((o) => grants(rules(o)))).not.toContain('core/pods:list');
  });

  it('scope.clusterWide: a ClusterRoleBinding for topologies and pods, no --namespaces; nodes and leader election can be turned off', async () => {
    const objs = await renderChart('ct', 'sys', [
      'scope.clusterWide=true',
      'scope.allowTargetNamespaces={*}',
      'operator.watchNodes=false',
      'operator.leaderElection.enabled=false',
      'operator.replicas=1',
    ]);
    const [c] = podSpec(find(objs, 'Deployment')[0]!).containers;
    expect(c!.args.some((a) => a.startsWith('--namespaces'))).toBe(false);
    expect(c!.args).toEqual(
      expect.arrayContaining(['--allow-target-namespaces=*', '--no-watch-nodes', '--no-leader-elect']),
    );
    expect(find(objs, 'ClusterRoleBinding').map((o) => o.metadata.name)).toEqual([
      'ct-cluster-topology-operator',
      'ct-cluster-topology-check',
    ]);
    expect(grants(rules(find(objs, 'ClusterRole', 'ct-cluster-topology-operator')[0]!))).toEqual(
      expect.arrayContaining([
        'core/pods:list',
        'core/pods:watch',
        'cluster.netzlive.io/clustertopologies:watch',
      ]),
    );
    // No Role for the operator (the helm test's read-only Role stays).
    expect(find(objs, 'Role').map((o) => o.metadata.name)).toEqual(['ct-cluster-topology-check']);
    expect(find(objs, 'PodDisruptionBudget')).toHaveLength(0);
  });

  it('the ServiceMonitor is rendered only when asked for, scraping the metrics Service', async () => {
    const objs = await renderChart('ct', 'sys', [
      'metrics.serviceMonitor.enabled=true',
      'metrics.serviceMonitor.labels.release=prom',
    ]);
    const [sm] = find(objs, 'ServiceMonitor');
    expect(sm).toMatchObject({
      apiVersion: 'monitoring.coreos.com/v1',
      metadata: { labels: { release: 'prom' } },
      spec: { endpoints: [{ port: 'http-metrics', path: '/metrics' }] },
    });
  });

  it('helm test: a hook pod runs ctopo check against the release, with a ServiceAccount that may only read; test.enabled=false leaves it all out', async () => {
    const objs = await renderChart('ct', 'ctopo-system');
    const [pod] = find(objs, 'Pod', 'ct-cluster-topology-check', 'ctopo-system');
    const meta = pod!.metadata as { annotations?: Record<string, string> };
    expect(meta.annotations).toMatchObject({
      'helm.sh/hook': 'test',
      'helm.sh/hook-delete-policy': 'before-hook-creation,hook-succeeded',
    });
    const spec = pod as unknown as {
      spec: { serviceAccountName: string; containers: { image: string; args: string[] }[] };
    };
    expect(spec.spec.serviceAccountName).toBe('ct-cluster-topology-check');
    expect(spec.spec.containers[0]).toMatchObject({
      image: 'ghcr.io/netzlive/cluster-topology:0.1.0',
      args: ['check', '--operator-namespace=ctopo-system', '--wait=2m'],
    });
    const [cr] = find(objs, 'ClusterRole', 'ct-cluster-topology-check');
    const [role] = find(objs, 'Role', 'ct-cluster-topology-check', 'ctopo-system');
    expect([...grants(rules(cr!)), ...grants(rules(role!))].sort()).toEqual(
      [
        'apiextensions.k8s.io/customresourcedefinitions:get[clustertopologies.cluster.netzlive.io,clustertopologymembers.cluster.netzlive.io]',
        'apps/deployments:list',
        'coordination.k8s.io/leases:list',
        'core/pods:get',
        'rbac.authorization.k8s.io/clusterroles:list',
      ].sort(),
    );
    const off = await renderChart('ct', 'ctopo-system', ['test.enabled=false']);
    expect(off.filter((o) => o.metadata.name === 'ct-cluster-topology-check')).toEqual([]);
  });

  it('the CRDs ship in crds/ (helm template --include-crds)', async () => {
    const objs = parseManifests(await helmOk(['template', 'ct', CHART_DIR, '--include-crds']));
    expect(find(objs, 'CustomResourceDefinition', 'clustertopologies.cluster.netzlive.io')).toHaveLength(1);
    expect(find(objs, 'CustomResourceDefinition', 'clustertopologymembers.cluster.netzlive.io')).toHaveLength(
      1,
    );
  });

  it('helm show crds prints each CRD as a document of its own (the chart README pipes it to kubectl apply)', async () => {
    const docs = parseAllDocuments(await helmOk(['show', 'crds', CHART_DIR]));
    expect(docs.flatMap((d) => d.errors.map((e) => e.message))).toEqual([]);
    expect(docs.map((d) => (d.toJS() as K8sObject).metadata.name).sort()).toEqual([
      'clustertopologies.cluster.netzlive.io',
      'clustertopologymembers.cluster.netzlive.io',
    ]);
  });

  it('the member-report admission policy and its binding are rendered unless turned off; exempt namespaces are matched out', async () => {
    const objs = await renderChart('ct', 'sys', [
      'memberReports.exemptServiceAccountNamespaces={kube-system,ops}',
    ]);
    const [policy] = find(
      objs,
      'ValidatingAdmissionPolicy',
      'ct-cluster-topology-member-reports',
    ) as unknown as Array<{
      spec: { matchConditions: { name: string; expression: string }[]; failurePolicy: string };
    }>;
    expect(policy!.spec.failurePolicy).toBe('Fail');
    expect(policy!.spec.matchConditions).toEqual([
      {
        name: 'from-a-service-account',
        expression: "request.userInfo.username.startsWith('system:serviceaccount:')",
      },
      {
        name: 'not-exempt',
        expression:
          "!request.userInfo.username.startsWith('system:serviceaccount:kube-system:') && !request.userInfo.username.startsWith('system:serviceaccount:ops:')",
      },
    ]);
    expect(find(objs, 'ValidatingAdmissionPolicyBinding', 'ct-cluster-topology-member-reports')).toEqual([
      expect.objectContaining({
        spec: { policyName: 'ct-cluster-topology-member-reports', validationActions: ['Deny'] },
      }),
    ]);
    const none = await renderChart('ct', 'sys', ['memberReports.exemptServiceAccountNamespaces=null']);
    expect(
      (find(none, 'ValidatingAdmissionPolicy')[0] as unknown as typeof policy)!.spec.matchConditions.map(
        (c) => c.name,
      ),
    ).toEqual(['from-a-service-account']);
    const off = await renderChart('ct', 'sys', ['memberReports.admissionPolicy=false']);
    expect(off.filter((o) => o.kind.startsWith('ValidatingAdmissionPolicy'))).toEqual([]);
  });

  it('aggregated view/edit ClusterRoles: viewers read ClusterTopology objects, editors write them, nobody the status', async () => {
    const objs = parseManifests(await helmOk(['template', 'ct', CHART_DIR]));
    const [view] = find(objs, 'ClusterRole', 'ct-cluster-topology-view') as unknown as Array<{
      metadata: { labels: Record<string, string> };
      rules: Array<{ resources: string[]; verbs: string[] }>;
    }>;
    const [edit] = find(objs, 'ClusterRole', 'ct-cluster-topology-edit') as unknown as (typeof view)[];
    expect(view!.metadata.labels['rbac.authorization.k8s.io/aggregate-to-view']).toBe('true');
    expect(view!.rules).toEqual([
      {
        apiGroups: ['cluster.netzlive.io'],
        resources: ['clustertopologies', 'clustertopologies/status', 'clustertopologymembers'],
        verbs: ['get', 'list', 'watch'],
      },
    ]);
    expect(edit!.metadata.labels['rbac.authorization.k8s.io/aggregate-to-edit']).toBe('true');
    expect(edit!.metadata.labels['rbac.authorization.k8s.io/aggregate-to-view']).toBeUndefined();
    // Editors may delete member reports; only member pods write them.
    expect(edit!.rules).toEqual([
      {
        apiGroups: ['cluster.netzlive.io'],
        resources: ['clustertopologies'],
        verbs: ['create', 'update', 'patch', 'delete', 'deletecollection'],
      },
      {
        apiGroups: ['cluster.netzlive.io'],
        resources: ['clustertopologymembers'],
        verbs: ['delete', 'deletecollection'],
      },
    ]);
    const off = parseManifests(
      await helmOk(['template', 'ct', CHART_DIR, '--set', 'rbac.aggregateToDefaultRoles=false']),
    );
    expect(find(off, 'ClusterRole', 'ct-cluster-topology-view')).toHaveLength(0);
  });

  it.each([
    [['operator.replicas=two'], /\/operator\/replicas.*got string, want integer/],
    [['scope.namespaces={Not_A_Namespace}'], /\/scope\/namespaces\/0.*does not match pattern/],
    [['scope.namespacez={a}'], /\/scope.*additional properties 'namespacez' not allowed/],
    [['operator.logLevel=verbose'], /\/operator\/logLevel.*value must be one of/],
    [
      ['memberReports.exemptServiceAccountNamespaces={Kube_System}'],
      /\/memberReports\/exemptServiceAccountNamespaces\/0.*does not match pattern/,
    ],
    [
      ['operator.leaderElection.leaseDuration=15sec'],
      /\/operator\/leaderElection\/leaseDuration.*does not match pattern/,
    ],
    [
      ['operator.securityContext.readOnlyRootFilesystem=false'],
      /\/operator\/securityContext\/readOnlyRootFilesystem/,
    ],
    [['operator.podSecurityContext.runAsNonRoot=false'], /\/operator\/podSecurityContext\/runAsNonRoot/],
    // The documented hardening cannot be weakened through values.
    [
      ['operator.securityContext.capabilities.add={NET_ADMIN}'],
      /\/operator\/securityContext\/capabilities\/add/,
    ],
    [
      ['operator.securityContext.capabilities.drop={NET_RAW}'],
      /\/operator\/securityContext\/capabilities\/drop/,
    ],
    [
      ['operator.securityContext.seccompProfile.type=Unconfined'],
      /\/operator\/securityContext\/seccompProfile\/type/,
    ],
    [
      ['operator.podSecurityContext.seccompProfile.type=Unconfined'],
      /\/operator\/podSecurityContext\/seccompProfile\/type/,
    ],
    [
      ['operator.securityContext.allowPrivilegeEscalation=true'],
      /\/operator\/securityContext\/allowPrivilegeEscalation/,
    ],
    [['operator.securityContext.privileged=true'], /\/operator\/securityContext\/privileged/],
    [['operator.resources.limits.memory=64Mi'], /\/operator\/resources\/limits\/memory/],
    [['operator.resources.limits.memory=100M'], /\/operator\/resources\/limits\/memory/],
    [['operator.resources.limits.memory=0.1Gi'], /\/operator\/resources\/limits\/memory/],
    [['image.digest=sha256:nope'], /\/image\/digest.*does not match pattern/],
    [['scope.clusterWide=true', 'scope.namespaces={a}'], /\/scope\/namespaces.*maxItems/],
    [['scope.allowTargetNamespaces={*}'], /\/scope\/allowTargetNamespaces\/0/],
    [['operator.leaderElection.enabled=false'], /\/operator\/replicas.*maximum/],
    [
      ['podDisruptionBudget.minAvailable=2'],
      /podDisruptionBudget\.minAvailable must be smaller than operator\.replicas/,
    ],
  ])('bad values %j: helm template fails naming the field', async (sets, message) => {
    const r = await helm(['template', 'ct', CHART_DIR, ...sets.flatMap((s) => ['--set', s])]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(message);
  });

  it.each([
    [['operator.resources.limits.memory=128Mi']],
    [['operator.resources.limits.memory=1Gi']],
    [['operator.resources.limits.memory=512M']],
    [['operator.resources.limits.memory=268435456']],
    [
      [
        'operator.securityContext.seccompProfile.type=Localhost',
        'operator.securityContext.seccompProfile.localhostProfile=p.json',
      ],
    ],
  ])('values that keep the hardening render: %j', async (sets) => {
    const r = await helm(['template', 'ct', CHART_DIR, ...sets.flatMap((s) => ['--set', s])]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
  });
});

describe('helm install into the real API server', () => {
  let s: ControlPlaneState;
  const release = `ct-${randomBytes(3).toString('hex')}`;
  const ns = `ctopo-system-${randomBytes(3).toString('hex')}`;
  const fullname = `${release}-cluster-topology`;

  beforeAll(async () => {
    s = await sharedCluster();
  });
  afterAll(async () => {
    await helm(['uninstall', release, '--namespace', ns], { kubeconfig: s.kubeconfig });
  });

  it('a bad value is refused by helm install too, and nothing is installed', async () => {
    const r = await helm(
      [
        'install',
        release,
        CHART_DIR,
        '--namespace',
        ns,
        '--create-namespace',
        '--set',
        'operator.concurrency=0',
      ],
      { kubeconfig: s.kubeconfig },
    );
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/\/operator\/concurrency.*minimum/);
    expect((await helm(['status', release, '-n', ns], { kubeconfig: s.kubeconfig })).code).not.toBe(0);
  });

  it('installs (no --wait, no hooks); the CRD is served; every object exists', async () => {
    const out = await helmOk(['install', release, CHART_DIR, '--namespace', ns, '--create-namespace'], {
      kubeconfig: s.kubeconfig,
    });
    expect(out).toMatch(/STATUS: deployed/);
    // NOTES.txt tells what to do next: check it, describe a cluster, connect the members.
    expect(out).toMatch(/kubectl -n \S+ get ctopo/);
    expect(out).toContain(`helm test ${release} -n ${ns}`);
    expect(out).toContain(`kubectl ctopo check --operator-namespace ${ns}`);
    expect(out).toMatch(/the OTP library in your supervision tree/);
    expect(out).toMatch(/liveness Lease\s+\(get, list and watch on both\)/);
    await kubectlOk(s, [
      'wait',
      '--for=condition=Established',
      '--timeout=60s',
      'crd/clustertopologies.cluster.netzlive.io',
    ]);
    const manifest = parseManifests(
      await helmOk(['get', 'manifest', release, '-n', ns], { kubeconfig: s.kubeconfig }),
    );
    expect([...new Set(manifest.map((o) => o.kind))].sort()).toEqual([
      'ClusterRole',
      'ClusterRoleBinding',
      'Deployment',
      'PodDisruptionBudget',
      'Role',
      'RoleBinding',
      'Service',
      'ServiceAccount',
      'ValidatingAdmissionPolicy',
      'ValidatingAdmissionPolicyBinding',
    ]);
    for (const o of manifest) {
      const args = ['get', o.kind.toLowerCase(), o.metadata.name, '-o', 'name'];
      if (o.metadata.namespace) args.push('-n', o.metadata.namespace);
      expect((await kubectl(s, args)).code).toBe(0);
    }
    const dep = JSON.parse(await kubectlOk(s, ['-n', ns, 'get', 'deploy', fullname, '-o', 'json'])) as {
      spec: { replicas: number };
    };
    expect(dep.spec.replicas).toBe(2);
  });

  it('other value sets render objects the API server accepts (server-side dry run)', async () => {
    const [a, b, shared] = [
      await freshNamespace(s, 'chart-a'),
      await freshNamespace(s, 'chart-b'),
      await freshNamespace(s, 'chart-shared'),
    ];
    for (const sets of [
      [`scope.namespaces={${a},${b}}`, `scope.allowTargetNamespaces={${shared}}`],
      [
        'scope.clusterWide=true',
        'scope.allowTargetNamespaces={*}',
        'operator.watchNodes=false',
        'operator.leaderElection.enabled=false',
        'operator.replicas=1',
        'image.digest=sha256:' + 'ab'.repeat(32),
      ],
    ]) {
      const text = await helmOk([
        'template',
        `dry-${randomBytes(2).toString('hex')}`,
        CHART_DIR,
        '--namespace',
        a,
        ...sets.flatMap((v) => ['--set', v]),
      ]);
      const r = await kubectl(s, ['apply', '--dry-run=server', '-f', '-'], { input: text });
      expect({ sets, code: r.code, stderr: r.stderr }).toEqual({ sets, code: 0, stderr: '' });
    }
  });

  it('kubectl explain clustertopology.spec: every field, at every depth, has a description', async () => {
    const top = await waitFor('the CRD in OpenAPI', async () => {
      const r = await kubectl(s, ['explain', 'clustertopology.spec', '--recursive']);
      return r.code === 0 ? r.stdout : undefined;
    });
    // Field lines are "<indent>name\t<type>"; two spaces per level below spec.
    const paths: string[] = [];
    const stack: string[] = [];
    for (const line of top.slice(top.indexOf('FIELDS:')).split('\n').slice(1)) {
      const m = /^( +)([A-Za-z0-9_-]+)\t</.exec(line);
      if (!m) continue;
      const depth = m[1]!.length / 2 - 1;
      stack.length = depth;
      stack.push(m[2]!);
      paths.push(stack.join('.'));
    }
    expect(paths).toEqual(
      expect.arrayContaining(['selector', 'naming.hostnameAnnotation', 'failureDomains.levels.key']),
    );
    for (const p of ['', ...paths]) {
      const out = await kubectlOk(s, ['explain', `clustertopology.spec${p ? '.' + p : ''}`]);
      const description = out.split('DESCRIPTION:')[1]?.split('FIELDS:')[0]?.trim() ?? '';
      expect({ field: p, description }).toEqual({ field: p, description: expect.stringMatching(/\w{3}/) });
      expect(description).not.toMatch(/^<empty>$/);
    }
  });
});
