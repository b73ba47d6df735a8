import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { join } from 'node:path';
import { buildTelemetryStandIn, type ProbeLine } from '../../support/beam-client.js';
import { BeamMembers, NS, TOPOLOGY } from '../../support/beam-members.js';
import { kubectlOk } from '../../support/cluster.js';
import { condition, eventsFor } from '../../support/objects.js';
import { sleep, waitFor } from '../../support/wait.js';

/**
 * The OTP library writes its member's report (docs/status-protocol.md §8) and the operator shows
 * what formed, on real things: a real API server, the real operator, real BEAM nodes running the
 * library in "pods" with service-account tokens. Nobody but the library writes a report here.
 * The slow case (a member frozen until its report goes stale) is test/e2e/beam-report/.
 */

const MESH_WAIT = 90_000;
const REPORT_WARNING = /cannot write this member's report/g;

describe('the OTP library reports its member; the operator shows the mesh (real API server, real nodes)', () => {
  let m: BeamMembers;
  const brokenLinks = async () =>
    ((await m.status())?.mesh?.brokenLinks ?? []).map((l) => `${l.from}→${l.to} ${l.reason}`).sort();

  beforeAll(async () => {
    m = await BeamMembers.start();
    for (const p of ['a', 'b', 'c']) await m.addPod(p);
  });
  afterAll(async () => {
    await m?.stop();
  });

  it('three nodes meshed: each writes its report, Meshed True, MESH 3/3', async () => {
    for (const p of ['a', 'b', 'c']) await m.startMember(p);
    const st = await waitFor(
      'MESH 3/3 and Meshed True',
      async () => {
        const x = await m.status();
        return x?.mesh?.summary === '3/3' && condition(x, 'Meshed')?.status === 'True' ? x : undefined;
      },
      MESH_WAIT,
    );
    expect(st.mesh).toMatchObject({ members: 3, reporting: 3, fullyConnected: 3, largestGroup: 3 });
    const pods = new Map((st.peers ?? []).map((p) => [p.pod, p]));
    const reports = await m.reports();
    expect([...reports.keys()].sort()).toEqual(['a', 'b', 'c']);
    for (const [pod, r] of reports) {
      // Its own pod's report, owned by that pod, written by the library's field manager.
      expect(r.metadata.name).toBe(`${pod}.${TOPOLOGY}`);
      expect(r.metadata.labels).toEqual({ 'cluster.netzlive.io/topology': TOPOLOGY });
      expect(r.metadata.ownerReferences).toEqual([
        { apiVersion: 'v1', kind: 'Pod', name: pod, uid: pods.get(pod)!.uid },
      ]);
      expect(r.metadata.managedFields?.map((f) => f.manager)).toEqual(['cluster_topology']);
      expect(r.spec).toEqual({ topology: TOPOLOGY, pod: { name: pod, uid: pods.get(pod)!.uid } });
      expect(r.status).toMatchObject({
        node: m.full(pod),
        observed: true,
        listed: 2,
        connected: 2,
        invalid: 0,
        connectedOfListed: '2/2',
        notConnected: [],
        notConnectedOmitted: 0,
        selfCheck: { result: 'Match', expected: m.full(pod), actual: m.full(pod) },
      });
      expect(r.status.trouble).toBeUndefined();
    }
    const table = await kubectlOk(m.s, ['-n', NS, 'get', 'ctm']);
    expect(table).toMatch(/\na\.web\s+a@127\.0\.0\.1\s+2\/2\s+Match\s/);
  });

  it('one node with a different cookie: Meshed False naming its links both ways, MESH 2/3', async () => {
    await m.stopMember('c');
    await m.startMember('c', { cookie: 'not-the-clusters-cookie' });
    const want = ['a→c Refused', 'b→c Refused', 'c→a Refused', 'c→b Refused'];
    await waitFor(
      `broken links ${want.join(', ')} (now: ${(await brokenLinks()).join(', ')})`,
      async () => (await brokenLinks()).join(',') === want.join(','),
      MESH_WAIT,
    );
    const st = (await m.status())!;
    expect(st.mesh).toMatchObject({ members: 3, reporting: 3, largestGroup: 2, summary: '2/3' });
    expect(condition(st, 'Meshed')).toMatchObject({ status: 'False', reason: 'LinkBroken' });
    expect(condition(st, 'Meshed')!.message).toMatch(/a → c \(Refused\).*c → a \(Refused\)/);
    const c = (await m.reports()).get('c')!;
    expect(c.status).toMatchObject({
      connectedOfListed: '0/2',
      notConnected: [
        { node: m.full('a'), reason: 'Refused' },
        { node: m.full('b'), reason: 'Refused' },
      ],
    });
  });

  it('the node with the cluster’s cookie again: MESH 3/3', async () => {
    await m.stopMember('c');
    await m.startMember('c');
    await waitFor('MESH 3/3', async () => (await m.status())?.mesh?.summary === '3/3', MESH_WAIT);
  });

  it('a node under the wrong name: a self-check failure in the status and an Event', async () => {
    await m.stopMember('c');
    await m.startMember('c', { node: 'x' });
    const st = await waitFor(
      'the self-check failure in the status',
      async () => {
        const x = await m.status();
        return x?.mesh?.selfCheckFailures?.length ? x : undefined;
      },
      MESH_WAIT,
    );
    expect(st.mesh!.selfCheckFailures).toEqual([{ pod: 'c', expected: m.full('c'), actual: m.full('x') }]);
    expect(condition(st, 'Meshed')).toMatchObject({ status: 'False', reason: 'SelfCheckFailed' });
    const e = await waitFor('the SelfCheckFailed event', async () =>
      (await eventsFor(m.s, NS, TOPOLOGY)).find((x) => x.reason === 'SelfCheckFailed'),
    );
    expect(e).toMatchObject({ type: 'Warning', message: expect.stringContaining(m.full('x')) });
    expect((await m.reports()).get('c')!.status.selfCheck).toEqual({
      result: 'Mismatch',
      expected: m.full('c'),
      actual: m.full('x'),
    });
    await m.stopMember('c');
    await m.startMember('c');
    await waitFor('MESH 3/3', async () => (await m.status())?.mesh?.summary === '3/3', MESH_WAIT);
  });

  it('a reader whose Role lacks clustertopologymembers keeps its connections and says so once', async () => {
    const standIn = await buildTelemetryStandIn(m.ebin, join(m.erl.root, 'telemetry-ebin'));
    await m.addPod('d');
    const d = await m.startMember('d', { noReports: true, erlArgs: ['-pa', standIn] });
    const writes = () =>
      d.lines.filter(
        (l: ProbeLine) => l.t === 'telemetry' && (l.name as string[]).join('.') === 'cluster_topology.report',
      );
    const first = await waitFor('d’s first report write', () => writes()[0], 30_000);
    expect(first.metadata).toMatchObject({ result: 'forbidden', status_code: 403 });
    await d.waitForNodes(
      ['a', 'b', 'c'].map((p) => m.full(p)),
      30_000,
    );
    // Its view changes after the refused write (c goes away and comes back): a writer that
    // took a refusal for a success would write again 10 s later, one that forgot it at once.
    await m.stopMember('c');
    await waitFor('d to see c gone', () => !d.lastNodes().includes(m.full('c')), 30_000);
    await m.startMember('c');
    await d.waitForNodes(
      ['a', 'b', 'c'].map((p) => m.full(p)),
      30_000,
    );
    await sleep(Math.max(0, first.at + 12_000 - Date.now()));
    expect(writes()).toHaveLength(1);
    expect(d.output.match(REPORT_WARNING)).toHaveLength(1);
    expect(d.output).toMatch(/403: not allowed - grant create, update and patch on clustertopologymembers/);
    // Nothing else suffered: connected to all, no trouble, no restart of the client's tree.
    const st = await d.state();
    expect(st.trouble).toBeNull();
    expect(st.nodedowns).toBe(1);
    expect(d.alive).toBe(true);
    expect(d.output).not.toMatch(/crash|CRASH|terminated/);
    expect((await m.reports()).has('d')).toBe(false);
  });
});
