import { MESH_LIST_CAP } from '../api/schema.js';
import type {
  BrokenLink,
  MemberTrouble,
  MeshGroup,
  MeshStatus,
  SelfCheckFailure,
  StaleReport,
  UnreportedMember,
} from '../api/types.generated.js';
import { byteOrder } from '../protocol/member-report.js';
import { REPORT_STALE_AFTER_MS } from '../protocol/report-plan.js';
import { meshGroups } from './groups.js';
import { meshModel, type MeshInput, type MeshModel } from './standing.js';

/**
 * From the listed members and their reports, what formed: the `status.mesh` block, the `Meshed`
 * condition and the MESH column (docs/status-protocol.md §8). Pure; the operator and `ctopo mesh`
 * both call it.
 */

export const MESHED = 'Meshed' as const;

export interface MeshedCondition {
  type: typeof MESHED;
  status: 'True' | 'False' | 'Unknown';
  reason:
    | 'Meshed'
    | 'SelfCheckFailed'
    | 'Split'
    | 'LinkBroken'
    | 'ReportsMissing'
    | 'ReportsInconsistent'
    | 'NoMembers';
  message: string;
}

export interface MeshAggregate {
  mesh: MeshStatus;
  condition: MeshedCondition;
  /** When the aggregate changes with time alone (the next current report to go stale); ms. */
  nextChangeAt?: number;
}

/** A list capped for the status, with the count of the rest. */
function capped<T>(items: T[]): { list: T[]; omitted: number } {
  return { list: items.slice(0, MESH_LIST_CAP), omitted: Math.max(0, items.length - MESH_LIST_CAP) };
}

/** Puts `list` under `key` and its omitted count under `<key>Omitted`, leaving both out when empty. */
function withList<K extends string, T>(key: K, items: T[]): Record<string, unknown> {
  if (items.length === 0) return {};
  const { list, omitted } = capped(items);
  return { [key]: list, ...(omitted > 0 ? { [`${key}Omitted`]: omitted } : {}) };
}

export function aggregateMesh(input: MeshInput): MeshAggregate {
  return aggregateModel(meshModel(input), input.now, input.staleAfterMs ?? REPORT_STALE_AFTER_MS);
}

export function aggregateModel(model: MeshModel, now: number, staleAfterMs: number): MeshAggregate {
  const { members, standings } = model;
  const n = members.length;
  const podOf = new Map(members.map((m) => [m.nodeName, m.pod]));
  const groups = meshGroups(model);
  const largest = groups[0]?.length ?? 0;
  const reporting = standings.filter((s) => s.kind === 'current').length;

  const broken: BrokenLink[] = [];
  let brokenTotal = 0;
  let fullyConnected = 0;
  const selfCheckFailures: SelfCheckFailure[] = [];
  const inTrouble: MemberTrouble[] = [];
  const stale: StaleReport[] = [];
  const unreported: UnreportedMember[] = [];
  let nextChangeAt: number | undefined;
  standings.forEach((s, i) => {
    const m = members[i]!;
    if (s.kind === 'stale') stale.push({ pod: m.pod, reportedAt: s.status.reportedAt });
    if (s.kind === 'unreported') unreported.push({ pod: m.pod, reason: s.reason });
    if (s.kind === 'stale' || s.status === undefined) return;
    // A view that is not stale still says who the member is and what troubles it.
    if (s.status.node !== m.nodeName)
      selfCheckFailures.push({ pod: m.pod, expected: m.nodeName, actual: s.status.node });
    if (s.status.trouble)
      inTrouble.push({ pod: m.pod, cause: s.status.trouble.cause, since: s.status.trouble.since });
    const goesStale = Date.parse(s.status.reportedAt) + staleAfterMs + 1;
    if (goesStale > now && (nextChangeAt === undefined || goesStale < nextChangeAt)) nextChangeAt = goesStale;
    if (s.kind !== 'current') return;
    const named = s.status.notConnected.filter((e) => podOf.has(e.node));
    brokenTotal += named.length + (s.status.notConnectedOmitted ?? 0);
    for (const e of named) broken.push({ from: m.pod, to: podOf.get(e.node)!, reason: e.reason });
    if (s.status.connected === n - 1 && named.length === 0 && !(s.status.notConnectedOmitted ?? 0))
      fullyConnected++;
  });
  broken.sort((a, b) => byteOrder(a.from, b.from) || byteOrder(a.to, b.to));

  const shownGroups: MeshGroup[] =
    groups.length > 1
      ? groups.map((g) => {
          const { list, omitted } = capped(g.map((i) => members[i]!.pod));
          return { size: g.length, members: list, ...(omitted > 0 ? { membersOmitted: omitted } : {}) };
        })
      : [];
  const brokenShown = capped(broken).list;
  const mesh: MeshStatus = {
    members: n,
    reporting,
    fullyConnected,
    largestGroup: largest,
    summary: reporting === 0 ? `?/${n}` : `${largest}/${n}`,
    ...withList('groups', shownGroups),
    ...(brokenTotal > 0
      ? {
          brokenLinks: brokenShown,
          ...(brokenTotal > brokenShown.length
            ? { brokenLinksOmitted: brokenTotal - brokenShown.length }
            : {}),
        }
      : {}),
    ...withList('selfCheckFailures', selfCheckFailures),
    ...withList('inTrouble', inTrouble),
    ...withList('stale', stale),
    ...withList('unreported', unreported),
  };
  const condition = meshedCondition(
    mesh,
    groups.map((g) => g.map((i) => members[i]!.pod)),
    broken,
    brokenTotal,
  );
  return { mesh, condition, ...(nextChangeAt !== undefined ? { nextChangeAt } : {}) };
}

