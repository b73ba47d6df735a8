import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import {
  completeRound,
  DEPARTED_WATCH_MS,
  nextDeparted,
  planRound,
  type RoundResults,
} from '../../../operator/agent/round.js';

const SELF = 'web-0@10.0.0.1';
const N1 = 'web-1@10.0.0.2';
const N2 = 'web-2@10.0.0.3';
const N3 = 'web-3@web-3.svc.cluster.local';
const BAD = 'bad name@10.0.0.9';

function subsets<T>(xs: readonly T[]): T[][] {
  return xs.reduce<T[][]>((acc, x) => acc.concat(acc.map((s) => [...s, x])), [[]]);
}

function allOk(plan: ReturnType<typeof planRound>): RoundResults {
  return {
    disconnect: plan.disconnect.map((node) => ({ node, ok: true })),
    connect: plan.connect.map((node) => ({ node, ok: true })),
  };
}

describe('planRound / completeRound: the seed examples', () => {
  it('first round: connects every peer but self, disconnects nothing', () => {
    const plan = planRound([], [SELF, N1, N2], SELF);
    expect(plan).toMatchObject({ disconnect: [], connect: [N1, N2], invalid: [], selfListed: true });
    expect(completeRound(plan, allOk(plan)).remembered).toEqual([N1, N2]);
  });

  it('a peer that left the list is disconnected; the others are connected again', () => {
    const plan = planRound([N1, N2], [SELF, N2, N3], SELF);
    expect(plan.disconnect).toEqual([N1]);
    expect(plan.connect).toEqual([N2, N3]);
    expect(completeRound(plan, allOk(plan)).remembered).toEqual([N2, N3]);
  });

  it('a failed connect is forgotten and retried next round', () => {
    const plan = planRound([], [N1, N2], SELF);
    const out = completeRound(plan, {
      disconnect: [],
      connect: [
        { node: N1, ok: true },
        { node: N2, ok: false },
      ],
    });
    expect(out).toMatchObject({ remembered: [N1], connected: [N1], failedConnects: [N2] });
    expect(planRound(out.remembered, [N1, N2], SELF).connect).toEqual([N1, N2]);
  });

  it('a remembered node that fails to connect again is forgotten, so it is never disconnected later', () => {
    const plan = planRound([N1], [N1], SELF);
    const out = completeRound(plan, { disconnect: [], connect: [{ node: N1, ok: false }] });
    expect(out.remembered).toEqual([]);
    expect(planRound(out.remembered, [], SELF).disconnect).toEqual([]);
  });

  it('a failed disconnect stays remembered and is retried next round', () => {
    const plan = planRound([N1, N2], [N2], SELF);
    const out = completeRound(plan, {
      disconnect: [{ node: N1, ok: false }],
      connect: [{ node: N2, ok: true }],
    });
    expect(out).toMatchObject({ remembered: [N2, N1], failedDisconnects: [N1], disconnected: [] });
    expect(planRound(out.remembered, [N2], SELF).disconnect).toEqual([N1]);
  });

  it('an empty list from a real status disconnects every remembered node', () => {
    const plan = planRound([N1, N2], [], SELF);
    expect(plan).toMatchObject({ disconnect: [N1, N2], connect: [] });
    expect(completeRound(plan, allOk(plan)).remembered).toEqual([]);
  });

  it('never hands an invalid name to a connector, and says why', () => {
    const plan = planRound([], [N1, BAD, BAD, 'x@$(reboot)'], SELF);
    expect(plan.connect).toEqual([N1]);
    expect(plan.invalid.map((i) => i.node)).toEqual([BAD, 'x@$(reboot)']);
    expect(plan.invalid[0]!.problem).toMatch(/name part/);
  });

  it('deduplicates both lists', () => {
    const plan = planRound([N1, N1], [N2, N2, SELF, SELF], SELF);
    expect(plan).toMatchObject({ remembered: [N1], disconnect: [N1], connect: [N2] });
  });

  it('never disconnects self, even if a caller remembered it', () => {
    expect(planRound([SELF, N1], [], SELF).disconnect).toEqual([N1]);
  });

  it('counts a missing result, or a node with a failing duplicate result, as failed', () => {
    const plan = planRound([N3], [N1, N2], SELF);
    const out = completeRound(plan, {
      disconnect: [],
      connect: [
        { node: N1, ok: true },
        { node: N1, ok: false },
      ],
    });
    expect(out).toMatchObject({ remembered: [N3], failedConnects: [N1, N2], failedDisconnects: [N3] });
  });
});

