import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../packaging/paths.js';

/**
 * The figures the docs quote are the figures BENCHMARKS.md holds: each quoted number is named
 * here with the row it comes from and checked against it at the precision the doc writes it
 * ("about 65 MB" is the median 64.89 rounded to a whole MB). A new memory or size figure in the
 * docs must be listed here (or below, with why it is no benchmark figure), so a doc cannot quote a
 * number nobody measured, and a new BENCHMARKS.md shows which sentences to update.
 */

const read = (f: string) => readFileSync(join(repoRoot, f), 'utf8');
const bench = read('BENCHMARKS.md');

type Stat = 'min' | 'median' | 'max';
/** A row of a figure table: | figure | n | min | median | max | unit | goal | met | note |. */
function row(figure: string): Record<Stat, number> & { note: string } {
  // The figure tables have nine columns; the Goals summary repeats some names in four.
  const lines = bench.split('\n').filter((l) => l.startsWith(`| ${figure} |`) && l.split(' | ').length >= 9);
  if (lines.length !== 1)
    throw new Error(`BENCHMARKS.md has ${lines.length} rows named ${JSON.stringify(figure)}`);
  const cells = lines[0]!.split(' | ').map((c) => c.replace(/^\| |\|$/g, '').trim());
  const num = (s: string) => Number(s.replace(/,/g, ''));
  return { min: num(cells[2]!), median: num(cells[3]!), max: num(cells[4]!), note: cells[8] ?? '' };
}
/**
 * The per-OTP table of the OTP library's memory (| OTP | listed peers | the library's processes |
 * VM total grown | of it loaded code | VM total then |): every value of one column at one size,
 * over the OTP releases and their runs.
 */
function perOtp(peers: number, column: 2 | 3 | 4): number[] {
  const rows = bench
    .split('\n')
    .filter((l) => /^\| \d+\.\d+[.\d]* \| [\d,]+ \| /.test(l))
    .map((l) => l.split(' | ').map((c) => c.replace(/^\| |\|$/g, '').trim()))
    .filter((cells) => Number(cells[1]!.replace(/,/g, '')) === peers);
  if (rows.length < 3) throw new Error(`BENCHMARKS.md has ${rows.length} per-OTP rows at ${peers} peers`);
  return rows.flatMap((cells) => [...cells[column]!.matchAll(/([\d.]+) MB/g)].map((m) => Number(m[1])));
}
const range = (xs: number[]): [number, number] => [Math.min(...xs), Math.max(...xs)];

const OP_IDLE = 'operator, 0 pods: resident memory (VmRSS) of the process by itself';
const OP_5000_SETTLED = 'operator N=5000: resident memory (VmRSS), settled';
const OP_5000_POLLED = 'operator N=5000: resident memory (VmRSS) with 10 s polls';
const OP_5000_PEAK = 'operator N=5000: peak resident memory (VmHWM)';
const OBJECT = 'ClusterTopology object size at 5000 pods';
const FIT = "peers that fit in etcd's 1.5 MiB (extrapolated from 5000)";
const SIDECAR_100 = 'sidecar (Node.js agent, erlang connector) at 100 listed peers: resident memory (VmRSS)';
const LOAD = 'loading, now (--max-semi-space-size=2 --lite-mode): ';
const TLS = `${LOAD}+ node:https and a TLS context: resident memory (VmRSS)`;
const AGENT_100 =
  'agent, 100 peers, file connector, now (--max-semi-space-size=2 --lite-mode): resident memory (VmRSS)';
const MiB = 1024 * 1024;

interface Claim {
  file: string;
  /** The sentence, its one capture group the quoted number. */
  says: RegExp;
  /**
   * What BENCHMARKS.md holds for it: one number, or [min, max] — for a quoted range (two capture
   * groups) its ends, for one quoted number every value, rounded as the doc rounds.
   */
  is: () => number | [number, number];
  /** The doc rounds to this step (default: the decimals it writes). */
  step?: number;
}

const operatorMemory = (file: string): Claim[] => [
  { file, says: /about (\d+) MB\s+with no pods/, is: () => row(OP_IDLE).median },
  { file, says: /(\d+) MB at 5,000\s+pods\s+polled every 10 s/, is: () => row(OP_5000_POLLED).median },
  { file, says: /(\d+) MB at its peak/, is: () => row(OP_5000_PEAK).median },
];

