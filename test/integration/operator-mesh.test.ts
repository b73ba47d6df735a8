import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ControlPlaneState } from '../../dev/cluster/control-plane.js';
import type { ClusterTopologyStatus, Peer } from '../../operator/api/types.generated.js';
import { REPORT_STALE_AFTER_MS } from '../../operator/protocol/report-plan.js';
import { kubectlOk } from '../support/cluster.js';
import { threeMembers, writeReport, type ReportOptions, type ThreeMembers } from '../support/members.js';
import { condition, eventsFor, topologyStatus } from '../support/objects.js';
import type { CtopoProcess } from '../support/operator-process.js';
import { waitFor } from '../support/wait.js';

/**
 * The operator aggregates the members' reports into the status (docs/status-protocol.md §8.6),
 * against the real API server: the test writes the reports as the members' readers would, the real
 * operator (with the chart's permissions) watches them and writes `status.mesh`, the `Meshed`
 * condition, the MESH column and Events — and no more than once per 15 s per topology.
 */

describe('the operator shows the mesh from the members’ reports (real API server)', () => {
  let m: ThreeMembers;
  let s: ControlPlaneState;
  let ns: string;
  let op: CtopoProcess;
  let peers: Peer[];
  const report = (i: number, to: number[], o: ReportOptions = {}) => writeReport(m, i, to, o);
  const all = (i: number) => [0, 1, 2].filter((j) => j !== i);
  const status = () => topologyStatus(s, ns, 'web');
  const meshed = (st: ClusterTopologyStatus | undefined) => condition(st, 'Meshed');

  beforeAll(async () => {
    m = await threeMembers('op-mesh', '10.7.0');
    ({ s, ns, op, peers } = m);
  });
  afterAll(async () => {
    await op?.stop();
  });

  it('while no member reports: no mesh, no Meshed condition, the MESH column blank', async () => {
    const st = await status();
    expect(st?.mesh).toBeUndefined();
    expect(meshed(st)).toBeUndefined();
  });

  it('one member with a different cookie: MESH 2/3, Meshed False naming its links both ways, a Warning event', async () => {
    await report(0, [1]);
    await report(1, [0]);
    await report(2, []);
    // a report of a pod that is gone (no garbage collector here): ignored
    await report(0, [1, 2], { pod: { name: 'web-9', uid: 'uid-of-a-pod-long-gone' } });
    const st = await waitFor('MESH 2/3', async () => {
      const x = await status();
      return x?.mesh?.summary === '2/3' ? x : undefined;
    });
    expect(st.mesh).toMatchObject({ members: 3, reporting: 3, largestGroup: 2, fullyConnected: 0 });
    expect(st.mesh!.brokenLinks).toEqual([
      { from: 'web-0', to: 'web-2', reason: 'Refused' },
      { from: 'web-1', to: 'web-2', reason: 'Refused' },
      { from: 'web-2', to: 'web-0', reason: 'Refused' },
      { from: 'web-2', to: 'web-1', reason: 'Refused' },
    ]);
    expect(meshed(st)).toMatchObject({ status: 'False', reason: 'LinkBroken' });
    expect(meshed(st)!.message).toMatch(
      /^Groups web-0, web-1 \| web-2\. Broken links: web-0 → web-2 \(Refused\)/,
    );
    const table = await kubectlOk(s, ['-n', ns, 'get', 'ctopo', 'web']);
    expect(table).toMatch(/\sMESH\s/);
    expect(table).toMatch(/\n\S+(\s+\S+){6}\s+2\/3\s/);
    const events = await waitFor('the NotMeshed event', async () => {
      const e = await eventsFor(s, ns, 'web');
      return e.some((x) => x.reason === 'NotMeshed') ? e : undefined;
    });
    expect(events.find((x) => x.reason === 'NotMeshed')).toMatchObject({ type: 'Warning' });
  });

  it('the member rejoins: MESH 3/3, Meshed True, a Normal event', async () => {
    for (const i of [0, 1, 2]) await report(i, all(i));
    const st = await waitFor(
      'MESH 3/3',
      async () => {
        const x = await status();
        return x?.mesh?.summary === '3/3' ? x : undefined;
      },
      40_000,
    );
    expect(meshed(st)).toMatchObject({ status: 'True', reason: 'Meshed' });
    await waitFor('the Meshed event', async () =>
      (await eventsFor(s, ns, 'web')).some((x) => x.reason === 'Meshed' && x.type === 'Normal'),
    );
  });

  it('a member that runs under another name: a self-check failure in the status and an Event', async () => {
    await report(1, all(1), { node: 'other@10.7.0.2' });
    const st = await waitFor(
      'the self-check failure',
      async () => {
        const x = await status();
        return x?.mesh?.selfCheckFailures?.length ? x : undefined;
      },
      40_000,
    );
    expect(st.mesh!.selfCheckFailures).toEqual([
      { pod: 'web-1', expected: peers[1]!.nodeName, actual: 'other@10.7.0.2' },
    ]);
    expect(meshed(st)).toMatchObject({ status: 'False', reason: 'SelfCheckFailed' });
    const e = await waitFor('the SelfCheckFailed event', async () =>
      (await eventsFor(s, ns, 'web')).find((x) => x.reason === 'SelfCheckFailed'),
    );
    expect(e).toMatchObject({
      type: 'Warning',
      message: expect.stringContaining('web-1 runs as other@10.7.0.2'),
    });
  });

  it('a member that stops reporting goes stale by time alone: the operator looks again when it does', async () => {
    for (const i of [0, 1]) await report(i, all(i));
    // web-2's last report is 25 s short of the limit; nobody writes anything after it.
    await report(2, all(2), { ageMs: REPORT_STALE_AFTER_MS - 25_000 });
    await waitFor(
      'all three current',
      async () => {
        const x = await status();
        return x?.mesh?.reporting === 3 && !x.mesh.stale && !x.mesh.selfCheckFailures;
      },
      40_000,
    );
    const st = await waitFor(
      'web-2 stale',
      async () => {
        const x = await status();
        return x?.mesh?.stale?.some((r) => r.pod === 'web-2') ? x : undefined;
      },
      60_000,
    );
    expect(meshed(st)).toMatchObject({ status: 'Unknown', reason: 'ReportsMissing' });
  });

  it('a burst of report changes is written at most once per 15 s: the first, then the last', async () => {
    for (const i of [0, 1, 2]) await report(i, all(i));
    await waitFor('MESH 3/3 again', async () => (await status())?.mesh?.summary === '3/3', 40_000);
    // No status write is pending now (the pods do not change; the poll is 10 min away).
    const before = await op.metricSum('ctopo_status_writes_total', { result: 'ok' });
    // Eight reports of web-2 in about four seconds, each a mesh unlike the others (another trouble),
    // so any write in between would carry a new aggregate; then a last one.
    for (let k = 0; k < 8; k++) {
      await report(2, all(2), { trouble: `Burst${k}` });
      await new Promise((r) => setTimeout(r, 500));
    }
    await report(2, all(2), { trouble: 'ApiUnreachable' });
    await waitFor(
      'the last of the burst in the status',
      async () =>
        (await status())?.mesh?.inTrouble?.some((t) => t.pod === 'web-2' && t.cause === 'ApiUnreachable') ===
        true,
      40_000,
    );
    const writes = (await op.metricSum('ctopo_status_writes_total', { result: 'ok' })) - before;
    expect(writes).toBeGreaterThanOrEqual(1);
    expect(writes).toBeLessThanOrEqual(2);
  });
});
