import { setTimeout as sleep } from 'node:timers/promises';
import { UsageError, type Command } from '../command.js';
import { clusterOptions, outputFormat, outputOption, stringFlag } from '../args.js';
import { connectCluster, describeFailure } from '../cluster-access.js';
import {
  checkReport,
  EXIT_CANNOT_CHECK,
  formatCheck,
  type CheckFacts,
  type CheckReport,
  type CrdView,
  type DeploymentView,
  type ListRead,
  type OperatorLease,
  type PodView,
  type Read,
  type RoleView,
  type TopologyCheckFacts,
} from '../check-report.js';
import { OPERATOR_LEASE_SELECTOR } from '../../api/operator-lease.js';
import { GROUP, KIND, PLURAL, VERSION } from '../../api/schema.js';
import { MEMBER_RESOURCE } from '../../api/member-schema.js';
import { parseDuration } from '../../api/duration.js';
import { ApiError, TransportError, type Kube, type KubeObject } from '../../kube/client.js';
import { topologyPath } from '../../kube/paths.js';
import { getLease } from '../../protocol/get.js';
import { PACKAGE_VERSION } from '../../config/version.js';

/**
 * `ctopo check`: is cluster-topology installed and working? It only reads (GET and LIST): the
 * CRDs, the operator's Lease and Deployment, the reader ClusterRole and, given a NAME, that
 * topology's liveness, peers and Meshed condition. The verdicts are checkReport's (pure).
 */

const seg = encodeURIComponent;
/** The chart's labels on the operator Deployment and on the reader ClusterRole. */
const DEPLOYMENT_SELECTOR = 'app.kubernetes.io/part-of=cluster-topology,app.kubernetes.io/component=operator';
const READER_ROLE_SELECTOR = 'app.kubernetes.io/part-of=cluster-topology,app.kubernetes.io/component=agent';
/** How often --wait asks again. */
const RETRY_MS = 2000;

export const checkCommand: Command = {
  name: 'check',
  help: `Usage: ctopo check [-n NAMESPACE] [NAME] [--operator-namespace NS] [--wait DURATION]
                   [--kubeconfig FILE] [-o table|json]

Answers "is cluster-topology installed and working?", one line per check; a failed check says
what to do:
  - the CRDs are established, serve ${VERSION} and are of the same release as this ctopo:
    Helm installs CRDs but never upgrades them;
  - the operator: a replica holds its leader Lease and renews it, its pod is Ready; the
    version it runs is shown;
  - the reader ClusterRole exists (the chart's <release>-cluster-topology-agent);
  - with NAME, that ClusterTopology: live (the operator renews its liveness Lease), peers
    published (the last list of pods succeeded), and Meshed (the members report their
    connections; "not reported" when they do not, which is not a failure).
It only reads; it finds the operator by the labels on its Lease and Deployment.

Flags:
  -n, --namespace NS          namespace of the ClusterTopology NAME (default: the kubeconfig
                              context's)
  --operator-namespace NS     look for the operator only there (default: every namespace)
  --wait DURATION             ask again every 2 s until every check passes or DURATION is over
                              (e.g. 2m); the last answer is printed
  --kubeconfig FILE           kubeconfig (default: $KUBECONFIG, ~/.kube/config, in-cluster)
  -o, --output FORMAT         table (default) or json

Exit status:
  0   every check passed ("not reported" is not a failure)
  1   some check failed; its line names the fix
  64  bad usage
  69  nothing failed, but some check could not be made: the API server did not answer, refused
      the credentials, or this user may not read what the check reads

Examples:
  ctopo check                                  # after helm install
  kubectl ctopo check -n netzlive web          # and one topology
  ctopo check --operator-namespace ctopo-system --wait 2m   # what the chart's helm test runs`,
  options: {
    ...clusterOptions,
    ...outputOption,
    'operator-namespace': { type: 'string' },
    wait: { type: 'string' },
  },
  allowPositionals: true,
  async run(values, positionals, io) {
    if (positionals.length > 1)
      throw new UsageError(`check: unexpected argument ${JSON.stringify(positionals[1])}`);
    const name = positionals[0];
    if (name === '') throw new UsageError('check: NAME must not be empty');
    const format = outputFormat('check', values);
    const operatorNamespace = stringFlag('check', values, 'operator-namespace');
    const waitText = stringFlag('check', values, 'wait');
    const waitMs = waitText === undefined ? 0 : parseDuration(waitText);
    if (waitMs === undefined)
      throw new UsageError(
        `check: --wait must be a duration such as 90s or 2m, not ${JSON.stringify(waitText)}`,
      );
    const { kube, namespace } = connectCluster('check', values);
    const deadline = Date.now() + waitMs;
    for (;;) {
      const facts = await gather(kube, {
        ...(operatorNamespace !== undefined ? { operatorNamespace } : {}),
        ...(name !== undefined ? { topology: { namespace, name } } : {}),
      });
      if (facts.kind === 'unreachable' && Date.now() >= deadline) {
        io.err(`ctopo check: ${facts.message}`);
        return EXIT_CANNOT_CHECK;
      }
      if (facts.kind === 'facts') {
        const report = checkReport(facts.facts);
        if (report.code === 0 || Date.now() >= deadline) {
          print(report, kube, format, io.out);
          return report.code;
        }
      }
      await sleep(Math.min(RETRY_MS, Math.max(0, deadline - Date.now())));
    }
  },
};

