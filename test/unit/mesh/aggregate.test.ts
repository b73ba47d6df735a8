import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { aggregateMesh } from '../../../operator/mesh/aggregate.js';
import { meshModel, linkBetween, type MemberReportObject } from '../../../operator/mesh/standing.js';
import { memberReport, memberView, type LinkReason } from '../../../operator/protocol/member-report.js';
import { REPORT_STALE_AFTER_MS } from '../../../operator/protocol/report-plan.js';

/**
 * The mesh aggregate against meshes built from known groups: every member is connected to the
 * members of its own group and to nobody else, and reports so (or not: missing, stale, of another
 * list, not observed). The expected groups, sizes, broken links and condition come from the
 * groups the test chose, never from the code under test.
 */

const NOW = Date.parse('2026-12-04T12:00:00Z');
const TOPOLOGY = 'web';

type Behaviour = 'current' | 'missing' | 'stale' | 'otherList' | 'notObserved';

interface Member {
  pod: string;
  uid: string;
  nodeName: string;
}

const members = (n: number): Member[] =>
  Array.from({ length: n }, (_, i) => {
    const pod = `web-${String(i).padStart(2, '0')}`;
    return { pod, uid: `uid-${pod}`, nodeName: `${pod}@10.0.0.${i}` };
  });

interface ReportOptions {
  /** Node names member i is connected to (default: its group). */
  connectedTo?: (i: number) => string[];
  reason?: LinkReason;
  node?: (i: number) => string;
  ageMs?: (i: number) => number;
}

function reportsFor(ms: Member[], group: number[], behaviour: Behaviour[], o: ReportOptions = {}) {
  const peers = ms.map((m) => ({ nodeName: m.nodeName, pod: m.pod }));
  const out: MemberReportObject[] = [];
  ms.forEach((m, i) => {
    const b = behaviour[i]!;
    if (b === 'missing') return;
    const connected = o.connectedTo
      ? o.connectedTo(i)
      : ms.filter((_, j) => j !== i && group[j] === group[i]).map((x) => x.nodeName);
    const reasons = new Map(ms.map((x) => [x.nodeName, o.reason ?? 'Refused'] as const));
    const list = b === 'otherList' ? [...peers, { nodeName: 'gone-0@10.9.9.9', pod: 'gone-0' }] : peers;
    const view = memberView({
      node: o.node?.(i) ?? m.nodeName,
      pod: m.pod,
      peers: list,
      connected,
      reasons,
      observed: b !== 'notObserved',
    });
    const age = b === 'stale' ? REPORT_STALE_AFTER_MS + 1 + (o.ageMs?.(i) ?? 0) : (o.ageMs?.(i) ?? 0);
    out.push(
      memberReport(
        { namespace: 'ns', topology: TOPOLOGY, pod: { name: m.pod, uid: m.uid } },
        view,
        new Date(NOW - age),
      ),
    );
  });
  return out;
}

const aggregate = (ms: Member[], reports: MemberReportObject[], now = NOW) =>
  aggregateMesh({ topology: TOPOLOGY, peers: [...ms].reverse(), reports, now });

/** A mesh: n members in groups (a group index per member) and what each member does. */
const meshArb = (behaviours: fc.Arbitrary<Behaviour>, maxN = 60, maxGroups = 6) =>
  fc.integer({ min: 1, max: maxN }).chain((n) =>
    fc.record({
      n: fc.constant(n),
      group: fc.array(fc.integer({ min: 0, max: maxGroups - 1 }), { minLength: n, maxLength: n }),
      behaviour: fc.array(behaviours, { minLength: n, maxLength: n }),
    }),
  );

/** The groups the test chose, each restricted to `keep`, empty ones dropped, as sorted pod lists. */
function chosenGroups(ms: Member[], group: number[], keep: (i: number) => boolean): string[][] {
  const by = new Map<number, string[]>();
  ms.forEach((m, i) => keep(i) && by.set(group[i]!, [...(by.get(group[i]!) ?? []), m.pod]));
  return [...by.values()].map((g) => g.sort());
}

