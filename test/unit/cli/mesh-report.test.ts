import { describe, expect, it } from '@jest/globals';
import { meshReport } from '../../../operator/cli/mesh-report.js';
import { memberReportLines } from '../../../operator/cli/member-report-lines.js';
import { aggregateModel } from '../../../operator/mesh/aggregate.js';
import { meshModel, type MemberReportObject } from '../../../operator/mesh/standing.js';
import { memberReport, memberView, type LinkReason } from '../../../operator/protocol/member-report.js';
import { REPORT_STALE_AFTER_MS } from '../../../operator/protocol/report-plan.js';
import type { ClusterTopologyStatus } from '../../../operator/api/types.generated.js';

const now = new Date('2026-12-04T12:00:00Z');
const members = (n: number) =>
  Array.from({ length: n }, (_, i) => ({ pod: `web-${i}`, uid: `u${i}`, nodeName: `web-${i}@10.0.0.${i}` }));

/** Member i is connected to the members of its group; `reason` for the others. */
function reports(
  ms: ReturnType<typeof members>,
  group: number[],
  skip: number[] = [],
  reason: LinkReason = 'Refused',
) {
  const peers = ms.map((m) => ({ nodeName: m.nodeName, pod: m.pod }));
  return ms.flatMap((m, i): MemberReportObject[] =>
    skip.includes(i)
      ? []
      : [
          memberReport(
            { namespace: 'ns', topology: 'web', pod: { name: m.pod, uid: m.uid } },
            memberView({
              node: m.nodeName,
              pod: m.pod,
              peers,
              connected: ms.filter((_, j) => group[j] === group[i]).map((x) => x.nodeName),
              reasons: new Map(ms.map((x) => [x.nodeName, reason] as const)),
            }),
            now,
          ),
        ],
  );
}

function render(ms: ReturnType<typeof members>, rs: MemberReportObject[]) {
  const model = meshModel({ topology: 'web', peers: ms, reports: rs, now: now.getTime() });
  const aggregate = aggregateModel(model, now.getTime(), REPORT_STALE_AFTER_MS);
  return meshReport({ namespace: 'ns', name: 'web', model, aggregate, now });
}

describe('ctopo mesh: what it prints', () => {
  it('a wrong cookie: the matrix shows the member cut off both ways, refused; exit 1', () => {
    const ms = members(3);
    const { lines, code } = render(ms, reports(ms, [0, 0, 1]));
    expect(code).toBe(1);
    expect(lines[0]).toBe(
      'ClusterTopology ns/web: MESH 2/3 — 3 listed members, 3 with a current view, 2 in the largest connected group.',
    );
    expect(lines.slice(3, 8)).toEqual([
      "Each row is that member's own report of its link to the column's member.",
      '        1   2   3',
      '1 web-0 ·   ✓   ✗r',
      '2 web-1 ✓   ·   ✗r',
      '3 web-2 ✗r  ✗r  ·',
    ]);
  });

  it('a member without a report is a row of ? with the reason; whole otherwise: exit 2 (unknown)', () => {
    const ms = members(3);
    const { lines, code } = render(ms, reports(ms, [0, 0, 0], [1]));
    expect(code).toBe(2);
    expect(lines).toContain('2 web-1 ?   ·   ?     ← no report');
    expect(lines[1]).toMatch(
      /^Meshed: Unknown \(ReportsMissing\) — 2 of 3 members report a current view; not yet: web-1 \(NoReport\)\.$/,
    );
  });

  it('meshed: all ✓, exit 0', () => {
    const ms = members(4);
    const { lines, code } = render(ms, reports(ms, [0, 0, 0, 0]));
    expect(code).toBe(0);
    expect(lines[0]).toContain('MESH 4/4');
    expect(lines.filter((l) => /^\d web-/.test(l)).every((l) => !/[✗?]/.test(l))).toBe(true);
  });

  it('beyond 50 members, the groups and the broken links instead of a matrix', () => {
    const ms = members(60);
    const { lines } = render(
      ms,
      reports(
        ms,
        ms.map((_, i) => (i < 58 ? 0 : 1)),
      ),
    );
    expect(lines.some((l) => l.startsWith('Each row is'))).toBe(false);
    expect(lines).toContain('60 members: more than 50, so no matrix.');
    expect(lines.find((l) => l.startsWith('  a group of 58: '))).toMatch(/and 38 more$/);
    expect(lines).toContain('  a group of 2: web-58, web-59');
    expect(lines).toContain(`Broken links (${2 * 58 * 2}):`);
  });

  it('values from the cluster are printed terminal-safe', () => {
    const ms = [{ pod: 'evil\u001b[31m', uid: 'u', nodeName: 'a@h' }];
    const { lines } = render(ms, []);
    expect(lines.join('\n')).not.toContain('\u001b');
  });
});

describe('ctopo explain: a member report in words', () => {
  const ms = members(3);
  const status = {
    peers: ms,
    lastResponse: { code: '200', reason: 'OK', since: '' },
  } as unknown as ClusterTopologyStatus;

  it('a current view: the name, whom it is connected to and whom not, and that the mesh counts it', () => {
    const r = reports(ms, [0, 0, 1], [], 'Timeout')[0]!;
    const lines = memberReportLines(
      { kind: 'found', report: r },
      { pod: 'web-0', topology: 'web', status, now },
    );
    expect(lines).toEqual([
      'Member report web-0.web (what the member itself sees):',
      '  Reported:     2026-12-04T12:00:00Z (0 s ago)',
      '  Runs as:      web-0@10.0.0.0 — the name listed for its pod',
      '  Connected:    1 of 2 listed peers',
      '  Not connected: web-2@10.0.0.2 (timed out)',
      '  Counts:       yes: a current view of the current peer list',
    ]);
  });

  it('a stale one, one of another list, none', () => {
    const old = reports(ms, [0, 0, 0])[0]!;
    old.status!.reportedAt = new Date(now.getTime() - REPORT_STALE_AFTER_MS - 1000).toISOString();
    expect(
      memberReportLines({ kind: 'found', report: old }, { pod: 'web-0', topology: 'web', status, now }).at(
        -1,
      ),
    ).toMatch(/^ {2}Counts: {7}no: stale — older than 360 s/);
    const other = reports(members(4), [0, 0, 0, 0])[0]!;
    expect(
      memberReportLines({ kind: 'found', report: other }, { pod: 'web-0', topology: 'web', status, now }).at(
        -1,
      ),
    ).toMatch(/not yet: it is of another peer list/);
    expect(memberReportLines({ kind: 'missing' }, { pod: 'web-0', topology: 'web', status, now })[0]).toMatch(
      /^Member report web-0\.web: none\./,
    );
  });
});
