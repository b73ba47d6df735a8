import { ApiError, type Kube } from '../kube/client.js';
import { memberReportsPath } from '../kube/paths.js';
import { TOPOLOGY_LABEL } from '../protocol/read.js';
import { memberReportName } from '../protocol/member-report.js';
import type { MemberReportObject } from '../mesh/standing.js';
import type { MemberReportRead } from './member-report-lines.js';
import { ClusterReadError, describeFailure } from './cluster-access.js';

/** How `explain` and `mesh` read member reports: one by name, or a topology's by its label. */

export async function readMemberReport(
  kube: Kube,
  namespace: string,
  pod: string,
  topology: string,
): Promise<MemberReportRead> {
  const name = memberReportName(pod, topology);
  try {
    return {
      kind: 'found',
      report: await kube.request<MemberReportObject>('GET', memberReportsPath(namespace, name)),
    };
  } catch (e) {
    if (e instanceof ApiError && e.code === 404) return { kind: 'missing' };
    return {
      kind: 'unreadable',
      message: describeFailure(e, `ClusterTopologyMember ${namespace}/${name}`, kube),
    };
  }
}

/** Every report labelled with the topology; a failure to list is a ClusterReadError. */
export async function listMemberReports(
  kube: Kube,
  namespace: string,
  topology: string,
): Promise<MemberReportObject[]> {
  try {
    const list = await kube.request<{ items?: MemberReportObject[] }>('GET', memberReportsPath(namespace), {
      query: { labelSelector: `${TOPOLOGY_LABEL}=${topology}` },
    });
    return list.items ?? [];
  } catch (e) {
    throw new ClusterReadError(
      describeFailure(e, `the ClusterTopologyMember reports of ${namespace}/${topology}`, kube),
    );
  }
}
