import type { ClusterTopologyStatus, Condition } from '../api/types.generated.js';
import { OPERATOR_VERSION_ANNOTATION } from '../api/operator-lease.js';
import { RELEASE_ANNOTATION } from '../api/schema.js';
import { sanitizeCell } from '../naming/quote.js';
import { livenessOf, type LeaseRead, type LeaseView } from '../protocol/read.js';

/**
 * What `ctopo check` says, from facts the command gathered: each check passed, failed (with the
 * command that fixes it), or could not be made (and why). Pure, so every branch is unit-tested;
 * the command only reads and prints. Every value that came from the cluster is printed
 * terminal-safe.
 *
 * | code | meaning                                                                       |
 * |------|-------------------------------------------------------------------------------|
 * | 0    | every check passed ("not reported" is not a failure)                          |
 * | 1    | some check failed: the line says what is wrong and the fix                    |
 * | 64   | bad usage                                                                     |
 * | 69   | nothing failed, but some check could not be made (API server unreachable,     |
 * |      | credentials refused, no permission to read what the check reads)              |
 */
export const EXIT_CHECK_FAILED = 1;
/** sysexits' EX_UNAVAILABLE, as `ctopo analyze` uses it: the answer could not be had. */
export const EXIT_CANNOT_CHECK = 69;

export type Verdict = 'ok' | 'fail' | 'unknown' | 'none';

export interface CheckLine {
  /** What was checked, e.g. "CRD clustertopologies.cluster.netzlive.io". */
  subject: string;
  verdict: Verdict;
  /** What was found, one sentence. */
  detail: string;
  /** For a failure (or a check that could not be made): what to do. */
  fix?: string;
}

/** A read that may have failed; `missing` is the API server's 404. */
export type Read<T> =
  { kind: 'found'; value: T } | { kind: 'missing' } | { kind: 'unreadable'; message: string };
export type ListRead<T> = { kind: 'listed'; items: T[] } | { kind: 'unreadable'; message: string };

interface StatusCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

export interface CrdView {
  metadata?: { annotations?: Record<string, string> };
  spec?: { versions?: { name: string; served?: boolean; storage?: boolean }[] };
  status?: { conditions?: StatusCondition[] };
}

export interface OperatorLease {
  namespace: string;
  name: string;
  lease: LeaseView & { metadata?: { annotations?: Record<string, string> } };
  /** The holder's pod, when the holder's identity names a pod in the Lease's namespace. */
  holderPod?: Read<PodView>;
}

export interface PodView {
  metadata?: { deletionTimestamp?: string };
  status?: { phase?: string; conditions?: StatusCondition[] };
}

export interface DeploymentView {
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  spec?: { replicas?: number; template?: { spec?: { containers?: { args?: string[] }[] } } };
  status?: { replicas?: number; readyReplicas?: number; availableReplicas?: number };
}

export interface RoleView {
  metadata: { name: string };
  rules?: { apiGroups?: string[]; resources?: string[]; verbs?: string[]; resourceNames?: string[] }[];
}

export interface TopologyCheckFacts {
  namespace: string;
  name: string;
  topology: Read<{ metadata?: { generation?: number }; status?: ClusterTopologyStatus }>;
  lease: LeaseRead;
}

export interface CheckFacts {
  /** This CLI's version: the CRDs must be of the same release. */
  version: string;
  /** The CRDs this CLI reads, by name, each with what was read of it. */
  crds: { name: string; served: string; read: Read<CrdView> }[];
  /** Where the operator was looked for: one namespace, or every namespace. */
  operatorNamespace?: string;
  leases: ListRead<OperatorLease>;
  deployments: ListRead<DeploymentView>;
  readerRoles: ListRead<RoleView>;
  topology?: TopologyCheckFacts;
  now: Date;
}

export interface CheckReport {
  lines: CheckLine[];
  code: 0 | 1 | 69;
}

