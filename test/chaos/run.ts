/**
 * `npm run chaos -- --minutes N [--seed S] [--out FILE]`: one chaos run (harness.ts), its log on
 * stderr, the report on stdout (and as JSON in FILE). Exit 1 when an invariant was violated or
 * an action failed (or its effect never showed).
 * The same seed and length give the same script.
 */
import { writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { runChaos } from './harness.js';
import { formatChaosReport } from './invariants.js';

const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: '5' },
    seed: { type: 'string', default: '1818' },
    out: { type: 'string' },
  },
});
const minutes = Number(values.minutes);
const seed = Number(values.seed);
if (!(minutes > 0) || !Number.isInteger(seed)) {
  console.error('usage: npm run chaos -- --minutes N [--seed S] [--out FILE]');
  process.exit(64);
}
const started = Date.now();
const report = await runChaos({ seed, minutes, log: (l) => console.error(l) });
for (const n of report.notes) console.error(`note: ${n}`);
console.log(formatChaosReport(report));
console.log(`(${((Date.now() - started) / 60_000).toFixed(1)} min in all)`);
if (values.out) await writeFile(values.out, JSON.stringify(report, null, 2) + '\n');
process.exit(
  report.emptiedPeers + report.lostConnections + report.statusFlaps + report.failed.length > 0 ? 1 : 0,
);
