import type { ControlPlaneState } from '../../dev/cluster/control-plane.js';
import type { Peer } from '../../operator/api/types.generated.js';
import { connect } from '../../operator/kube/client.js';
import { memberReport, memberView, type LinkReason } from '../../operator/protocol/member-report.js';
import { writeMemberReport } from '../../operator/protocol/member-report-writer.js';
import { applyTopology, createPod, setPodStatus, topologyStatus } from './objects.js';
import { startOperator, type CtopoProcess } from './operator-process.js';
import { waitFor } from './wait.js';
import { operatorNamespace } from './world.js';

/**
 * Three members and their reports, for the tests of the mesh: pods web-0..2 of topology `web`,
 * listed by the real operator, and each member's report written as its reader would write it.
 */

export interface ThreeMembers {
  s: ControlPlaneState;
  ns: string;
  op: CtopoProcess;
  /** status.peers, by pod name. */
  peers: Peer[];
}

export async function threeMembers(prefix: string, subnet: string): Promise<ThreeMembers> {
  const { s, ns, kubeconfig } = await operatorNamespace(prefix);
  for (const i of [0, 1, 2]) {
    await createPod(s, ns, `web-${i}`);
    await setPodStatus(s, ns, `web-${i}`, { ip: `${subnet}.${i + 1}`, ready: true });
  }
  await applyTopology(s, ns, 'web', {
    selector: 'netzlive/pod-type=cluster-service',
    pollingInterval: '10m',
  });
  const op = startOperator(kubeconfig, ['--namespaces', ns, '--no-leader-elect']);
  await op.port();
  const peers = await waitFor('three peers', async () => {
    const st = await topologyStatus(s, ns, 'web');
    return st?.peers?.length === 3 ? [...st.peers].sort((a, b) => (a.pod < b.pod ? -1 : 1)) : undefined;
  });
  return { s, ns, op, peers };
}

export interface ReportOptions {
  /** The last reason for the peers it is not connected to (default Refused). */
  reason?: LinkReason;
  /** The name it runs as (default: the listed one). */
  node?: string;
  /** How old the report is, in ms. */
  ageMs?: number;
  /** Another pod than member i's (a gone one). */
  pod?: { name: string; uid: string };
  trouble?: string;
}

/** Writes member `i`'s report (as the cluster's admin): connected to members `to`, not to the others. */
export async function writeReport(
  m: ThreeMembers,
  i: number,
  to: number[],
  o: ReportOptions = {},
): Promise<void> {
  const p = m.peers[i]!;
  const pod = o.pod ?? { name: p.pod, uid: p.uid };
  const at = new Date(Date.now() - (o.ageMs ?? 0));
  const view = memberView({
    node: o.node ?? p.nodeName,
    pod: pod.name,
    peers: m.peers,
    connected: to.map((j) => m.peers[j]!.nodeName),
    reasons: new Map(m.peers.map((x) => [x.nodeName, o.reason ?? 'Refused'] as const)),
    ...(o.trouble ? { trouble: { cause: o.trouble, since: at.toISOString().replace(/\.\d+Z$/, 'Z') } } : {}),
  });
  const r = memberReport({ namespace: m.ns, topology: 'web', pod }, view, at);
  const w = await writeMemberReport(connect({ kubeconfig: m.s.kubeconfig }), r, 'ctopo-test');
  if (w.outcome !== 'ok') throw new Error(`writing the report of ${pod.name} failed: ${String(w.error)}`);
}