describe('planRound / completeRound: exhaustive over a small universe', () => {
  const valid = [SELF, N1, N2, N3];
  it('holds every invariant for every remembered set, desired set and result pattern', () => {
    let cases = 0;
    for (const remembered of subsets(valid)) {
      for (const desired of subsets([...valid, BAD])) {
        const plan = planRound(remembered, desired, SELF);
        const desiredValidOthers = desired.filter((n) => n !== SELF && n !== BAD);
        // Disconnects only remembered nodes that are no longer wanted; never self.
        expect(plan.disconnect).toEqual(remembered.filter((n) => !desired.includes(n) && n !== SELF));
        // Connects every wanted valid node except self.
        expect(plan.connect).toEqual(desiredValidOthers);
        expect(plan.connect).not.toContain(SELF);
        expect(plan.connect).not.toContain(BAD);
        expect(plan.selfListed).toBe(desired.includes(SELF));
        expect(plan.invalid.map((i) => i.node)).toEqual(desired.includes(BAD) ? [BAD] : []);
        for (const n of plan.disconnect) expect(plan.connect).not.toContain(n);

        const ops = [
          ...plan.disconnect.map((n) => ['d', n] as const),
          ...plan.connect.map((n) => ['c', n] as const),
        ];
        for (let mask = 0; mask < 1 << ops.length; mask++) {
          const okOf = (i: number): boolean => (mask & (1 << i)) !== 0;
          const results: RoundResults = {
            disconnect: plan.disconnect.map((node, i) => ({ node, ok: okOf(i) })),
            connect: plan.connect.map((node, i) => ({ node, ok: okOf(plan.disconnect.length + i) })),
          };
          const out = completeRound(plan, results);
          const okConnects = plan.connect.filter((_, i) => okOf(plan.disconnect.length + i));
          const failedDisconnects = plan.disconnect.filter((_, i) => !okOf(i));
          expect(out.remembered).toEqual([...okConnects, ...failedDisconnects]);
          expect(out.remembered).not.toContain(SELF);
          if (mask === (1 << ops.length) - 1) expect(out.remembered).toEqual(desiredValidOthers);
          cases++;
        }
      }
    }
    expect(cases).toBeGreaterThan(1000);
  });
});

