import type { Kube } from '../kube/client.js';
import { SELF_SUBJECT_ACCESS_REVIEWS_PATH } from '../kube/paths.js';
import type { Log } from '../observability/logger.js';

/**
 * Silence is an error: an operator whose identity may not read its ClusterTopology objects or
 * its Lease would start, answer /readyz and do nothing. Before starting, it asks the API server
 * (SelfSubjectAccessReview, which every authenticated identity may create) whether it may, and
 * refuses to start with a message naming the flag to change when the answer is no. Permissions on
 * pods are not checked here: losing those is reported per topology in its status (the 403 row).
 */

export interface AccessCheck {
  verb: string;
  group: string;
  resource: string;
  /** Absent: cluster-wide. */
  namespace?: string;
  name?: string;
  /** Which setting decides this, and what the Helm chart passes, for the refusal message. */
  hint: string;
}

export interface PreflightInput {
  namespaces: string[];
  leaderElect: boolean;
  leaseNamespace: string;
  leaseName: string;
}

/** The permissions the operator cannot work without, for its configuration. Pure. */
export function requiredAccess(c: PreflightInput): AccessCheck[] {
  const topologyHint =
    c.namespaces.length === 0
      ? 'the served namespaces (--namespaces; empty: all namespaces). The Helm chart grants the namespaces of scope.namespaces (default: the release namespace) and passes them as --namespaces, or scope.clusterWide=true for all'
      : 'the served namespaces (--namespaces). The Helm chart grants the namespaces of scope.namespaces (default: the release namespace)';
  const checks: AccessCheck[] = [];
  for (const namespace of c.namespaces.length ? c.namespaces : [undefined])
    for (const verb of ['list', 'watch'])
      checks.push({
        verb,
        group: 'cluster.netzlive.io',
        resource: 'clustertopologies',
        ...(namespace ? { namespace } : {}),
        hint: topologyHint,
      });
  if (c.leaderElect)
    for (const verb of ['get', 'update'])
      checks.push({
        verb,
        group: 'coordination.k8s.io',
        resource: 'leases',
        namespace: c.leaseNamespace,
        name: c.leaseName,
        hint: `the Lease name (--lease-name, default cluster-topology-operator) and namespace (--lease-namespace). The Helm chart grants only the Lease named after the release (operator.leaderElection.leaseName, default the release's full name) in the release namespace and passes it as --lease-name; or run one replica with --no-leader-elect`,
      });
  return checks;
}

export const describeCheck = (c: AccessCheck) =>
  `${c.verb} ${c.resource}.${c.group}${c.name ? ` "${c.name}"` : ''} ${c.namespace ? `in namespace "${c.namespace}"` : 'in all namespaces'}`;

/** The refusal message for the denied checks, one line per distinct setting. Pure. */
export function refusal(denied: AccessCheck[]): string {
  const bySetting = new Map<string, AccessCheck[]>();
  for (const d of denied) bySetting.set(d.hint, [...(bySetting.get(d.hint) ?? []), d]);
  return [
    'refusing to start: this identity may not do what the operator needs, so it would run and do nothing.',
    ...[...bySetting].map(([hint, ds]) => `  - may not ${ds.map(describeCheck).join(', ')}: check ${hint}.`),
  ].join('\n');
}

/** Thrown when a required permission is denied; the CLI prints the message and exits 1. */
export class PreflightRefusal extends Error {}

interface AccessReview {
  status?: { allowed?: boolean; denied?: boolean; reason?: string };
}

/**
 * Asks the API server about each check. Denied → PreflightRefusal. A review that cannot be made
 * (API unreachable, TLS, an old server) is logged at warning level and the operator starts: its
 * own Lease and status reports then say what is wrong.
 */
export async function preflight(kube: Kube, input: PreflightInput, log: Log): Promise<void> {
  const checks = requiredAccess(input);
  const denied: AccessCheck[] = [];
  for (const c of checks) {
    let review: AccessReview;
    try {
      review = await kube.request<AccessReview>('POST', SELF_SUBJECT_ACCESS_REVIEWS_PATH, {
        body: {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SelfSubjectAccessReview',
          spec: {
            resourceAttributes: {
              verb: c.verb,
              group: c.group,
              resource: c.resource,
              ...(c.namespace ? { namespace: c.namespace } : {}),
              ...(c.name ? { name: c.name } : {}),
            },
          },
        },
        timeoutMs: 10_000,
      });
    } catch (e) {
      log('warn', `could not check whether this identity may ${describeCheck(c)}: ${(e as Error).message}`);
      return;
    }
    if (review.status?.allowed !== true) denied.push(c);
  }
  if (denied.length) throw new PreflightRefusal(refusal(denied));
}
