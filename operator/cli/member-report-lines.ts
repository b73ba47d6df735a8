import type { ClusterTopologyStatus } from '../api/types.generated.js';
import { sanitizeCell } from '../naming/quote.js';
import { meshModel, type MemberReportObject } from '../mesh/standing.js';
import { memberReportName } from '../protocol/member-report.js';
import { REPORT_STALE_AFTER_MS } from '../protocol/report-plan.js';

/**
 * The part of `ctopo explain` that shows a member's own report (ClusterTopologyMember
 * `<pod>.<topology>`, docs/status-protocol.md §8): what it runs as, whom it is connected to and
 * whom not, its trouble, and whether the view counts (current, stale, of another list). Pure.
 */

export type MemberReportRead =
  | { kind: 'found'; report: MemberReportObject }
  | { kind: 'missing' }
  | { kind: 'unreadable'; message: string };

const safe = sanitizeCell;

const REASON_TEXT = {
  Refused: 'refused',
  Timeout: 'timed out',
  NodeDown: 'node down',
  NotTried: 'not tried yet',
  Invalid: 'invalid name, never dialled',
} as const;

export function memberReportLines(
  read: MemberReportRead,
  ctx: { pod: string; topology: string; status?: ClusterTopologyStatus; now: Date },
): string[] {
  const name = safe(memberReportName(ctx.pod, ctx.topology));
  if (read.kind === 'missing')
    return [
      `Member report ${name}: none. Its reader does not report what it sees, or may not (status protocol §8.5);`,
      `the mesh (ctopo mesh) counts it as not reporting.`,
    ];
  if (read.kind === 'unreadable') return [`Member report ${name} cannot be read: ${safe(read.message)}`];
  const s = read.report.status;
  if (!s) return [`Member report ${name} holds no view yet.`];
  const ageS = Math.round((ctx.now.getTime() - Date.parse(s.reportedAt)) / 1000);
  const lines = [`Member report ${name} (what the member itself sees):`];
  lines.push(`  Reported:     ${safe(s.reportedAt)} (${ageS} s ago)`);
  const check = s.selfCheck;
  lines.push(
    `  Runs as:      ${safe(s.node)} — ${
      check.result === 'Match'
        ? 'the name listed for its pod'
        : check.result === 'Mismatch'
          ? `NOT the name listed for its pod (${safe(check.expected ?? '')}): its peers dial a name nobody answers`
          : check.result === 'NotListed'
            ? 'its pod is not in the list it read'
            : 'it has no list yet'
    }`,
  );
  lines.push(
    `  Connected:    ${s.connected} of ${s.listed} listed peers${s.observed === false ? ' (as its connector was told: it cannot see connections)' : ''}`,
  );
  const entries = s.notConnected.map((e) => `${safe(e.node)} (${REASON_TEXT[e.reason]})`);
  if (entries.length > 0)
    lines.push(
      `  Not connected: ${entries.join(', ')}${s.notConnectedOmitted ? ` and ${s.notConnectedOmitted} more` : ''}`,
    );
  if (s.trouble)
    lines.push(
      `  Trouble:      ${safe(s.trouble.cause)} since ${safe(s.trouble.since)}${s.trouble.message ? `: ${safe(s.trouble.message)}` : ''}`,
    );
  lines.push(`  Counts:       ${viewStanding(read.report, ctx)}`);
  return lines;
}

/** Whether the operator's aggregate counts this view, by the same rules (mesh/standing.ts). */
function viewStanding(
  report: MemberReportObject,
  ctx: { topology: string; status?: ClusterTopologyStatus; now: Date },
): string {
  const peers = Array.isArray(ctx.status?.peers) ? ctx.status.peers : undefined;
  const uid = report.spec?.pod?.uid;
  const member = peers?.find((p) => p.uid === uid);
  if (!peers || !member)
    return 'no: its pod (by uid) is not a listed member, so the mesh ignores this report';
  const model = meshModel({ topology: ctx.topology, peers, reports: [report], now: ctx.now.getTime() });
  const mine = model.standings[model.members.findIndex((m) => m.uid === uid)]!;
  if (mine.kind === 'stale')
    return `no: stale — older than ${REPORT_STALE_AFTER_MS / 1000} s; the member is silent (frozen, gone, or cut off from the API server)`;
  if (mine.kind === 'current') return 'yes: a current view of the current peer list';
  if (mine.kind === 'unreported' && mine.reason === 'OtherList')
    return 'not yet: it is of another peer list than the current one (the member has not caught up)';
  if (mine.kind === 'unreported' && mine.reason === 'NotObserved')
    return 'as unknown links: its connector cannot see connections';
  return "no: its spec.pod does not match the listed pod's name";
}
