/**
 * `npm run bench`: runs the benchmark modules, prints every figure, and writes BENCHMARKS.md at
 * the repository root.
 *
 *   node dist/bench/run.js                      every module (every dist/bench/NAME.bench.js); writes BENCHMARKS.md
 *   node dist/bench/run.js operator naming      only these; prints, writes nothing …
 *   node dist/bench/run.js operator --out F.md  … unless --out names a file
 *
 * A module that fails is reported (and the exit code is 1); the others still run. Ctrl-C stops
 * the operator processes and the control plane before exiting (bench/cleanup.ts).
 */
import { readdir, writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { formatFigure, type Figure } from './figure.js';
import { runCleanups } from './cleanup.js';
import { machine, versions } from './machine.js';
import { renderReport, type ModuleResult, type Section } from './report.js';
import { ensureBinaries } from '../dev/cluster/binaries.js';

interface BenchModule {
  default: () => Promise<Figure[]>;
  runDetailed?: () => Promise<{ figures: Figure[]; sections: Section[] }>;
  /** A heading for the report; default: the module's name. */
  title?: string;
}

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, '..', '..');

/** Headings of the modules known when this was written; any other `*.bench.js` is found and run too. */
const TITLES: Record<string, string> = {
  naming: 'Naming engine',
  'failure-domains': 'Failure-domain analysis',
  operator: 'Operator on a real API server: convergence, API cost, memory',
  'many-topologies':
    'Many topologies: one operator, 100 topologies × 100 pods, in one namespace and in 100, the former design beside today’s',
  'beam-client':
    'BEAM client library inside the VM, the sidecar beside it: memory added, idle CPU and distribution calls, status change → connect_node, at 2, 100 and 1,000 peers',
};

/** Every `NAME.bench.js` beside this file: the known ones in TITLES' order, then the rest by name. */
async function discover(): Promise<string[]> {
  const found = (await readdir(here))
    .filter((f) => f.endsWith('.bench.js'))
    .map((f) => f.slice(0, -'.bench.js'.length));
  const known = Object.keys(TITLES).filter((n) => found.includes(n));
  return [...known, ...found.filter((n) => !(n in TITLES)).sort()];
}

const load = (name: string) =>
  import(pathToFileURL(join(here, `${name}.bench.js`)).href) as Promise<BenchModule>;

function parseArgs(argv: string[], modules: string[]): { names: string[]; out?: string } {
  const names: string[] = [];
  let out: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--out') {
      out = argv[++i];
      if (!out) throw new Error('--out needs a file name');
    } else if (a === '--help' || a === '-h') {
      process.stdout.write(`usage: node dist/bench/run.js [${modules.join('|')} …] [--out FILE]\n`);
      process.exit(0);
    } else if (modules.includes(a)) names.push(a);
    else throw new Error(`unknown benchmark "${a}"; known: ${modules.join(', ')}`);
  }
  return { names, ...(out ? { out } : {}) };
}

async function main(): Promise<number> {
  const modules = await discover();
  const args = parseArgs(process.argv.slice(2), modules);
  const all = args.names.length === 0;
  const names = all ? modules : [...new Set(args.names)];
  const out = args.out ? resolve(args.out) : all ? join(repoRoot, 'BENCHMARKS.md') : undefined;
  const started = new Date();
  const host = await machine();
  process.stderr.write(
    `bench: ${names.join(', ')} on ${host.cores} × ${host.cpuModel}, load ${host.loadAverage.map((x) => x.toFixed(2)).join(' ')}\n`,
  );

  const results: ModuleResult[] = [];
  let failed = false;
  for (const name of names) {
    let title = TITLES[name] ?? name;
    const t0 = Date.now();
    process.stderr.write(`\n== ${name} ==\n`);
    try {
      const mod = await load(name);
      title = mod.title ?? title;
      const { figures, sections } = mod.runDetailed
        ? await mod.runDetailed()
        : { figures: await mod.default(), sections: [] };
      for (const f of figures) console.log(formatFigure(f));
      results.push({ name: title, seconds: (Date.now() - t0) / 1000, figures, sections });
    } catch (e) {
      failed = true;
      const message = e instanceof Error ? (e.stack ?? e.message) : String(e);
      process.stderr.write(`${name} failed: ${message}\n`);
      results.push({
        name: title,
        seconds: (Date.now() - t0) / 1000,
        figures: [],
        sections: [],
        error: (e as Error).message ?? String(e),
      });
    } finally {
      await runCleanups();
    }
  }

  if (out) {
    let binaries;
    try {
      binaries = names.some((n) => !['naming', 'failure-domains'].includes(n))
        ? await ensureBinaries(() => {})
        : undefined;
    } catch {
      binaries = undefined;
    }
    const report = renderReport({
      date: started.toISOString(),
      command: all ? 'npm run bench' : `node dist/bench/run.js ${names.join(' ')}`,
      machine: host,
      versions: await versions(binaries),
      modules: results,
      notes: [
        `The machine is shared: other work (tests, builds) may run at the same time, so timings are noisy. Load average (1/5/15 min) at the start ${host.loadAverage.map((x) => x.toFixed(2)).join(' / ')}, at the end ${loadavg()
          .map((x) => x.toFixed(2))
          .join(' / ')}.`,
        'Throughput figures are single-threaded runs in this process; the operator figures use a real etcd and kube-apiserver on loopback, started for this run and removed after it.',
      ],
    });
    await writeFile(out, report);
    process.stderr.write(
      `\nwrote ${out} (${((Date.now() - started.getTime()) / 1000).toFixed(0)} s in all)\n`,
    );
  } else process.stderr.write('\n(a subset ran: no report written; add --out FILE to write one)\n');
  return failed ? 1 : 0;
}

process.exitCode = await main().catch(async (e) => {
  process.stderr.write(`${(e as Error).message}\n`);
  await runCleanups();
  return 2;
});
