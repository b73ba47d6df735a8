import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import type { ClusterTopologyStatus } from '../../../operator/api/types.generated.js';
import { statusPatchOps, type JsonPatchOp } from '../../../operator/controller/status-patch.js';

/**
 * The status write as a JSON Patch: applied (by the small RFC 6902 interpreter below, written
 * from the RFC, not from the code under test) to the status it was computed from, it gives the
 * new status exactly; one peer's change is a few ops, not the peer list.
 */

/** RFC 6902 add/remove/replace on a copy of `doc` (JSON Pointer paths, RFC 6901). */
function applyPatch(doc: unknown, ops: readonly JsonPatchOp[]): unknown {
  const root = structuredClone(doc) as Record<string, unknown>;
  for (const op of ops) {
    const tokens = op.path
      .split('/')
      .slice(1)
      .map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
    const last = tokens.pop()!;
    let parent: unknown = root;
    for (const t of tokens) parent = (parent as Record<string, unknown>)[t];
    if (Array.isArray(parent)) {
      const i = Number(last);
      if (!(Number.isInteger(i) && i >= 0 && i <= parent.length)) throw new Error(`bad index ${op.path}`);
      if (op.op === 'add') parent.splice(i, 0, op.value);
      else if (i >= parent.length) throw new Error(`no element at ${op.path}`);
      else if (op.op === 'remove') parent.splice(i, 1);
      else parent[i] = op.value;
    } else {
      const o = parent as Record<string, unknown>;
      if (op.op !== 'add' && !(last in o)) throw new Error(`no member at ${op.path}`);
      if (op.op === 'remove') delete o[last];
      else o[last] = op.value;
    }
  }
  return root;
}

const peer = (n: number, ip: number, ready: boolean) => ({
  nodeName: `web-${String(n).padStart(4, '0')}@10.0.${ip >> 8}.${ip & 255}`,
  pod: `web-${String(n).padStart(4, '0')}`,
  uid: `uid-${n}`,
  terminating: false,
  ready,
  serving: ready,
});
const sorted = <T>(xs: T[], key: (x: T) => string) =>
  [...new Map(xs.map((x) => [key(x), x])).values()].sort((a, b) => (key(a) < key(b) ? -1 : 1));

const peersArb = fc
  .array(fc.tuple(fc.integer({ min: 0, max: 40 }), fc.integer({ min: 0, max: 600 }), fc.boolean()), {
    maxLength: 40,
  })
  .map((xs) =>
    sorted(
      xs.map(([n, ip, r]) => peer(n, ip, r)),
      (p) => p.nodeName,
    ),
  );
const excludedArb = fc
  .array(fc.tuple(fc.integer({ min: 0, max: 20 }), fc.constantFrom('NoPodIP', 'PodFinished')), {
    maxLength: 8,
  })
  .map((xs) =>
    sorted(
      xs.map(([n, reason]) => ({ pod: `x-${n}`, reason, message: `${reason} ${n}` })),
      (e) => e.pod,
    ),
  );
const statusArb: fc.Arbitrary<ClusterTopologyStatus> = fc
  .record(
    {
      observedGeneration: fc.integer({ min: 1, max: 3 }),
      peers: peersArb,
      excluded: excludedArb,
      lastResponse: fc.record({
        code: fc.constantFrom('200', '403', 'TransportError'),
        reason: fc.constantFrom('OK', 'Forbidden'),
        since: fc.constantFrom('2026-12-04T00:00:00Z', '2026-12-04T00:01:00Z'),
      }),
      lastPollTime: fc.constantFrom('2026-12-04T00:00:00Z', '2026-12-04T00:02:00Z'),
    },
    { requiredKeys: ['observedGeneration'] },
  )
  .map((s) => ({ ...s, peerCount: s.peers?.length ?? 0 }) as ClusterTopologyStatus);

describe('statusPatchOps', () => {
  it('applied to the status it was computed from, gives the new status (random pairs, and small edits)', () => {
    const edited = statusArb.chain((before) =>
      fc
        .record({
          drop: fc.nat(),
          add: fc.integer({ min: 0, max: 40 }),
          ip: fc.integer({ min: 601, max: 900 }),
        })
        .map(({ drop, add, ip }) => {
          const peers = [...(before.peers ?? [])];
          if (peers.length) peers.splice(drop % peers.length, 1);
          peers.push(peer(add, ip, true));
          return [before, { ...before, peers: sorted(peers, (p) => p.nodeName) }] as const;
        }),
    );
    fc.assert(
      fc.property(fc.oneof(fc.tuple(statusArb, statusArb), edited), ([before, after]) => {
        const ops = statusPatchOps(before, after)!;
        expect(applyPatch({ status: before }, ops)).toEqual({ status: after });
      }),
      { numRuns: 500 },
    );
  });

  it('one peer changing its IP in a list of 5,000 is a handful of ops naming that peer alone', () => {
    const before = {
      peerCount: 5000,
      peers: sorted(
        Array.from({ length: 5000 }, (_, n) => peer(n, n % 500, true)),
        (p) => p.nodeName,
      ),
    };
    const i = 2345;
    const moved = { ...before.peers[i]!, nodeName: before.peers[i]!.nodeName.replace(/@.*/, '@10.9.9.9') };
    const after = {
      ...before,
      peers: sorted([...before.peers.filter((_, k) => k !== i), moved], (p) => p.nodeName),
    };
    const ops = statusPatchOps(before, after)!;
    expect(ops).toHaveLength(2);
    expect(JSON.stringify(ops).length).toBeLessThan(400);
    expect(applyPatch({ status: before }, ops)).toEqual({ status: after });
  });

  it('a list not sorted the same way is replaced whole, and still right', () => {
    const a = peer(1, 1, true);
    const b = peer(2, 2, true);
    const c = peer(3, 3, true);
    const before = { peers: [b, a, c] }; // written by someone else, out of order
    const after = { peers: [a, b, { ...c, ready: false }] };
    const ops = statusPatchOps(before, after)!;
    expect(ops).toEqual([{ op: 'replace', path: '/status/peers', value: after.peers }]);
  });

  it('without a status to patch there are no ops (a merge patch is sent instead)', () => {
    expect(statusPatchOps(undefined, { peers: [] })).toBeUndefined();
  });
});