const safe = sanitizeCell;
const isTrue = (cs: StatusCondition[] | undefined, type: string) =>
  cs?.some((c) => c.type === type && c.status === 'True') === true;
const conditionText = (c: StatusCondition) =>
  `${safe(c.reason ?? '')}${c.message ? `: ${safe(c.message)}` : ''}`;

export function checkReport(f: CheckFacts): CheckReport {
  const lines = [
    ...f.crds.map((c) => crdLine(c, f.version)),
    ...operatorLines(f),
    readerRoleLine(f.readerRoles),
    ...(f.topology ? topologyLines(f.topology, f.now) : []),
  ];
  const code = lines.some((l) => l.verdict === 'fail')
    ? EXIT_CHECK_FAILED
    : lines.some((l) => l.verdict === 'unknown')
      ? EXIT_CANNOT_CHECK
      : 0;
  return { lines, code };
}

const APPLY_CRDS =
  'apply the CRDs of this release: kubectl apply --server-side --force-conflicts -f crds/ (from the chart package: helm show crds cluster-topology-VERSION.tgz | kubectl apply --server-side --force-conflicts -f -)';

function crdLine(c: CheckFacts['crds'][number], version: string): CheckLine {
  const subject = `CRD ${c.name}`;
  if (c.read.kind === 'unreadable')
    return {
      subject,
      verdict: 'unknown',
      detail: safe(c.read.message),
      fix: 'ask for get on customresourcedefinitions',
    };
  if (c.read.kind === 'missing')
    return {
      subject,
      verdict: 'fail',
      detail: 'not installed',
      fix: APPLY_CRDS.replace('VERSION', version),
    };
  const crd = c.read.value;
  const conditions = crd.status?.conditions;
  if (!isTrue(conditions, 'Established')) {
    const why = conditions?.find((x) => x.type === 'NamesAccepted' && x.status === 'False');
    return {
      subject,
      verdict: 'fail',
      detail: `not established${why ? ` (${conditionText(why)})` : ' yet'}`,
      fix: `kubectl get crd ${c.name} -o yaml shows its conditions; another CRD may hold its names`,
    };
  }
  const served = crd.spec?.versions?.find((v) => v.name === c.served && v.served);
  if (!served)
    return {
      subject,
      verdict: 'fail',
      detail: `does not serve ${c.served}, the version this ctopo reads`,
      fix: APPLY_CRDS.replace('VERSION', version),
    };
  const release = crd.metadata?.annotations?.[RELEASE_ANNOTATION];
  if (release !== version)
    return {
      subject,
      verdict: 'fail',
      detail: `is from release ${release === undefined ? '(unknown)' : safe(release)}, this ctopo is ${version}: Helm installs CRDs but never upgrades them`,
      fix: APPLY_CRDS.replace('VERSION', version),
    };
  return { subject, verdict: 'ok', detail: `established, serves ${c.served}, release ${version}` };
}

const SCALE_UP = (d: DeploymentView) =>
  `kubectl -n ${safe(d.metadata.namespace ?? '')} scale deployment ${safe(d.metadata.name)} --replicas=2 (or helm upgrade with operator.replicas)`;

/** Whether the Deployment runs the operator without leader election. */
const noLeaderElection = (d: DeploymentView) =>
  d.spec?.template?.spec?.containers?.some((c) => c.args?.includes('--no-leader-elect')) === true;

/** Why no replica of `d` leads, and what to do: from the Deployment's own counts. */
function deploymentTrouble(d: DeploymentView): { detail: string; fix: string } {
  const ns = safe(d.metadata.namespace ?? '');
  const name = safe(d.metadata.name);
  const want = d.spec?.replicas ?? 1;
  const ready = d.status?.readyReplicas ?? 0;
  if (want === 0) return { detail: `the Deployment ${ns}/${name} is scaled to 0 replicas`, fix: SCALE_UP(d) };
  if (ready === 0)
    return {
      detail: `the Deployment ${ns}/${name} wants ${want} replica(s) and none is ready`,
      fix: `kubectl -n ${ns} describe pods -l app.kubernetes.io/instance=${safe(d.metadata.labels?.['app.kubernetes.io/instance'] ?? name)}; kubectl -n ${ns} logs deployment/${name}`,
    };
  return {
    detail: `the Deployment ${ns}/${name} has ${ready} of ${want} replica(s) ready, but none holds the Lease`,
    fix: `kubectl -n ${ns} logs deployment/${name} (look for "lease")`,
  };
}