const claims: Claim[] = [
  {
    file: 'README.md',
    says: /etcd's object limit: ([\d.]+) MiB at 5,000 pods/,
    is: () => row(OBJECT).median / MiB,
  },
  { file: 'README.md', says: /roughly ([\d,]+) pods per topology/, is: () => row(FIT).median, step: 1000 },
  {
    file: 'README.md',
    says: /The operator: about (\d+) MB resident at 5,000 pods/,
    is: () => row(OP_5000_SETTLED).median,
  },
  { file: 'README.md', says: /5,000 pods, (\d+) MB at its peak/, is: () => row(OP_5000_PEAK).median },
  {
    file: 'README.md',
    says: /The sidecar:\s+about (\d+) MB with 100 peers/,
    is: () => row(SIDECAR_100).median,
  },
  { file: 'README.md', says: /(\d+) MB of it Node\.js with TLS/, is: () => row(TLS).median },
  {
    file: 'README.md',
    says: /own processes hold ([\d.]+)–([\d.]+) MB at 100 peers/,
    is: () => range(perOtp(100, 2)),
  },
  {
    file: 'README.md',
    says: /the VM grows ([\d.]+)–([\d.]+) MB once\s+it runs there/,
    is: () => range(perOtp(100, 3)),
  },
  { file: 'README.md', says: /\(([\d.]+)–([\d.]+) MB at 2 peers/, is: () => range(perOtp(2, 3)) },
  {
    file: 'README.md',
    says: /about (\d+) MB of `ssl`'s and the library's code/,
    is: () => range(perOtp(2, 4)),
  },
  ...operatorMemory('charts/cluster-topology/README.md'),
  ...operatorMemory('docs/runbook.md'),
  { file: 'docs/agent.md', says: /the agent is about (\d+) MB resident/, is: () => row(AGENT_100).median },
  { file: 'docs/agent.md', says: /made a TLS context is about (\d+) MB/, is: () => row(TLS).median },
  {
    file: 'docs/agent.md',
    says: /about (\d+) MB are pages of the `node` binary/,
    is: () => row(`${LOAD}+ node:https and a TLS context: node binary pages (RssFile)`).median,
  },
  {
    file: 'docs/agent.md',
    says: /and (\d+) MB its own memory \(RssAnon\)/,
    is: () => row(`${LOAD}+ node:https and a TLS context: its own part (RssAnon)`).median,
  },
  {
    file: 'docs/agent.md',
    says: /The agent adds about (\d+) MB/,
    is: () => row(AGENT_100).median - row(TLS).median,
  },
  // The library's table, per size over OTP 25, 27 and 29: its processes, and what the VM grew.
  ...[2, 100, 1000].map((peers): Claim => ({
    file: 'clients/cluster_topology/README.md',
    says: new RegExp(`^\\| ${peers.toLocaleString('en')} +\\| ([\\d.]+)–([\\d.]+) MB +\\|`, 'm'),
    is: () => range(perOtp(peers, 2)),
  })),
  ...[2, 100].map((peers): Claim => ({
    file: 'clients/cluster_topology/README.md',
    says: new RegExp(`^\\| ${peers} +\\|[^|]+\\| ([\\d.]+)–([\\d.]+) MB`, 'm'),
    is: () => range(perOtp(peers, 3)),
  })),
  {
    file: 'clients/cluster_topology/README.md',
    says: /about (\d+) MB of it code/,
    is: () => range(perOtp(2, 4)),
  },
  {
    file: 'clients/cluster_topology/README.md',
    says: /^\| 1,000 +\|[^|]+\| ([\d.]+)–([\d.]+) MB/m,
    // Without the one run that stood out, which the doc quotes apart ("once …").
    is: () =>
      range(
        perOtp(1000, 3)
          .sort((a, b) => a - b)
          .slice(0, -1),
      ),
  },
  {
    file: 'clients/cluster_topology/README.md',
    says: /\(once ([\d.]+) MB\)/,
    is: () => Math.max(...perOtp(1000, 3)),
  },
];

/** Memory and size figures in the docs that are no benchmark figure, and why. */
const notMeasured: { file: string; says: RegExp; why: string }[] = [
  { file: 'docs/agent.md', says: /stays under (50) MB/, why: 'the goal, not a measurement' },
  {
    file: 'docs/operator.md',
    says: /grows to (64) MB per semi-space/,
    why: "V8's default young generation size",
  },
  {
    file: 'docs/operator.md',
    says: /about (3) MB less/,
    why: 'measured once when --lite-mode was chosen, not a bench row',
  },
  {
    file: 'docs/security.md',
    says: /\((25) MB of JavaScript/,
    why: "the size of client-node's generated API on disk",
  },
  {
    file: 'docs/security.md',
    says: /about (40) MB of memory/,
    why: 'what loading that API costs, the reason it is not loaded',
  },
  {
    file: 'docs/status-protocol.md',
    says: /etcd's (1\.5) MiB/,
    why: "etcd's default limit on one request, and so on one object",
  },
  {
    file: 'clients/cluster_topology/README.md',
    says: /\| (16) MiB /,
    why: 'the default of the max_body_bytes option',
  },
];

/** The docs a reader takes figures from. */
const DOCS = [
  'README.md',
  'charts/cluster-topology/README.md',
  'clients/cluster_topology/README.md',
  'examples/README.md',
  'CONTRIBUTING.md',
  'docs/agent.md',
  'docs/architecture.md',
  'docs/failure-domains.md',
  'docs/migrating-from-libcluster.md',
  'docs/naming-and-membership.md',
  'docs/operator.md',
  'docs/real-node.md',
  'docs/runbook.md',
  'docs/security.md',
  'docs/status-protocol.md',
];

/** The number as the doc wrote it, and the benchmark's at that precision. */
function compare(quoted: string, value: number, step?: number): { quoted: number; measured: number } {
  const q = Number(quoted.replace(/,/g, ''));
  const s = step ?? 10 ** -(quoted.split('.')[1]?.length ?? 0);
  // Rounded at the doc's precision (half away from zero), and kept to it against float noise.
  const measured = Math.round(Number((value / s).toFixed(9))) * s; // 14.45 / 0.1 is 144.4999…
  return { quoted: q, measured: Number(measured.toFixed(10)) };
}

/** What `compare` should give when the doc is right: the measured figure equal to the quoted one. */
const sameQuoted = (c: { quoted: number; measured: number }) => ({ quoted: c.quoted, measured: c.quoted });

describe('figures quoted in the docs', () => {
  for (const c of claims)
    it(`${c.file}: ${c.says.source}`, () => {
      const m = c.says.exec(read(c.file));
      expect({ found: m !== null }).toEqual({ found: true });
      const is = c.is();
      const [low, high] = Array.isArray(is) ? is : [is, is];
      if (m![2] !== undefined) {
        expect(compare(m![1]!, low, c.step)).toEqual(sameQuoted(compare(m![1]!, low, c.step)));
        expect(compare(m![2]!, high, c.step)).toEqual(sameQuoted(compare(m![2]!, high, c.step)));
      } else
        for (const v of [low, high]) {
          const { quoted, measured } = compare(m![1]!, v, c.step);
          expect(quoted).toBe(measured);
        }
    });

  it('every memory or size figure in the docs is one of those, or said not to be a benchmark figure', () => {
    const unaccounted: string[] = [];
    for (const file of DOCS) {
      const text = read(file);
      const covered: [number, number][] = [];
      for (const c of [...claims, ...notMeasured].filter((x) => x.file === file)) {
        const m = c.says.exec(text);
        if (m) covered.push([m.index, m.index + m[0].length]);
      }
      for (const m of text.matchAll(/\d[\d,.]*\s?(MB|MiB|GB|GiB|kB|KiB)\b/g))
        if (!covered.some(([a, b]) => m.index >= a && m.index < b)) unaccounted.push(`${file}: ${m[0]}`);
    }
    expect(unaccounted).toEqual([]);
  });

  it('the rows it reads are in BENCHMARKS.md once each (a renamed row fails here, not silently)', () => {
    for (const r of [
      OP_IDLE,
      OP_5000_SETTLED,
      OP_5000_POLLED,
      OP_5000_PEAK,
      OBJECT,
      FIT,
      SIDECAR_100,
      TLS,
      AGENT_100,
    ])
      expect(Number.isFinite(row(r).median)).toBe(true);
  });
});
