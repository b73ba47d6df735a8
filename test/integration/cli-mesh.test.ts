import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ControlPlaneState } from '../../dev/cluster/control-plane.js';
import type { Peer } from '../../operator/api/types.generated.js';
import { connect } from '../../operator/kube/client.js';
import { memberReport, memberView } from '../../operator/protocol/member-report.js';
import { writeMemberReport } from '../../operator/protocol/member-report-writer.js';
import { REPORT_STALE_AFTER_MS } from '../../operator/protocol/report-plan.js';
import { kubectlOk } from '../support/cluster.js';
import { threeMembers, writeReport, type ReportOptions, type ThreeMembers } from '../support/members.js';
import { runCtopo } from './cli-run.js';

/**
 * `ctopo mesh` and the member report in `ctopo explain`, end to end: the real operator lists three
 * pods, the test writes their members' reports to the real API server as their readers would, and
 * the real `ctopo` reads them back.
 */

describe('ctopo mesh and ctopo explain with member reports (real API server)', () => {
  let m: ThreeMembers;
  let s: ControlPlaneState;
  let ns: string;
  let peers: Peer[];
  const mesh = () => runCtopo(['mesh', '--kubeconfig', s.kubeconfig, '-n', ns, 'web']);
  const report = (i: number, to: number[], o: ReportOptions = {}) => writeReport(m, i, to, o);

  beforeAll(async () => {
    m = await threeMembers('cli-mesh', '10.9.0');
    ({ s, ns, peers } = m);
  });
  afterAll(async () => {
    await m?.op.stop();
  });

  it('before any report: every row unknown, exit 2', async () => {
    const r = await mesh();
    expect(r.stderr).toBe('');
    expect(r.code).toBe(2);
    expect(r.stdout).toContain(
      `ClusterTopology ${ns}/web: MESH ?/3 — 3 listed members, 0 with a current view`,
    );
    expect(r.stdout).toContain('1 web-0 ·   ?   ?     ← no report');
  });

  it('one member with a different cookie: MESH 2/3, its links refused both ways in the matrix; exit 1', async () => {
    await report(0, [1]);
    await report(1, [0]);
    await report(2, []);
    // a report of a pod that no longer exists (the dev cluster has no garbage collector): ignored
    const gone = memberReport(
      { namespace: ns, topology: 'web', pod: { name: 'web-9', uid: 'uid-of-a-pod-long-gone' } },
      memberView({ node: 'web-9@10.9.0.9', pod: 'web-9', peers, connected: [] }),
      new Date(),
    );
    expect((await writeMemberReport(connect({ kubeconfig: s.kubeconfig }), gone, 'ctopo-test')).outcome).toBe(
      'ok',
    );
    const r = await mesh();
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(
      `ClusterTopology ${ns}/web: MESH 2/3 — 3 listed members, 3 with a current view`,
    );
    expect(r.stdout).toContain('Meshed: False (LinkBroken) — Groups web-0, web-1 | web-2.');
    const matrix = r.stdout.split('\n').filter((l) => /^\d web-/.test(l));
    expect(matrix).toEqual(['1 web-0 ·   ✓   ✗r', '2 web-1 ✓   ·   ✗r', '3 web-2 ✗r  ✗r  ·']);
  });

  it('ctopo explain shows the member report of web-2: refused, and that it counts', async () => {
    const r = await runCtopo(['explain', '--kubeconfig', s.kubeconfig, '-n', ns, 'web', 'web-2']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Member report web-2.web (what the member itself sees):');
    expect(r.stdout).toContain(`  Runs as:      ${peers[2]!.nodeName} — the name listed for its pod`);
    expect(r.stdout).toContain('  Connected:    0 of 2 listed peers');
    expect(r.stdout).toContain(
      `  Not connected: ${peers[0]!.nodeName} (refused), ${peers[1]!.nodeName} (refused)`,
    );
    expect(r.stdout).toContain('  Counts:       yes: a current view of the current peer list');
  });

  it('a member that stopped reporting goes stale; one that runs under another name is a self-check failure', async () => {
    await report(2, [0, 1], { ageMs: REPORT_STALE_AFTER_MS + 60_000 });
    await report(1, [0, 2], { node: 'other@10.9.0.2' });
    const r = await mesh();
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(
      /\n3 web-2 \? {3}\? {3}· +← stale: its last report is from \S+ \(\d+ min ago\)\n/,
    );
    expect(r.stdout).toContain(`  web-1 runs as other@10.9.0.2 but is listed as ${peers[1]!.nodeName}`);
    expect(r.stdout).toContain('Meshed: False (SelfCheckFailed) — web-1 runs as other@10.9.0.2');
  });

  it('all connected, all current: MESH 3/3, Meshed True, exit 0; the reports at a glance with kubectl', async () => {
    for (const [i, to] of [
      [0, [1, 2]],
      [1, [0, 2]],
      [2, [0, 1]],
    ] as const)
      await report(i, [...to]);
    const r = await mesh();
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('MESH 3/3');
    expect(r.stdout).toContain(
      'Meshed: True (Meshed) — All 3 members report a current view connected to every other member.',
    );
    const table = await kubectlOk(s, ['-n', ns, 'get', 'ctm', '-l', 'cluster.netzlive.io/topology=web']);
    expect(table).toMatch(/\nweb-0\.web\s+web-0@10\.9\.0\.1\s+2\/2\s+Match\s/);
  });
});