function operatorLines(f: CheckFacts): CheckLine[] {
  const where =
    f.operatorNamespace === undefined ? 'in any namespace' : `in namespace ${safe(f.operatorNamespace)}`;
  if (f.leases.kind === 'unreadable')
    return [
      {
        subject: 'operator',
        verdict: 'unknown',
        detail: `its Lease cannot be listed ${where}: ${safe(f.leases.message)}`,
        fix: 'ask for list on leases (coordination.k8s.io), or name the namespace with --operator-namespace',
      },
    ];
  const deployments = f.deployments.kind === 'listed' ? f.deployments.items : [];
  const leases = f.leases.items;
  if (leases.length === 0) {
    const unelected = deployments.filter(noLeaderElection);
    if (unelected.length > 0)
      return unelected.map((d) => {
        const ready = d.status?.readyReplicas ?? 0;
        const subject = `operator ${safe(d.metadata.namespace ?? '')}/${safe(d.metadata.name)}`;
        return ready > 0
          ? {
              subject,
              verdict: 'ok',
              detail: `${ready} replica(s) ready, without leader election (version not reported)`,
            }
          : { subject, verdict: 'fail', ...deploymentTrouble(d) };
      });
    if (deployments.length > 0)
      return deployments.map((d) => {
        const t = deploymentTrouble(d);
        return {
          subject: `operator ${safe(d.metadata.namespace ?? '')}/${safe(d.metadata.name)}`,
          verdict: 'fail',
          detail: `no replica has taken its Lease: ${t.detail}`,
          fix: t.fix,
        };
      });
    return [
      {
        subject: 'operator',
        verdict: 'fail',
        detail: `no operator found ${where} (no Lease and no Deployment labelled app.kubernetes.io/name=cluster-topology)${f.deployments.kind === 'unreadable' ? `; Deployments could not be listed: ${safe(f.deployments.message)}` : ''}`,
        fix: 'install the chart: helm install ctopo cluster-topology-VERSION.tgz -n ctopo-system --create-namespace, or pass --operator-namespace'.replace(
          'VERSION',
          f.version,
        ),
      },
    ];
  }
  return leases.map((l) => leaseLine(l, deployments, f.now));
}