describe('round properties (fast-check)', () => {
  // Which names are valid is stated here, by hand, not asked of the code under test.
  const validNames = new Set([SELF, N1, N2, N3, 'db-0@10.0.1.1', 'db-1@10.0.1.2']);
  const invalidNames = ['x y@1.2.3.4', 'a@b@c', ''];
  const pool = [...validNames, ...invalidNames];
  const isValid = (n: string) => validNames.has(n);
  const nodeArb = fc.constantFrom(...pool);
  const listArb = fc.array(nodeArb, { maxLength: 10 });

  it('over many rounds: disconnects only nodes it connected itself, never connects self, retries failures', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({ desired: listArb, seed: fc.array(fc.boolean(), { minLength: 20, maxLength: 20 }) }),
          {
            minLength: 1,
            maxLength: 8,
          },
        ),
        (rounds) => {
          let remembered: readonly string[] = [];
          // What the agent itself connected and is still connected (as a real connector would see it).
          const connectedByAgent = new Set<string>();
          let lastFailedConnects: string[] = [];
          let lastFailedDisconnects: string[] = [];
          for (const { desired, seed } of rounds) {
            const plan = planRound(remembered, desired, SELF);
            for (const n of plan.disconnect) expect(connectedByAgent.has(n)).toBe(true);
            expect(plan.connect).not.toContain(SELF);
            expect(plan.disconnect).not.toContain(SELF);
            for (const n of lastFailedConnects) if (desired.includes(n)) expect(plan.connect).toContain(n);
            for (const n of lastFailedDisconnects)
              if (!desired.includes(n)) expect(plan.disconnect).toContain(n);

            let k = 0;
            const results: RoundResults = {
              disconnect: plan.disconnect.map((node) => ({ node, ok: seed[k++ % seed.length]! })),
              connect: plan.connect.map((node) => ({ node, ok: seed[k++ % seed.length]! })),
            };
            for (const r of results.disconnect) if (r.ok) connectedByAgent.delete(r.node);
            // A failed connect means the node is not connected (connect_node returned false).
            for (const r of results.connect) {
              if (r.ok) connectedByAgent.add(r.node);
              else connectedByAgent.delete(r.node);
            }
            const out = completeRound(plan, results);
            // Remembered is exactly what the agent connected and still holds.
            expect(new Set(out.remembered)).toEqual(connectedByAgent);
            for (const n of out.failedConnects) expect(out.remembered).not.toContain(n);
            lastFailedConnects = out.failedConnects.slice();
            lastFailedDisconnects = out.failedDisconnects.slice();
            remembered = out.remembered;
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  it('after a round where everything succeeds, remembered is desired − self (valid, deduplicated)', () => {
    fc.assert(
      fc.property(listArb, listArb, (remembered, desired) => {
        const validRemembered = remembered.filter(isValid);
        const plan = planRound(validRemembered, desired, SELF);
        const out = completeRound(plan, allOk(plan));
        const expected = [...new Set(desired)].filter((n) => n !== SELF && isValid(n));
        expect(out.remembered).toEqual(expected);
      }),
    );
  });

  it('when every connect succeeds, remembered holds desired − self plus only the failed disconnects', () => {
    fc.assert(
      fc.property(listArb, listArb, fc.array(fc.boolean()), (remembered, desired, oks) => {
        const plan = planRound(remembered, desired, SELF);
        const out = completeRound(plan, {
          disconnect: plan.disconnect.map((node, i) => ({ node, ok: oks[i] ?? false })),
          connect: plan.connect.map((node) => ({ node, ok: true })),
        });
        for (const n of plan.connect) expect(out.remembered).toContain(n);
        for (const n of plan.connect) expect(isValid(n)).toBe(true);
        for (const n of desired) if (isValid(n) && n !== SELF) expect(plan.connect).toContain(n);
        for (const n of out.remembered)
          expect(plan.connect.includes(n) || out.failedDisconnects.includes(n)).toBe(true);
      }),
    );
  });

  it('is pure: the same inputs give the same plan, and the inputs are not changed', () => {
    fc.assert(
      fc.property(listArb, listArb, nodeArb, (remembered, desired, self) => {
        const r = remembered.slice();
        const d = desired.slice();
        const p1 = planRound(remembered, desired, self);
        const p2 = planRound(remembered, desired, self);
        expect(p1).toEqual(p2);
        expect(remembered).toEqual(r);
        expect(desired).toEqual(d);
      }),
    );
  });
});

describe('departed nodes: disconnected again when they come back unlisted', () => {
  it('disconnects again exactly the watched nodes connected now that are neither listed, remembered nor self', () => {
    const universe = [SELF, N1, N2, N3];
    const sub = fc.subarray(universe);
    fc.assert(
      fc.property(sub, sub, sub, sub, (remembered, desired, departed, connected) => {
        const plan = planRound(remembered, desired, SELF, { departed, connected });
        const expected = universe.filter(
          (n) =>
            departed.includes(n) &&
            connected.includes(n) &&
            !desired.includes(n) &&
            !remembered.includes(n) &&
            n !== SELF,
        );
        expect([...plan.again].sort()).toEqual(expected.sort());
        const leaving = remembered.filter((n) => !desired.includes(n) && n !== SELF);
        expect(plan.disconnect).toEqual([...leaving, ...plan.again]);
        expect(planRound(remembered, desired, SELF).again).toEqual([]);
      }),
    );
  });

  it('watches what a round disconnected for DEPARTED_WATCH_MS from then, and forgets what is listed again', () => {
    const before = new Map([
      [N1, 5_000], // watched until 5 s
      [N2, 50_000],
      [N3, 50_000],
    ]);
    const after = nextDeparted(before, [N3], [N1], 10_000);
    expect([...after.entries()].sort()).toEqual([
      [N1, 10_000 + DEPARTED_WATCH_MS], // disconnected again: a new watch
      [N2, 50_000], // still watched
      // N3 is listed again: no longer departed
    ]);
    expect(nextDeparted(after, [], [], 39_999)).toEqual(after);
    expect(nextDeparted(after, [], [], 40_000)).toEqual(new Map([[N2, 50_000]]));
    expect(nextDeparted(after, [], [], 50_000)).toEqual(new Map());
  });
});
