import { describe, expect, it } from '@jest/globals';
import { chaosSchedule, CHAOS_KINDS } from '../../chaos/schedule.js';
import { InvariantChecker, MEND_LIMIT_MS } from '../../chaos/invariants.js';

describe('the chaos script', () => {
  it('is the same for the same seed, and differs for another', () => {
    const a = chaosSchedule({ seed: 7, durationMs: 600_000 });
    expect(chaosSchedule({ seed: 7, durationMs: 600_000 })).toEqual(a);
    expect(chaosSchedule({ seed: 8, durationMs: 600_000 })).not.toEqual(a);
  });

  it('goes through every kind in its first round, in time order, within the run', () => {
    const s = chaosSchedule({ seed: 1818, durationMs: 90_000, gapMs: [5_000, 7_000] });
    expect(new Set(s.map((x) => x.action.kind))).toEqual(new Set(CHAOS_KINDS));
    for (let k = 1; k < s.length; k++) expect(s[k]!.at).toBeGreaterThan(s[k - 1]!.at);
    expect(s[s.length - 1]!.at).toBeLessThan(90_000);
  });
});

describe('the invariant checker', () => {
  const listed = async () => true;

  it('counts an empty peer list, and ignores a status without lastResponse', () => {
    const c = new InvariantChecker();
    c.observeStatus(1, [], false);
    c.observeStatus(2, ['a@h'], true);
    expect(c.emptiedPeers).toBe(0);
    c.observeStatus(3, [], true);
    expect(c.emptiedPeers).toBe(1);
  });

  it('counts a flap A → B → A without a scripted change, not with one', () => {
    const c = new InvariantChecker();
    c.observeStatus(1, ['a', 'b'], true);
    c.observeStatus(2, ['a'], true);
    c.observeStatus(3, ['a', 'b'], true);
    expect(c.statusFlaps).toBe(1);
    const d = new InvariantChecker();
    d.observeStatus(1, ['a', 'b'], true);
    d.expectChange('b leaves', 2, (p) => !p.includes('b'));
    d.observeStatus(3, ['a'], true);
    d.expectChange('b joins', 4, (p) => p.includes('b'));
    d.observeStatus(5, ['a', 'b'], true);
    expect(d.statusFlaps).toBe(0);
    expect(d.latencies).toEqual([1, 1]);
  });

  it('counts a lost connection to a member that stayed listed, not to one leaving or unlisted', async () => {
    const c = new InvariantChecker();
    const members = new Set(['m0', 'm1', 'm2']);
    c.observeStatus(0, ['m0', 'm1', 'm2'], true);
    await c.observeMesh(1, 'm0', ['m1', 'm2'], members, listed);
    await c.observeMesh(2, 'm0', ['m2'], members, listed);
    expect(c.lostConnections).toBe(1);
    c.markLeaving('m2', 30_000);
    await c.observeMesh(30_001, 'm0', [], members, listed);
    expect(c.lostConnections).toBe(1);
    // A loss while a departed member is being disconnected (listed no more, its node not yet
    // stopped) is counted apart (OTP global), not as the agent's; before or after that, it is not.
    const e = new InvariantChecker();
    e.observeStatus(0, ['m0', 'm1', 'm2', 'm9'], true);
    await e.observeMesh(1, 'm0', ['m1', 'm2'], members, listed);
    e.markLeaving('m9', 2);
    await e.observeMesh(3, 'm0', ['m2'], members, listed); // m9 still listed: not global's doing
    expect([e.lostConnections, e.lostAfterLeave]).toEqual([1, 0]);
    await e.observeMesh(4, 'm0', ['m1', 'm2'], members, listed);
    e.observeStatus(10_000, ['m0', 'm1', 'm2'], true);
    await e.observeMesh(11_000, 'm0', ['m2'], members, listed);
    expect([e.lostConnections, e.lostAfterLeave]).toEqual([1, 1]);
    await e.observeMesh(12_000, 'm0', ['m1', 'm2'], members, listed); // mended
    e.markGone('m9', 13_000);
    await e.observeMesh(15_000, 'm0', ['m1'], members, listed); // within the grace: in flight
    expect([e.lostConnections, e.lostAfterLeave]).toEqual([1, 2]);
    await e.observeMesh(16_000, 'm0', ['m1', 'm2'], members, listed);
    await e.observeMesh(17_000, 'm0', ['m1', 'm2'], members, listed);
    await e.observeMesh(20_000, 'm0', ['m2'], members, listed); // m9 long gone
    expect([e.lostConnections, e.lostAfterLeave]).toEqual([2, 2]);
    // The agents hear the unlisting on their watch before the checker's read does: a loss seen
    // before any read shows it is excused once a read after the loss does (the harness re-reads
    // through `stillListed`) — unless a read begun after the loss still listed the member.
    const g = new InvariantChecker();
    g.observeStatus(0, ['m0', 'm1', 'm2', 'm9'], true);
    await g.observeMesh(1, 'm0', ['m1', 'm2'], members, listed);
    g.markLeaving('m9', 2);
    const reread = (c: InvariantChecker, at: number, readFrom: number) => async (n: string) => {
      c.observeStatus(at, ['m0', 'm1', 'm2'], true, readFrom);
      return n !== 'm9';
    };
    await g.observeMesh(3, 'm0', ['m2'], members, reread(g, 4, 3));
    expect([g.lostConnections, g.lostAfterLeave]).toEqual([0, 1]);
    const h = new InvariantChecker();
    h.observeStatus(0, ['m0', 'm1', 'm2', 'm9'], true);
    await h.observeMesh(1, 'm0', ['m1', 'm2'], members, listed);
    h.markLeaving('m9', 2);
    h.observeStatus(6, ['m0', 'm1', 'm2', 'm9'], true, 5); // still listed in a read begun at 5
    await h.observeMesh(4, 'm0', ['m2'], members, reread(h, 8, 7));
    expect([h.lostConnections, h.lostAfterLeave]).toEqual([1, 0]);
    // An excused drop the agent never mends becomes a lost connection.
    const f = new InvariantChecker();
    f.observeStatus(0, ['m0', 'm1', 'm9'], true);
    await f.observeMesh(1, 'm0', ['m1'], members, listed);
    f.markLeaving('m9', 2);
    f.observeStatus(40_000, ['m0', 'm1'], true);
    await f.observeMesh(45_000, 'm0', [], members, listed);
    expect([f.lostConnections, f.lostAfterLeave]).toEqual([0, 1]);
    await f.observeMesh(45_000 + MEND_LIMIT_MS - 1, 'm0', [], members, listed);
    expect(f.lostConnections).toBe(0);
    await f.observeMesh(45_000 + MEND_LIMIT_MS + 1, 'm0', [], members, listed);
    expect(f.lostConnections).toBe(1);
    const d = new InvariantChecker();
    d.observeStatus(0, ['m0', 'm1'], true);
    await d.observeMesh(1, 'm0', ['m1'], members, listed);
    await d.observeMesh(2, 'm0', [], members, async () => false);
    expect(d.lostConnections).toBe(0);
  });

  it("counts a nodedown the node's monitor heard, though the next sample shows the peer again", async () => {
    const members = new Set(['m0', 'm1', 'm2']);
    const c = new InvariantChecker();
    c.observeStatus(0, ['m0', 'm1', 'm2'], true);
    await c.observeMesh(1, 'm0', ['m1', 'm2'], members, listed);
    // m1 dropped at 1,200 ms and was connected again before the sample at 2,000 ms.
    await c.observeDown(1_200, 'm0', 'm1', 'connection_closed', members, listed);
    await c.observeMesh(2_000, 'm0', ['m1', 'm2'], members, listed);
    expect([c.lostConnections, c.nodedowns]).toEqual([1, 1]);
    expect(c.violations).toEqual([
      '1200 ms: m0 lost its connection to m1 (nodedown (connection_closed)), which stayed listed',
    ]);
    // Sampling alone would have seen nothing.
    const sampled = new InvariantChecker();
    sampled.observeStatus(0, ['m0', 'm1', 'm2'], true);
    await sampled.observeMesh(1, 'm0', ['m1', 'm2'], members, listed);
    await sampled.observeMesh(2_000, 'm0', ['m1', 'm2'], members, listed);
    expect(sampled.lostConnections).toBe(0);
  });

  it('judges a loss both the monitor and a sample report once; one only a sample shows is counted apart', async () => {
    const members = new Set(['m0', 'm1', 'm2']);
    const c = new InvariantChecker();
    c.observeStatus(0, ['m0', 'm1', 'm2'], true);
    await c.observeMesh(1, 'm0', ['m1', 'm2'], members, listed);
    await c.observeDown(1_500, 'm0', 'm1', 'net_tick_timeout', members, listed);
    await c.observeMesh(2_000, 'm0', ['m2'], members, listed);
    expect([c.lostConnections, c.lossesSampledOnly]).toEqual([1, 0]);
    await c.observeMesh(3_000, 'm0', ['m1'], members, listed);
    expect([c.lostConnections, c.lossesSampledOnly]).toEqual([2, 1]);
  });

  it('a nodedown of a node that is gone, leaving or unlisted is no violation; during a departure it is excused', async () => {
    const c = new InvariantChecker();
    c.observeStatus(0, ['m0', 'm1', 'm2', 'm9'], true);
    await c.observeDown(5, 'm0', 'm3', 'shutdown', new Set(['m0', 'm1', 'm2']), listed); // not alive
    c.markLeaving('m2', 6);
    await c.observeDown(7, 'm0', 'm2', 'disconnect', new Set(['m0', 'm1', 'm2']), listed);
    await c.observeDown(8, 'm0', 'm1', 'disconnect', new Set(['m0', 'm1']), async () => false);
    expect(c.lostConnections).toBe(0);
    c.markLeaving('m9', 9);
    c.observeStatus(10, ['m0', 'm1'], true);
    await c.observeDown(11, 'm0', 'm1', 'disconnect', new Set(['m0', 'm1', 'm9']), listed);
    expect([c.lostConnections, c.lostAfterLeave]).toEqual([0, 1]);
  });

  it('reports changes never seen, and the longest latency', () => {
    const c = new InvariantChecker();
    c.expectChange('x', 0, (p) => p.includes('x'));
    c.expectChange('y', 10, (p) => p.includes('y'));
    c.observeStatus(500, ['x'], true);
    const r = c.report({
      seed: 1,
      minutes: 1,
      actions: { attempted: {}, tookEffect: {}, effects: [], skipped: [], failed: [] },
    });
    expect(r).toMatchObject({ changes: 2, changesNotSeen: 1, longestChangeMs: 500 });
  });
});