function leaseLine(l: OperatorLease, deployments: DeploymentView[], now: Date): CheckLine {
  const subject = `operator ${safe(l.namespace)}/${safe(l.name)}`;
  const holder = l.lease.spec?.holderIdentity ?? '';
  const version = l.lease.metadata?.annotations?.[OPERATOR_VERSION_ANNOTATION];
  const mine = deployments.filter((d) => d.metadata.namespace === l.namespace);
  const live = livenessOf({ kind: 'found', lease: l.lease }, now);
  if (holder === '' || live.state !== 'live') {
    const why =
      holder === ''
        ? 'no replica holds its Lease (the last leader let it go)'
        : live.state === 'stale'
          ? `its Lease was last renewed by ${safe(holder)} ${live.ageS} s ago (limit ${live.limitS} s)`
          : `its Lease cannot be judged: ${safe(live.state === 'unknown' ? live.why : '')}`;
    if (mine.length === 0)
      return {
        subject,
        verdict: 'fail',
        detail: `${why}, and no operator Deployment is in ${safe(l.namespace)}`,
        fix: `start the operator there; if it was uninstalled, the Lease is left over: kubectl -n ${safe(l.namespace)} delete lease ${safe(l.name)}`,
      };
    const t = deploymentTrouble(mine[0]!);
    return { subject, verdict: 'fail', detail: `${why}; ${t.detail}`, fix: t.fix };
  }
  const shown = `${version === undefined ? 'version not reported' : `version ${safe(version)}`}`;
  const pod = l.holderPod;
  if (pod?.kind === 'found') {
    const p = pod.value;
    if (p.metadata?.deletionTimestamp || !isTrue(p.status?.conditions, 'Ready')) {
      const led = `led by ${safe(holder)} (${shown}), whose pod is ${p.metadata?.deletionTimestamp ? 'terminating' : 'not Ready: its caches are not synced or it cannot reach the API server'}`;
      // Scaled to 0, the leader's pod is on its way out: scaling up is the fix, not its logs.
      const scaledDown = mine.find((d) => d.spec?.replicas === 0);
      if (scaledDown)
        return {
          subject,
          verdict: 'fail',
          detail: `${led}; ${deploymentTrouble(scaledDown).detail}`,
          fix: SCALE_UP(scaledDown),
        };
      return {
        subject,
        verdict: 'fail',
        detail: led,
        fix: `kubectl -n ${safe(l.namespace)} describe pod ${safe(holder)}; kubectl -n ${safe(l.namespace)} logs ${safe(holder)}`,
      };
    }
    return { subject, verdict: 'ok', detail: `led by pod ${safe(holder)} (Ready), ${shown}` };
  }
  return { subject, verdict: 'ok', detail: `led by ${safe(holder)}, Lease renewed in time, ${shown}` };
}

const READER_NEEDS = [
  ['cluster.netzlive.io', 'clustertopologies', 'get'],
  ['cluster.netzlive.io', 'clustertopologies', 'watch'],
  ['coordination.k8s.io', 'leases', 'get'],
] as const;

const grants = (r: RoleView, group: string, resource: string, verb: string) =>
  (r.rules ?? []).some(
    (rule) =>
      (rule.apiGroups ?? []).some((g) => g === group || g === '*') &&
      (rule.resources ?? []).some((x) => x === resource || x === '*') &&
      (rule.verbs ?? []).some((v) => v === verb || v === '*') &&
      !rule.resourceNames?.length,
  );

function readerRoleLine(roles: ListRead<RoleView>): CheckLine {
  const subject = 'reader ClusterRole';
  if (roles.kind === 'unreadable')
    return { subject, verdict: 'unknown', detail: safe(roles.message), fix: 'ask for list on clusterroles' };
  const good = roles.items.filter((r) => READER_NEEDS.every(([g, res, v]) => grants(r, g, res, v)));
  if (good.length > 0)
    return {
      subject,
      verdict: 'ok',
      detail: `${good.map((r) => safe(r.metadata.name)).join(', ')}: get/watch on ClusterTopologies and their Leases`,
    };
  const found = roles.items.map((r) => safe(r.metadata.name));
  return {
    subject,
    verdict: 'fail',
    detail:
      found.length === 0
        ? 'none (no ClusterRole labelled app.kubernetes.io/component=agent of cluster-topology)'
        : `${found.join(', ')} lacks get/watch on clustertopologies or get on leases`,
    fix: 'helm upgrade … --set rbac.agentClusterRole=true, or give each reader a Role of its own (examples/agent-rbac.yaml)',
  };
}

function topologyLines(t: TopologyCheckFacts, now: Date): CheckLine[] {
  const id = `${safe(t.namespace)}/${safe(t.name)}`;
  if (t.topology.kind === 'unreadable')
    return [{ subject: `ClusterTopology ${id}`, verdict: 'unknown', detail: safe(t.topology.message) }];
  if (t.topology.kind === 'missing')
    return [
      {
        subject: `ClusterTopology ${id}`,
        verdict: 'fail',
        detail: 'not found',
        fix: `kubectl get clustertopologies -A lists them; apply yours (examples/) or pass the right -n`,
      },
    ];
  const status = t.topology.value.status;
  return [livenessLine(id, t, status, now), peersLine(id, status), meshedLine(id, status?.conditions)];
}

