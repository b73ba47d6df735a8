import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFile } from 'node:fs/promises';
import type { ClusterTopologyMemberStatus } from '../../../operator/api/types.generated.js';
import { REPORT_STALE_AFTER_MS } from '../../../operator/protocol/report-plan.js';
import { BeamMembers, NS, TOPOLOGY } from '../../support/beam-members.js';
import { kubeconfigForUser } from '../../support/cluster.js';
import { applyObjects, memberReportRbac, readerRbac } from '../../support/objects.js';
import { CtopoProcess, localAgentArgs } from '../../support/operator-process.js';
import { waitFor } from '../../support/wait.js';

/**
 * A member that is frozen (SIGSTOP) stops reporting; past the staleness limit (the 5 minute
 * renewal plus 60 s) its report is stale and the status says so, while the members that run on
 * keep theirs current by renewing them. Resumed, it reports again. Real API server, real
 * operator, real BEAM nodes: a, b, c run the OTP library (c's VM is frozen); d and e are nodes
 * beside the sidecar (`ctopo agent`, erlang connector; d's agent is frozen, its node runs on).
 * Both writers are proven in one wait, as the limit is the protocol's (six minutes, no option
 * shortens it). Slow by nature, so it runs once, not once per BEAM cell (test/e2e/beam-client/
 * does).
 */

const STALE_WAIT = REPORT_STALE_AFTER_MS + 120_000;
/** A tick time past the test's length (see beforeAll). */
const TICK = ['-kernel', 'net_ticktime', '900'];
const LIBRARY = ['a', 'b', 'c'];
const SIDECARS = ['d', 'e'];

/** A report's view: what a renewal leaves unchanged (docs/status-protocol.md §8.4). */
const viewOf = (r: ClusterTopologyMemberStatus) => {
  const { reportedAt: _at, topologyResourceVersion: _rv, ...view } = r;
  return view;
};

describe('a frozen member’s report goes stale (real API server, real nodes, the library and the sidecar)', () => {
  let m: BeamMembers;
  const agents = new Map<string, CtopoProcess>();

  beforeAll(async () => {
    m = await BeamMembers.start();
    // The sidecars read the topology and write their reports as user `sidecar`.
    const subject = { kind: 'User' as const, name: 'sidecar' };
    await applyObjects(m.s, [
      ...readerRbac({
        namespace: NS,
        name: 'sidecar',
        topologies: [TOPOLOGY],
        verbs: ['get', 'list', 'watch'],
        leases: true,
        subject,
      }),
      ...memberReportRbac({ namespace: NS, name: 'sidecar-reports', subject }),
    ]);
    const kubeconfig = await kubeconfigForUser(m.s, 'sidecar');
    for (const p of [...LIBRARY, ...SIDECARS]) await m.addPod(p);
    // A tick time past the test's length on every node: the others keep their connections to the
    // frozen VM, so their views do not change and only the renewal keeps their reports current.
    for (const p of LIBRARY) await m.startMember(p, { erlArgs: TICK });
    for (const p of SIDECARS) {
      await m.erl.startNode(p, { args: TICK });
      agents.set(
        p,
        new CtopoProcess(
          [
            ...localAgentArgs({ kubeconfig, namespace: NS, topology: TOPOLOGY, pod: p }),
            ...['--connector', 'erlang', '--cookie-file', m.erl.cookieFile],
          ],
          { ERL_EPMD_PORT: String(m.erl.epmdPort) },
        ),
      );
    }
    await waitFor('MESH 5/5', async () => (await m.status())?.mesh?.summary === '5/5', 90_000);
  }, 180_000);
  afterAll(async () => {
    const c = m?.nodes.get('c');
    if (c?.alive) c.child.kill('SIGCONT');
    agents.get('d')?.child.kill('SIGCONT');
    await CtopoProcess.stopAll();
    await m?.stop();
  });

  it(
    'c’s VM and d’s sidecar frozen: their reports go stale and the status says so; a, b and e, renewing, stay current; resumed, they report again',
    async () => {
      const c = m.nodes.get('c')!;
      const cPid = c.child.pid!;
      const dPid = agents.get('d')!.child.pid!;
      // The processes signalled are the VM itself (erl execs it) and the agent itself.
      expect((await readFile(`/proc/${cPid}/comm`, 'utf8')).trim()).toMatch(/^beam/);
      expect((await readFile(`/proc/${dPid}/cmdline`, 'utf8')).split('\0')).toEqual(
        expect.arrayContaining(['agent', '--pod-name', 'd']),
      );
      const eBefore = (await m.reports()).get('e')!.status;
      process.kill(cPid, 'SIGSTOP');
      process.kill(dPid, 'SIGSTOP');
      const st = await waitFor(
        'c’s and d’s reports stale in the status',
        async () => {
          const x = await m.status();
          const stale = (x?.mesh?.stale ?? []).map((r) => r.pod);
          return stale.includes('c') && stale.includes('d') ? x : undefined;
        },
        STALE_WAIT,
        2_000,
      );
      // Only c and d: a, b and e renewed theirs, unchanged (their last write is younger than the limit).
      expect(st.mesh!.stale!.map((r) => r.pod).sort()).toEqual(['c', 'd']);
      expect(st.mesh!.reporting).toBe(3);
      const reports = await m.reports();
      for (const p of ['a', 'b', 'e'])
        expect(Date.now() - Date.parse(reports.get(p)!.status.reportedAt)).toBeLessThan(
          REPORT_STALE_AFTER_MS,
        );
      // e's node kept its connections, so the sidecar's view did not change: what it wrote since
      // the freeze is the renewal of the same view (by 5 minutes after its last write).
      const eAfter = await waitFor(
        'e’s renewal',
        async () => {
          const r = (await m.reports()).get('e')!.status;
          return r.reportedAt !== eBefore.reportedAt ? r : undefined;
        },
        STALE_WAIT,
        2_000,
      );
      expect(viewOf(eAfter)).toEqual(viewOf(eBefore));
      process.kill(cPid, 'SIGCONT');
      process.kill(dPid, 'SIGCONT');
      await waitFor(
        'c and d current again, MESH 5/5',
        async () => {
          const x = await m.status();
          return x?.mesh?.summary === '5/5' && !x.mesh.stale;
        },
        120_000,
        1_000,
      );
    },
    STALE_WAIT + 180_000,
  );
});
