import { describe, expect, it } from '@jest/globals';
import { runChaos } from '../../chaos/harness.js';
import { formatChaosReport } from '../../chaos/invariants.js';
import { CHAOS_KINDS } from '../../chaos/schedule.js';

// A short, seeded chaos run (the same script every time): every kind of fault and change once,
// on a private API server, two operator replicas and real BEAM nodes with their agents. An
// action counts only once its effect was observed (harness.ts).
describe('a short seeded chaos run', () => {
  it('keeps the invariants: no emptied peers, no lost connections, no status flaps', async () => {
    const report = await runChaos({ seed: 1818, minutes: 1.5, gapMs: [5_000, 7_000] });
    process.stdout.write(`${formatChaosReport(report)}\n`);
    // Every kind of fault and change took effect, as observed; none failed.
    expect(report.failed).toEqual([]);
    expect(Object.keys(report.tookEffect).sort()).toEqual([...CHAOS_KINDS].sort());
    expect(report.statusSamples).toBeGreaterThan(20);
    expect(report.meshSamples).toBeGreaterThan(20);
    // The departed member's node stopped while the others held it: their monitors heard it.
    expect(report.nodedowns).toBeGreaterThan(0);
    expect(report.violations).toEqual([]);
    expect(report.changes).toBeGreaterThan(0);
    expect(report.emptiedPeers).toBe(0);
    expect(report.lostConnections).toBe(0);
    expect(report.statusFlaps).toBe(0);
    expect(report.changesNotSeen).toBe(0);
  }, 600_000);
});