function livenessLine(
  id: string,
  t: TopologyCheckFacts,
  status: ClusterTopologyStatus | undefined,
  now: Date,
): CheckLine {
  const subject = `${id} live`;
  const live = livenessOf(t.lease, now);
  if (live.state === 'live')
    return {
      subject,
      verdict: 'ok',
      detail: `the operator renewed its Lease at ${safe(live.renewTime)} (limit ${live.limitS} s)`,
    };
  if (live.state === 'stale')
    return {
      subject,
      verdict: 'fail',
      detail: `the operator last renewed its Lease ${live.ageS} s ago (limit ${live.limitS} s): nobody polls this topology`,
      fix: `is the operator running, and does it serve namespace ${safe(t.namespace)}? (chart value scope.namespaces)`,
    };
  if (t.lease.kind === 'unreadable')
    return {
      subject,
      verdict: 'unknown',
      detail: safe(live.why),
      fix: 'ask for get on leases in this namespace',
    };
  return {
    subject,
    verdict: 'fail',
    detail:
      status === undefined
        ? 'no status and no liveness Lease: no operator serves this namespace'
        : safe(live.why),
    fix: `helm upgrade … --set 'scope.namespaces={…,${safe(t.namespace)}}' so the operator serves ${safe(t.namespace)}`,
  };
}

function peersLine(id: string, status: ClusterTopologyStatus | undefined): CheckLine {
  const subject = `${id} peers`;
  const r = status?.lastResponse;
  if (!status || !r || !Array.isArray(status.peers))
    return {
      subject,
      verdict: 'fail',
      detail: 'not published yet',
      fix: 'wait a polling interval; kubectl describe ctopo shows the conditions',
    };
  if (r.code !== '200')
    return {
      subject,
      verdict: 'fail',
      detail: `the last list of pods failed since ${safe(r.since)} (${safe(r.code)} ${safe(r.reason)}); ${status.peers.length} peer(s) kept`,
      fix: 'docs/runbook.md has a section per code; check the operator Role: kubectl auth can-i list pods --as system:serviceaccount:…',
    };
  const excluded = status.excluded?.length ?? 0;
  if (status.peers.length === 0)
    return {
      subject,
      verdict: 'fail',
      detail: `none published (${excluded} excluded)`,
      fix: `kubectl describe ctopo ${safe(id.split('/')[1] ?? '')} lists the excluded pods and why; no pod may match the selector`,
    };
  return { subject, verdict: 'ok', detail: `${status.peers.length} published, ${excluded} excluded` };
}

function meshedLine(id: string, conditions: Condition[] | undefined): CheckLine {
  const subject = `${id} Meshed`;
  const c = conditions?.find((x) => x.type === 'Meshed');
  if (!c)
    return { subject, verdict: 'none', detail: 'not reported (the members do not report their connections)' };
  if (c.status === 'True') return { subject, verdict: 'ok', detail: conditionText(c) };
  if (c.status === 'False')
    return {
      subject,
      verdict: 'fail',
      detail: conditionText(c),
      fix: 'the condition message names the members that are not connected',
    };
  return { subject, verdict: 'unknown', detail: conditionText(c) };
}

const MARK: Record<Verdict, string> = { ok: 'ok', fail: 'FAIL', unknown: '?', none: '-' };

/** The report as text: one line per check, its fix indented below a failure. */
export function formatCheck(r: CheckReport, header: string): string[] {
  const out = [header];
  for (const l of r.lines) {
    out.push(`${MARK[l.verdict].padEnd(4)}  ${l.subject}: ${l.detail}`);
    if (l.fix && l.verdict !== 'ok') out.push(`      fix: ${l.fix}`);
  }
  return out;
}