const sizesDesc = (groups: string[][]) => groups.map((g) => g.length).sort((a, b) => b - a);

describe('the mesh aggregate, against meshes built from known groups', () => {
  it('every member reports: the groups, the largest group, the broken links and the condition', () => {
    fc.assert(
      fc.property(meshArb(fc.constant<Behaviour>('current')), ({ n, group, behaviour }) => {
        const ms = members(n);
        const { mesh, condition } = aggregate(ms, reportsFor(ms, group, behaviour));
        const chosen = chosenGroups(ms, group, () => true);
        const sizes = sizesDesc(chosen);
        expect(mesh.members).toBe(n);
        expect(mesh.reporting).toBe(n);
        expect(mesh.largestGroup).toBe(sizes[0]);
        expect(mesh.summary).toBe(`${sizes[0]}/${n}`);
        expect(mesh.fullyConnected).toBe(chosen.length === 1 ? n : 0);
        const brokenTotal = (mesh.brokenLinks?.length ?? 0) + (mesh.brokenLinksOmitted ?? 0);
        expect(brokenTotal).toBe(n * n - sizes.reduce((s, k) => s + k * k, 0));
        if (chosen.length === 1) {
          expect(mesh.groups).toBeUndefined();
          expect(condition).toMatchObject({ status: 'True', reason: 'Meshed' });
        } else {
          expect(mesh.groups!.map((g) => g.size)).toEqual(sizes);
          for (const g of mesh.groups!) if (g.size <= 20) expect(chosen).toContainEqual(g.members);
          const split = sizes.filter((s) => s >= 2).length >= 2;
          expect(condition).toMatchObject({ status: 'False', reason: split ? 'Split' : 'LinkBroken' });
        }
      }),
    );
  });

  it('members without a current view are in no group; they make the condition Unknown unless a link is known broken', () => {
    const behaviours = fc.constantFrom<Behaviour>(
      'current',
      'current',
      'missing',
      'stale',
      'otherList',
      'notObserved',
    );
    fc.assert(
      fc.property(meshArb(behaviours, 30, 4), ({ n, group, behaviour }) => {
        const ms = members(n);
        const { mesh, condition } = aggregate(ms, reportsFor(ms, group, behaviour));
        const current = (i: number) => behaviour[i] === 'current';
        const reporting = behaviour.filter((b) => b === 'current').length;
        const withCurrent = chosenGroups(ms, group, current);
        const largest = Math.max(0, ...withCurrent.map((g) => g.length));
        expect(mesh.reporting).toBe(reporting);
        expect(mesh.largestGroup).toBe(largest);
        expect(mesh.summary).toBe(reporting === 0 ? `?/${n}` : `${largest}/${n}`);
        const expectStale = ms.filter((_, i) => behaviour[i] === 'stale').map((m) => m.pod);
        expect((mesh.stale ?? []).map((s) => s.pod)).toEqual(expectStale.slice(0, 20));
        const reasonOf = { missing: 'NoReport', otherList: 'OtherList', notObserved: 'NotObserved' } as const;
        const expectUnreported = ms.flatMap((m, i) => {
          const b = behaviour[i]!;
          return b === 'missing' || b === 'otherList' || b === 'notObserved'
            ? [{ pod: m.pod, reason: reasonOf[b] }]
            : [];
        });
        expect(mesh.unreported ?? []).toEqual(expectUnreported.slice(0, 20));
        // a current member with any member of another group names a broken link
        const brokenKnown = ms.some((_, i) => current(i) && group.some((g) => g !== group[i]));
        const split = withCurrent.filter((g) => g.length >= 2).length >= 2;
        if (brokenKnown)
          expect(condition).toMatchObject({ status: 'False', reason: split ? 'Split' : 'LinkBroken' });
        else if (reporting < n)
          expect(condition).toMatchObject({ status: 'Unknown', reason: 'ReportsMissing' });
        else expect(condition).toMatchObject({ status: 'True', reason: 'Meshed' });
        const brokenTotal = (mesh.brokenLinks?.length ?? 0) + (mesh.brokenLinksOmitted ?? 0);
        const expectBroken = ms.reduce(
          (s, _, i) => s + (current(i) ? group.filter((g) => g !== group[i]).length : 0),
          0,
        );
        expect(brokenTotal).toBe(expectBroken);
      }),
    );
  });

  it('only links confirmed by both ends join a group (random one-sided links, against a plain closure)', () => {
    const arb = fc.integer({ min: 1, max: 12 }).chain((n) =>
      fc.record({
        n: fc.constant(n),
        link: fc.array(fc.array(fc.boolean(), { minLength: n, maxLength: n }), {
          minLength: n,
          maxLength: n,
        }),
      }),
    );
    fc.assert(
      fc.property(arb, ({ n, link }) => {
        const ms = members(n);
        const reports = reportsFor(ms, [], Array(n).fill('current'), {
          connectedTo: (i) => ms.filter((_, j) => j !== i && link[i]![j]).map((m) => m.nodeName),
        });
        // reachability over mutual links, by repeated squaring of the adjacency matrix
        const reach = ms.map((_, i) => ms.map((_, j) => i === j || (link[i]![j]! && link[j]![i]!)));
        for (let k = 0; k < n; k++)
          for (let i = 0; i < n; i++)
            for (let j = 0; j < n; j++) if (reach[i]![k] && reach[k]![j]) reach[i]![j] = true;
        const largest = Math.max(...reach.map((row) => row.filter(Boolean).length));
        const { mesh } = aggregate(ms, reports);
        expect(mesh.largestGroup).toBe(largest);
        for (const g of mesh.groups ?? []) {
          const idx = g.members.map((p) => ms.findIndex((m) => m.pod === p));
          for (const a of idx) expect(reach[a]!.filter(Boolean).length).toBe(g.size);
        }
      }),
    );
  });

  it('reports of pods that are not listed (gone, or an earlier pod of the same name) change nothing', () => {
    fc.assert(
      fc.property(
        meshArb(fc.constant<Behaviour>('current'), 10, 3),
        fc.nat(1000),
        ({ n, group, behaviour }, seed) => {
          const ms = members(n);
          const clean = aggregate(ms, reportsFor(ms, group, behaviour));
          const ghosts = members(n + 3).slice(n);
          const earlier = ms.map((m) => ({ ...m, uid: `old-${m.uid}-${seed}` }));
          const claimAll = (i: number) => [...ms, ...ghosts].map((m) => m.nodeName).filter((_, j) => j !== i);
          const noise = [
            ...reportsFor(ghosts, [], Array(3).fill('current'), { connectedTo: claimAll }),
            ...reportsFor(earlier, [], Array(n).fill('current'), { connectedTo: claimAll }),
          ];
          // the earlier pods' reports carry the same names: the current reports must win whatever the order
          const withNoise = aggregate(ms, [...noise, ...reportsFor(ms, group, behaviour)]);
          expect(withNoise).toEqual(clean);
        },
      ),
    );
  });

  it('a member that runs under another name is a self-check failure, named with both names', () => {
    const ms = members(3);
    const reports = reportsFor(ms, [0, 0, 0], ['current', 'current', 'current'], {
      node: (i) => (i === 2 ? 'wrong@10.0.0.2' : ms[i]!.nodeName),
    });
    const { mesh, condition } = aggregate(ms, reports);
    expect(mesh.selfCheckFailures).toEqual([
      { pod: 'web-02', expected: 'web-02@10.0.0.2', actual: 'wrong@10.0.0.2' },
    ]);
    expect(condition).toMatchObject({ status: 'False', reason: 'SelfCheckFailed' });
    expect(condition.message).toContain('web-02 runs as wrong@10.0.0.2 but is listed as web-02@10.0.0.2');
  });

  it('a wrong cookie: 2/3, the links of the member cut off named both ways', () => {
    const ms = members(3);
    const { mesh, condition } = aggregate(ms, reportsFor(ms, [0, 0, 1], ['current', 'current', 'current']));
    expect(mesh.summary).toBe('2/3');
    expect(mesh.brokenLinks).toEqual([
      { from: 'web-00', to: 'web-02', reason: 'Refused' },
      { from: 'web-01', to: 'web-02', reason: 'Refused' },
      { from: 'web-02', to: 'web-00', reason: 'Refused' },
      { from: 'web-02', to: 'web-01', reason: 'Refused' },
    ]);
    expect(condition).toMatchObject({ status: 'False', reason: 'LinkBroken' });
    expect(condition.message).toBe(
      'Groups web-00, web-01 | web-02. Broken links: web-00 → web-02 (Refused), web-01 → web-02 (Refused), web-02 → web-00 (Refused) and 1 more; the largest connected group holds 2 of 3 members.',
    );
  });

  it('a 2 + 2 split is named as one: 2/4, reason Split, both groups in the message', () => {
    const ms = members(4);
    const { mesh, condition } = aggregate(ms, reportsFor(ms, [0, 1, 0, 1], Array(4).fill('current')));
    expect(mesh.summary).toBe('2/4');
    expect(mesh.groups).toEqual([
      { size: 2, members: ['web-00', 'web-02'] },
      { size: 2, members: ['web-01', 'web-03'] },
    ]);
    expect(condition).toMatchObject({ status: 'False', reason: 'Split' });
    expect(condition.message).toContain(
      'split into 2 groups that cannot reach each other: web-00, web-02 | web-01, web-03',
    );
  });

  it('a report goes stale just after the limit; nextChangeAt says when', () => {
    const ms = members(2);
    const reports = reportsFor(ms, [0, 0], ['current', 'current'], {
      ageMs: (i) => (i === 0 ? REPORT_STALE_AFTER_MS : 1000),
    });
    const at = aggregate(ms, reports);
    expect(at.mesh.reporting).toBe(2);
    expect(at.condition.status).toBe('True');
    expect(at.nextChangeAt).toBe(NOW + 1);
    const after = aggregate(ms, reports, NOW + 1);
    expect(after.mesh.stale).toEqual([
      { pod: 'web-00', reportedAt: new Date(NOW - REPORT_STALE_AFTER_MS).toISOString().replace('.000', '') },
    ]);
    expect(after.condition).toMatchObject({ status: 'Unknown', reason: 'ReportsMissing' });
  });

  it('beyond the cap a link left out is unknown, unless both members have the same connectedDigest', () => {
    const ms = members(25);
    // web-00 is connected to nobody but web-24 (so its list names 20 of the 23 others and leaves out 3);
    // web-24 is connected to web-00 only.
    const only = (i: number) =>
      i === 0
        ? [ms[24]!.nodeName]
        : i === 24
          ? [ms[0]!.nodeName]
          : ms.filter((_, j) => j !== i && j !== 0 && j !== 24).map((m) => m.nodeName);
    const reports = reportsFor(ms, [], Array(25).fill('current'), { connectedTo: only });
    const model = meshModel({ topology: TOPOLOGY, peers: ms, reports, now: NOW });
    const s0 = model.standings[0]!;
    expect(s0.kind === 'current' && s0.status.notConnectedOmitted).toBe(3);
    // web-00 → web-24 sorts after its horizon (web-20): its list cannot say; the digests can ({00, 24} both).
    expect(linkBetween(model, 0, 24)).toEqual({ kind: 'connected' });
    expect(linkBetween(model, 0, 22)).toEqual({ kind: 'unknown' });
    expect(linkBetween(model, 0, 5)).toEqual({ kind: 'broken', reason: 'Refused' });
    const { mesh } = aggregate(ms, reports);
    expect(mesh.groups!.map((g) => g.size)).toEqual([23, 2]);
  });
});
