import type { ClusterTopologyMemberStatus, Peer } from '../api/types.generated.js';
import type { UNREPORTED_REASONS } from '../api/schema.js';
import { byteOrder, listedDigest, memberReportName, type LinkReason } from '../protocol/member-report.js';
import { REPORT_STALE_AFTER_MS } from '../protocol/report-plan.js';

/**
 * Each listed member and what its report is worth: a current view (not stale, of the current peer
 * list, observed by the member itself), a stale one, or none that counts — and, for a current
 * view, what it says of each link. Members are the listed peers (status.peers), keyed by pod uid:
 * a report of a pod that is not listed — gone, excluded, or an earlier pod of the same name — is
 * ignored (the dev cluster has no garbage collector to delete it).
 */

export type UnreportedReason = (typeof UNREPORTED_REASONS)[number];

/** A ClusterTopologyMember as read: only what the aggregate looks at is typed, all of it optional. */
export interface MemberReportObject {
  metadata?: { name?: string; namespace?: string; labels?: Record<string, string> };
  spec?: { topology?: string; pod?: { name?: string; uid?: string } };
  status?: ClusterTopologyMemberStatus;
}

export interface Member {
  pod: string;
  uid: string;
  nodeName: string;
}

export type MemberStanding =
  | { kind: 'current'; status: ClusterTopologyMemberStatus; view: ReportedLinks }
  | { kind: 'stale'; status: ClusterTopologyMemberStatus }
  | { kind: 'unreported'; reason: UnreportedReason; status?: ClusterTopologyMemberStatus };

export type Link = { kind: 'connected' } | { kind: 'broken'; reason: LinkReason } | { kind: 'unknown' };

/**
 * A current view's links: the peers it names as not connected, and — when it left some out — the
 * last name it lists: the left-out ones sort after it (docs/status-protocol.md §8), so a name
 * after the horizon that is not listed may be either.
 */
export interface ReportedLinks {
  broken: ReadonlyMap<string, LinkReason>;
  horizon?: string;
}

export function linkOf(view: ReportedLinks, to: string): Link {
  const reason = view.broken.get(to);
  if (reason !== undefined) return { kind: 'broken', reason };
  if (view.horizon !== undefined && byteOrder(to, view.horizon) > 0) return { kind: 'unknown' };
  return { kind: 'connected' };
}

function reportedLinks(s: ClusterTopologyMemberStatus): ReportedLinks {
  const entries = Array.isArray(s.notConnected) ? s.notConnected : [];
  const broken = new Map(entries.map((e) => [e.node, e.reason] as const));
  if (!((s.notConnectedOmitted ?? 0) > 0) || entries.length === 0) return { broken };
  const horizon = entries.map((e) => e.node).reduce((a, b) => (byteOrder(a, b) >= 0 ? a : b));
  return { broken, horizon };
}

export interface MeshModel {
  /** The listed members, sorted by pod name. */
  members: Member[];
  standings: MemberStanding[];
  /** The current peer list's digest, as members compute it. */
  digest: string;
}

export interface MeshInput {
  topology: string;
  /** status.peers: the listed members. */
  peers: readonly Pick<Peer, 'pod' | 'uid' | 'nodeName'>[];
  /** The namespace's reports (of any topology; the others are left out here). */
  reports: readonly MemberReportObject[];
  /** ms since the epoch. */
  now: number;
  staleAfterMs?: number;
}

export function meshModel(input: MeshInput): MeshModel {
  const members = input.peers
    .map((p) => ({ pod: p.pod, uid: p.uid, nodeName: p.nodeName }))
    .sort((a, b) => byteOrder(a.pod, b.pod));
  const digest = listedDigest(members.map((m) => m.nodeName));
  const byUid = new Map<string, MemberReportObject>();
  for (const r of input.reports) {
    const uid = r.spec?.pod?.uid;
    const pod = r.spec?.pod?.name;
    if (uid === undefined || pod === undefined || r.spec?.topology !== input.topology) continue;
    if (r.metadata?.name !== memberReportName(pod, input.topology)) continue;
    byUid.set(uid, r);
  }
  const staleAfter = input.staleAfterMs ?? REPORT_STALE_AFTER_MS;
  const standings = members.map((m): MemberStanding => {
    const r = byUid.get(m.uid);
    const status = r?.spec?.pod?.name === m.pod ? r.status : undefined;
    const reportedAt = status ? Date.parse(status.reportedAt) : NaN;
    if (!status || Number.isNaN(reportedAt)) return { kind: 'unreported', reason: 'NoReport' };
    if (input.now - reportedAt > staleAfter) return { kind: 'stale', status };
    if (status.listedDigest !== digest) return { kind: 'unreported', reason: 'OtherList', status };
    if (status.observed === false) return { kind: 'unreported', reason: 'NotObserved', status };
    return { kind: 'current', status, view: reportedLinks(status) };
  });
  return { members, standings, digest };
}

/**
 * What member `from` (an index) says of its link to member `to`. A link its capped list leaves
 * unknown is connected when both views have the same connectedDigest: each one's set (itself and
 * whom it is connected to) then holds the other.
 */
export function linkBetween(model: MeshModel, from: number, to: number): Link {
  const s = model.standings[from]!;
  if (s.kind !== 'current') return { kind: 'unknown' };
  const link = linkOf(s.view, model.members[to]!.nodeName);
  if (link.kind !== 'unknown') return link;
  const t = model.standings[to]!;
  const digest = s.status.connectedDigest;
  return t.kind === 'current' && digest !== undefined && t.status.connectedDigest === digest
    ? { kind: 'connected' }
    : link;
}
