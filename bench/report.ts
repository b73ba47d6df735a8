/**
 * BENCHMARKS.md from one run: machine, date, versions, then per module a table of its figures
 * (n, min/median/max, the goal beside it and whether the median meets it) and any free-form
 * sections a module adds (comparisons, limits). Pure: data in, markdown out.
 */
import { goalMet, median, type Figure } from './figure.js';

export interface Section {
  title: string;
  markdown: string;
}

export interface ModuleResult {
  name: string;
  seconds: number;
  figures: Figure[];
  sections: Section[];
  /** The module failed: its message (figures may be missing). */
  error?: string;
}

export interface Machine {
  cpuModel: string;
  cores: number;
  memoryBytes: number;
  kernel: string;
  /** 1, 5 and 15 minute load averages when the run started. */
  loadAverage: number[];
}

export interface ReportInput {
  date: string;
  command: string;
  machine: Machine;
  versions: Record<string, string>;
  modules: ModuleResult[];
  notes?: string[];
}

/**
 * A number for a table: thousands separators from 100 up, small integers as they are, else two
 * decimals from 1 and three significant digits below.
 */
export function formatNumber(x: number): string {
  if (!Number.isFinite(x)) return Number.isNaN(x) ? '—' : x > 0 ? '∞' : '−∞';
  const a = Math.abs(x);
  if (a >= 100) return Math.round(x).toLocaleString('en-US');
  if (Number.isInteger(x)) return String(x);
  if (a >= 1) return x.toFixed(2);
  if (a === 0) return '0';
  return x.toPrecision(3);
}

/** Text safe inside a markdown table cell. */
export function cell(s: string): string {
  return s.replace(/\\/g, '\\\\').replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');
}

export function goalText(f: Figure): string {
  return f.goal ? `${f.goal.op === '>=' ? '≥' : '≤'} ${formatNumber(f.goal.value)}` : '';
}

export function verdict(f: Figure): string {
  if (!f.goal) return '';
  if (f.samples.length === 0) return 'no data';
  return goalMet(f) ? 'met' : '**NOT met**';
}

export function figureTable(figures: readonly Figure[]): string {
  const lines = [
    '| figure | n | min | median | max | unit | goal | met | note |',
    '|---|---:|---:|---:|---:|---|---|---|---|',
  ];
  for (const f of figures) {
    const has = f.samples.length > 0;
    const stat = (v: number) => (has ? formatNumber(v) : '—');
    lines.push(
      `| ${cell(f.name)} | ${f.samples.length} | ${stat(Math.min(...f.samples))} | ${stat(median(f.samples))} | ${stat(Math.max(...f.samples))} | ${cell(f.unit)} | ${goalText(f)} | ${verdict(f)} | ${cell(f.note ?? '')} |`,
    );
  }
  return lines.join('\n');
}

export function renderReport(r: ReportInput): string {
  const gib = (r.machine.memoryBytes / 1024 ** 3).toFixed(1);
  const out: string[] = [
    '# Benchmarks',
    '',
    `Written by \`${r.command}\` on ${r.date}. Regenerate rather than edit. Each figure lists its samples' n, min, median and max; a goal is judged on the median.`,
    '',
    '## Machine',
    '',
    '| | |',
    '|---|---|',
    `| CPU | ${cell(r.machine.cpuModel)} |`,
    `| cores | ${r.machine.cores} |`,
    `| memory | ${gib} GiB |`,
    `| kernel | ${cell(r.machine.kernel)} |`,
    `| load average at start (1/5/15 min) | ${r.machine.loadAverage.map((x) => x.toFixed(2)).join(' / ')} |`,
    '',
    '## Versions',
    '',
    '| component | version |',
    '|---|---|',
    ...Object.entries(r.versions).map(([k, v]) => `| ${cell(k)} | ${cell(v)} |`),
    '',
  ];
  if (r.notes?.length) out.push('## Notes', '', ...r.notes.map((n) => `- ${n}`), '');
  const goals = r.modules.flatMap((m) => m.figures.filter((f) => f.goal));
  if (goals.length) {
    out.push('## Goals', '', '| figure | goal | median | met |', '|---|---|---:|---|');
    for (const f of goals)
      out.push(
        `| ${cell(f.name)} | ${goalText(f)} ${cell(f.unit)} | ${f.samples.length ? formatNumber(median(f.samples)) : '—'} | ${verdict(f)} |`,
      );
    out.push('');
  }
  for (const m of r.modules) {
    out.push(`## ${m.name}`, '', `Took ${m.seconds.toFixed(0)} s.`, '');
    if (m.error) out.push(`**Failed:** ${m.error}`, '');
    if (m.figures.length) out.push(figureTable(m.figures), '');
    for (const s of m.sections) out.push(`### ${s.title}`, '', s.markdown.trimEnd(), '');
  }
  return (
    out
      .join('\n')
      .replace(/\n{3,}/g, '\n\n')
      .trimEnd() + '\n'
  );
}