function print(report: CheckReport, kube: Kube, format: 'table' | 'json', out: (t: string) => void): void {
  if (format === 'json')
    out(
      JSON.stringify(
        { version: PACKAGE_VERSION, server: kube.server, code: report.code, checks: report.lines },
        null,
        2,
      ),
    );
  else out(formatCheck(report, `ctopo ${PACKAGE_VERSION} checking ${kube.server}`).join('\n'));
}

type Gathered = { kind: 'facts'; facts: CheckFacts } | { kind: 'unreachable'; message: string };

async function gather(
  kube: Kube,
  opts: { operatorNamespace?: string; topology?: { namespace: string; name: string } },
): Promise<Gathered> {
  const crdName = `${PLURAL}.${GROUP}`;
  // The first read tells an API server that answers from one that does not (or refuses us).
  let crd: Read<CrdView>;
  try {
    crd = { kind: 'found', value: await kube.request<CrdView>('GET', crdPath(crdName)) };
  } catch (e) {
    if (e instanceof TransportError || (e instanceof ApiError && e.code === 401))
      return { kind: 'unreachable', message: describeFailure(e, `CRD ${crdName}`, kube) };
    crd = failedRead(e, `CRD ${crdName}`, kube);
  }
  const ns = opts.operatorNamespace;
  const [memberCrd, leases, deployments, readerRoles, topology] = await Promise.all([
    read<CrdView>(kube, crdPath(MEMBER_RESOURCE), `CRD ${MEMBER_RESOURCE}`),
    listOf<KubeObject>(kube, leasesPath(ns), OPERATOR_LEASE_SELECTOR, 'the operator Leases'),
    listOf<DeploymentView>(kube, deploymentsPath(ns), DEPLOYMENT_SELECTOR, 'the operator Deployments'),
    listOf<RoleView>(
      kube,
      '/apis/rbac.authorization.k8s.io/v1/clusterroles',
      READER_ROLE_SELECTOR,
      'ClusterRoles',
    ),
    opts.topology ? topologyFacts(kube, opts.topology.namespace, opts.topology.name) : undefined,
  ]);
  const operatorLeases: ListRead<OperatorLease> =
    leases.kind === 'unreadable'
      ? leases
      : { kind: 'listed', items: await Promise.all(leases.items.map((l) => operatorLease(kube, l))) };
  return {
    kind: 'facts',
    facts: {
      version: PACKAGE_VERSION,
      crds: [
        { name: crdName, served: VERSION, read: crd },
        { name: MEMBER_RESOURCE, served: VERSION, read: memberCrd },
      ],
      ...(ns !== undefined ? { operatorNamespace: ns } : {}),
      leases: operatorLeases,
      deployments,
      readerRoles,
      ...(topology ? { topology } : {}),
      now: new Date(),
    },
  };
}

const crdPath = (name: string) => `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${seg(name)}`;
const leasesPath = (ns?: string) =>
  ns === undefined
    ? '/apis/coordination.k8s.io/v1/leases'
    : `/apis/coordination.k8s.io/v1/namespaces/${seg(ns)}/leases`;
const deploymentsPath = (ns?: string) =>
  ns === undefined ? '/apis/apps/v1/deployments' : `/apis/apps/v1/namespaces/${seg(ns)}/deployments`;

function failedRead<T>(e: unknown, what: string, kube: Kube): Read<T> {
  if (e instanceof ApiError && e.code === 404) return { kind: 'missing' };
  return { kind: 'unreadable', message: describeFailure(e, what, kube) };
}

async function read<T>(kube: Kube, path: string, what: string): Promise<Read<T>> {
  try {
    return { kind: 'found', value: await kube.request<T>('GET', path) };
  } catch (e) {
    return failedRead(e, what, kube);
  }
}

async function listOf<T>(
  kube: Kube,
  path: string,
  labelSelector: string,
  what: string,
): Promise<ListRead<T>> {
  try {
    const list = await kube.request<{ items?: T[] }>('GET', path, { query: { labelSelector } });
    return { kind: 'listed', items: list.items ?? [] };
  } catch (e) {
    return { kind: 'unreadable', message: describeFailure(e, what, kube) };
  }
}

/** A listed operator Lease, with its holder's pod when the holder names one (the chart's identity is the pod name). */
async function operatorLease(kube: Kube, l: KubeObject): Promise<OperatorLease> {
  const namespace = l.metadata.namespace ?? '';
  const lease = l as OperatorLease['lease'];
  const holder = lease.spec?.holderIdentity;
  const holderPod = holder
    ? await read<PodView>(
        kube,
        `/api/v1/namespaces/${seg(namespace)}/pods/${seg(holder)}`,
        `pod ${namespace}/${holder}`,
      )
    : undefined;
  return {
    namespace,
    name: l.metadata.name,
    lease,
    // A holder that is not a pod (an operator run outside the cluster) is judged by its Lease alone.
    ...(holderPod && holderPod.kind !== 'missing' ? { holderPod } : {}),
  };
}

async function topologyFacts(kube: Kube, namespace: string, name: string): Promise<TopologyCheckFacts> {
  const [topology, lease] = await Promise.all([
    read<{ metadata?: { generation?: number } }>(
      kube,
      topologyPath(namespace, name),
      `${KIND} ${namespace}/${name}`,
    ),
    getLease(kube, namespace, name),
  ]);
  return { namespace, name, topology, lease };
}
