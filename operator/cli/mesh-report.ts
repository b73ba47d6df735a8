import type { LINK_REASONS } from '../api/schema.js';
import { sanitizeCell } from '../naming/quote.js';
import type { MeshAggregate } from '../mesh/aggregate.js';
import { linkBetween, type Link, type MeshModel, type MemberStanding } from '../mesh/standing.js';

/**
 * What `ctopo mesh` prints: the mesh as the members report it — a members × members matrix up to
 * MATRIX_MAX members (each row is that member's own report of its link to the column's member),
 * a summary beyond — and the members without a current view, self-check failures and trouble.
 * Pure; every value from the cluster is printed terminal-safe.
 *
 * | code | meaning                                                          |
 * |------|------------------------------------------------------------------|
 * | 0    | Meshed: every member reports a current view connected to all     |
 * | 1    | not meshed: a broken link, a split or a self-check failure       |
 * | 2    | unknown: reports are missing, stale or of another list           |
 */

export const MATRIX_MAX = 50;
export const EXIT_MESH_UNKNOWN = 2;

const safe = sanitizeCell;

export const REASON_LETTER: Record<(typeof LINK_REASONS)[number], string> = {
  Refused: 'r',
  Timeout: 't',
  NodeDown: 'd',
  NotTried: 'n',
  Invalid: 'i',
};
const LEGEND =
  '✓ connected   ✗ not connected: r refused, t timeout, d node down, n not tried yet, i invalid name   ? unknown';

function cell(link: Link): string {
  switch (link.kind) {
    case 'connected':
      return '✓';
    case 'broken':
      return `✗${REASON_LETTER[link.reason]}`;
    case 'unknown':
      return '?';
  }
}

function standingText(s: MemberStanding, now: Date): string | undefined {
  switch (s.kind) {
    case 'current':
      return undefined;
    case 'stale': {
      const ago = Math.round((now.getTime() - Date.parse(s.status.reportedAt)) / 60_000);
      return `stale: its last report is from ${safe(s.status.reportedAt)} (${ago} min ago)`;
    }
    case 'unreported':
      return s.reason === 'NoReport'
        ? 'no report'
        : s.reason === 'OtherList'
          ? 'its report is of another peer list (it has not caught up yet)'
          : 'not observed: its connector cannot see connections';
  }
}

export interface MeshFacts {
  namespace: string;
  name: string;
  model: MeshModel;
  aggregate: MeshAggregate;
  now: Date;
}

export function meshReport(f: MeshFacts): { lines: string[]; code: 0 | 1 | 2 } {
  const { model, aggregate } = f;
  const { mesh, condition } = aggregate;
  const n = model.members.length;
  const lines = [
    `ClusterTopology ${safe(f.namespace)}/${safe(f.name)}: MESH ${mesh.summary} — ${n} listed members, ${mesh.reporting} with a current view, ${mesh.largestGroup} in the largest connected group.`,
    `Meshed: ${condition.status} (${condition.reason}) — ${safe(condition.message)}`,
  ];
  if (n > 0 && n <= MATRIX_MAX) lines.push('', ...matrix(model, f.now));
  else if (n > MATRIX_MAX) lines.push('', ...summary(f));
  const without = model.standings.flatMap((s, i) => {
    const why = standingText(s, f.now);
    return why === undefined ? [] : [`  ${safe(model.members[i]!.pod)}: ${why}`];
  });
  if (without.length > 0 && n > MATRIX_MAX) lines.push('', 'Members without a current view:', ...without);
  const failures = (mesh.selfCheckFailures ?? []).map(
    (x) => `  ${safe(x.pod)} runs as ${safe(x.actual)} but is listed as ${safe(x.expected)}`,
  );
  if (failures.length > 0)
    lines.push('', 'Self-check failures (its peers dial a name nobody answers):', ...failures);
  const trouble = (mesh.inTrouble ?? []).map(
    (x) => `  ${safe(x.pod)}: ${safe(x.cause)} since ${safe(x.since)}`,
  );
  if (trouble.length > 0) lines.push('', 'Members in trouble (they keep their connections):', ...trouble);
  const code = condition.status === 'True' ? 0 : condition.status === 'False' ? 1 : EXIT_MESH_UNKNOWN;
  return { lines, code };
}

function matrix(model: MeshModel, now: Date): string[] {
  const n = model.members.length;
  const num = (i: number) => String(i + 1).padStart(String(n).length);
  const names = model.members.map((m) => safe(m.pod));
  const width = Math.max(...names.map((x) => x.length));
  const pad = (s: string, w: number) => s + ' '.repeat(Math.max(0, w - [...s].length));
  const head = `${' '.repeat(num(0).length + 1 + width + 1)}${model.members.map((_, j) => pad(num(j), 4)).join('')}`;
  const rows = model.members.map((_, i) => {
    const cells = model.members
      .map((_, j) => pad(i === j ? '·' : cell(linkBetween(model, i, j)), 4))
      .join('');
    const why = standingText(model.standings[i]!, now);
    return `${num(i)} ${pad(names[i]!, width)} ${cells}${why ? `  ← ${why}` : ''}`.trimEnd();
  });
  return [
    "Each row is that member's own report of its link to the column's member.",
    head.trimEnd(),
    ...rows,
    LEGEND,
  ];
}

function summary(f: MeshFacts): string[] {
  const { mesh } = f.aggregate;
  const out = [`${mesh.members} members: more than ${MATRIX_MAX}, so no matrix.`];
  for (const g of mesh.groups ?? [])
    out.push(
      `  a group of ${g.size}: ${g.members.map(safe).join(', ')}${g.membersOmitted ? ` and ${g.membersOmitted} more` : ''}`,
    );
  if (mesh.groupsOmitted) out.push(`  and ${mesh.groupsOmitted} more groups`);
  const links = mesh.brokenLinks ?? [];
  if (links.length > 0) {
    out.push(`Broken links (${links.length + (mesh.brokenLinksOmitted ?? 0)}):`);
    for (const l of links) out.push(`  ${safe(l.from)} → ${safe(l.to)}: ${l.reason}`);
    if (mesh.brokenLinksOmitted) out.push(`  and ${mesh.brokenLinksOmitted} more`);
  }
  out.push(`Fully connected members: ${mesh.fullyConnected} of ${mesh.members}.`);
  return out;
}
