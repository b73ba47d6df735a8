import { crc32 } from 'node:zlib';
import { API_VERSION, LINK_REASONS, MESH_LIST_CAP } from '../api/schema.js';
import { MEMBER_KIND } from '../api/member-schema.js';
import type {
  ClusterTopologyMemberSpec,
  ClusterTopologyMemberStatus,
  NotConnectedPeer,
  ReaderTroubleReport,
  SelfCheck,
} from '../api/types.generated.js';
import { TOPOLOGY_LABEL } from './read.js';

/**
 * A member's report (ClusterTopologyMember, docs/status-protocol.md §8) built from what its
 * reader knows: the peer list it acts on, the nodes it is connected to, the last reason for each
 * it is not, its own node name and its trouble. Pure: every writer (the sidecar, watchPeers; the
 * OTP library implements the same rules in Erlang) builds its report here, so the counts, the
 * order, the cap and the digest mean one thing whoever wrote them.
 */

export type LinkReason = (typeof LINK_REASONS)[number];

/** The report's object name: `<pod>.<topology>` (one VM may run a reader per topology). */
export function memberReportName(pod: string, topology: string): string {
  return `${pod}.${topology}`;
}

/** Byte order, as Erlang compares binaries (node names are ASCII, so code units are bytes). */
export const byteOrder = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * A set of node names as one short value: CRC-32 (zlib's, erlang:crc32/1's) of the names sorted
 * in byte order, each followed by "\n"; 8 lowercase hex digits. Two sets with the same digest are
 * taken as the same set (a chance collision costs a wrong inference until the next change).
 */
export function nameDigest(nodeNames: readonly string[]): string {
  const text = [...nodeNames]
    .sort(byteOrder)
    .map((n) => `${n}\n`)
    .join('');
  return (crc32(Buffer.from(text, 'utf8')) >>> 0).toString(16).padStart(8, '0');
}

/** What a reader knows when it reports. */
export interface MemberViewInput {
  /** The name its node runs as (node()). */
  node: string;
  /** The pod it runs in (its entry in the list is itself, never a peer). */
  pod: string;
  /** The list it acts on: status.peers as read (nodeName and pod); undefined while it has none. */
  peers?: readonly { nodeName: string; pod: string }[];
  /** metadata.resourceVersion of the ClusterTopology it last read. */
  topologyResourceVersion?: string;
  /** Node names it is connected to (nodes()); names not in the list are ignored. */
  connected: Iterable<string>;
  /** The last failure per listed name it is not connected to; a name without one is NotTried. */
  reasons?: ReadonlyMap<string, LinkReason>;
  /** Listed names it refuses (never dialled): Invalid, whatever `reasons` says. */
  invalid?: Iterable<string>;
  /** false: the connector cannot see connections (exec, file); `connected` is what it was given. */
  observed?: boolean;
  trouble?: ReaderTroubleReport;
}

/** The report's status without reportedAt: the view. Writers compare views to decide (report-plan.ts). */
export type MemberView = Omit<ClusterTopologyMemberStatus, 'reportedAt'>;

/** Which peer list a view is of: the digest of every listed node name, the member's own included. */
export const listedDigest = (nodeNames: readonly string[]): string => nameDigest(nodeNames);

export function memberView(v: MemberViewInput): MemberView {
  const own = v.peers?.find((p) => p.pod === v.pod);
  const selfCheck: SelfCheck =
    v.peers === undefined
      ? { result: 'Unknown', actual: v.node }
      : own === undefined
        ? { result: 'NotListed', actual: v.node }
        : { result: own.nodeName === v.node ? 'Match' : 'Mismatch', expected: own.nodeName, actual: v.node };
  const others = (v.peers ?? []).filter((p) => p.pod !== v.pod).map((p) => p.nodeName);
  const connectedSet = new Set(v.connected);
  const invalidSet = new Set(v.invalid ?? []);
  const notConnected: NotConnectedPeer[] = [];
  const connectedNames: string[] = [];
  let invalid = 0;
  for (const name of others) {
    if (invalidSet.has(name)) {
      invalid++;
      notConnected.push({ node: name, reason: 'Invalid' });
    } else if (connectedSet.has(name)) connectedNames.push(name);
    else notConnected.push({ node: name, reason: v.reasons?.get(name) ?? 'NotTried' });
  }
  notConnected.sort((a, b) => byteOrder(a.node, b.node));
  const omitted = Math.max(0, notConnected.length - MESH_LIST_CAP);
  const connected = connectedNames.length;
  return {
    node: v.node,
    observed: v.observed ?? true,
    ...(v.topologyResourceVersion !== undefined
      ? { topologyResourceVersion: v.topologyResourceVersion }
      : {}),
    ...(v.peers !== undefined
      ? {
          listedDigest: listedDigest(v.peers.map((p) => p.nodeName)),
          connectedDigest: nameDigest([v.node, ...connectedNames]),
        }
      : {}),
    listed: others.length,
    connected,
    invalid,
    connectedOfListed: `${connected}/${others.length}`,
    notConnected: notConnected.slice(0, MESH_LIST_CAP),
    notConnectedOmitted: omitted,
    selfCheck,
    ...(v.trouble !== undefined ? { trouble: v.trouble } : {}),
  };
}

/** Who reports: the pod (name and uid) and its topology. */
export interface MemberIdentity {
  namespace: string;
  topology: string;
  pod: { name: string; uid: string };
}

/**
 * The whole report object as a writer sends it (server-side apply): named `<pod>.<topology>`,
 * labelled with the topology, owned by the pod (so it goes when the pod goes).
 */
export function memberReport(id: MemberIdentity, view: MemberView, reportedAt: Date) {
  const spec: ClusterTopologyMemberSpec = { topology: id.topology, pod: { ...id.pod } };
  const status: ClusterTopologyMemberStatus = { reportedAt: rfc3339(reportedAt), ...view };
  return {
    apiVersion: API_VERSION,
    kind: MEMBER_KIND,
    metadata: {
      name: memberReportName(id.pod.name, id.topology),
      namespace: id.namespace,
      labels: { [TOPOLOGY_LABEL]: id.topology },
      ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: id.pod.name, uid: id.pod.uid }],
    },
    spec,
    status,
  };
}

/** Seconds precision, as Kubernetes writes its own times. */
export const rfc3339 = (d: Date): string => d.toISOString().replace(/\.\d{3}Z$/, 'Z');