const list = (names: string[], max = 3): string =>
  names.length <= max ? names.join(', ') : `${names.slice(0, max).join(', ')} and ${names.length - max} more`;

const groupText = (groups: string[][]): string => groups.map((g) => list(g, 4)).join(' | ');

function meshedCondition(
  mesh: MeshStatus,
  groups: string[][],
  broken: BrokenLink[],
  brokenTotal: number,
): MeshedCondition {
  const c = (
    status: MeshedCondition['status'],
    reason: MeshedCondition['reason'],
    message: string,
  ): MeshedCondition => ({
    type: MESHED,
    status,
    reason,
    message,
  });
  const n = mesh.members;
  if (n === 0) return c('Unknown', 'NoMembers', 'No member is listed.');
  const failures = mesh.selfCheckFailures ?? [];
  if (failures.length > 0) {
    const f = failures[0]!;
    const more =
      failures.length > 1
        ? ` (${failures.length - 1 + (mesh.selfCheckFailuresOmitted ?? 0)} more members too)`
        : '';
    return c(
      'False',
      'SelfCheckFailed',
      `${f.pod} runs as ${f.actual} but is listed as ${f.expected}: its peers dial a name nobody answers${more}.`,
    );
  }
  const of = `the largest connected group holds ${mesh.largestGroup} of ${n} members`;
  if (groups.filter((g) => g.length >= 2).length >= 2)
    return c(
      'False',
      'Split',
      `The members are split into ${groups.length} groups that cannot reach each other: ${groupText(groups)}; ${of}.`,
    );
  if (brokenTotal > 0) {
    const links = broken.slice(0, 3).map((b) => `${b.from} → ${b.to} (${b.reason})`);
    const rest = brokenTotal - links.length;
    const cut = groups.length > 1 ? `Groups ${groupText(groups)}. ` : '';
    return c(
      'False',
      'LinkBroken',
      `${cut}Broken links: ${links.join(', ')}${rest > 0 ? ` and ${rest} more` : ''}; ${of}.`,
    );
  }
  if (mesh.reporting < n) {
    const why = [
      ...(mesh.stale ?? []).map((s) => `${s.pod} (stale since ${s.reportedAt})`),
      ...(mesh.unreported ?? []).map((u) => `${u.pod} (${u.reason})`),
    ];
    return c(
      'Unknown',
      'ReportsMissing',
      `${mesh.reporting} of ${n} members report a current view; not yet: ${list(why)}.`,
    );
  }
  if (mesh.fullyConnected === n)
    return c('True', 'Meshed', `All ${n} members report a current view connected to every other member.`);
  // Every member reports, none names a broken link, yet some count does not add up: a writer's bug.
  return c(
    'Unknown',
    'ReportsInconsistent',
    `${n - mesh.fullyConnected} of ${n} current reports neither confirm every link nor name a broken one.`,
  );
}
