/**
 * Prometheus metrics in the text exposition format (version 0.0.4), and nothing else: counters
 * and gauges with labels, and the process's own figures read at scrape time. The agent runs on
 * this instead of prom-client, whose 30-odd modules and OpenTelemetry hooks cost a sidecar that
 * exports nine figures more memory than the figures themselves.
 */

export type Labels = Record<string, string>;
export type MetricType = 'counter' | 'gauge';

export interface MetricDescription {
  name: string;
  help: string;
  type: MetricType;
}

interface Metric extends MetricDescription {
  /** The sample lines of this metric, without HELP and TYPE. */
  samples(): string[];
}

/** `\`, `"` and line breaks escaped, as the text format wants label values. */
const escapeLabel = (v: string) => v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
const escapeHelp = (v: string) => v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');

function formatValue(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  return String(v);
}

function sampleLine(name: string, labelNames: readonly string[], labels: Labels, value: number): string {
  const pairs = labelNames.filter((l) => l in labels).map((l) => `${l}="${escapeLabel(labels[l]!)}"`);
  return `${name}${pairs.length ? `{${pairs.join(',')}}` : ''} ${formatValue(value)}`;
}

export class Registry {
  readonly contentType = 'text/plain; version=0.0.4; charset=utf-8';
  private readonly all: Metric[] = [];

  register(metric: Metric): void {
    if (this.all.some((m) => m.name === metric.name))
      throw new Error(`metric ${metric.name} is already registered`);
    this.all.push(metric);
  }

  /** The exposition: every metric in the order registered. */
  async metrics(): Promise<string> {
    return this.all
      .map((m) =>
        [`# HELP ${m.name} ${escapeHelp(m.help)}`, `# TYPE ${m.name} ${m.type}`, ...m.samples()].join('\n'),
      )
      .join('\n\n')
      .concat('\n');
  }

  /** Name, help and type of every metric (the reference documentation lists them). */
  async getMetricsAsJSON(): Promise<MetricDescription[]> {
    return this.all.map(({ name, help, type }) => ({ name, help, type }));
  }
}

interface MetricOptions {
  name: string;
  help: string;
  labelNames?: readonly string[];
  registers?: Registry[];
}

/** A value per label set; a metric without labels has one, present from the start. */
abstract class Series implements Metric {
  abstract readonly type: MetricType;
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly string[];
  protected readonly values = new Map<string, { labels: Labels; value: number }>();

  constructor(o: MetricOptions) {
    this.name = o.name;
    this.help = o.help;
    this.labelNames = o.labelNames ?? [];
    if (this.labelNames.length === 0) this.values.set('', { labels: {}, value: 0 });
    for (const r of o.registers ?? []) r.register(this);
  }

  protected entry(labels: Labels): { labels: Labels; value: number } {
    for (const k of Object.keys(labels))
      if (!this.labelNames.includes(k)) throw new Error(`${this.name}: unknown label "${k}"`);
    const key = this.labelNames.map((l) => labels[l] ?? '').join('\u0000');
    let e = this.values.get(key);
    if (!e) this.values.set(key, (e = { labels: { ...labels }, value: 0 }));
    return e;
  }

  samples(): string[] {
    return [...this.values.values()].map((e) => sampleLine(this.name, this.labelNames, e.labels, e.value));
  }
}

export class Counter extends Series {
  readonly type = 'counter';

  inc(labels?: Labels | number, by?: number): void {
    const [l, n] = typeof labels === 'number' ? [{}, labels] : [labels ?? {}, by ?? 1];
    if (!(n >= 0)) throw new Error(`${this.name}: a counter only goes up (inc by ${n})`);
    this.entry(l).value += n;
  }
}

export class Gauge extends Series {
  readonly type = 'gauge';

  set(labels: Labels | number, value?: number): void {
    if (typeof labels === 'number') this.entry({}).value = labels;
    else this.entry(labels).value = value!;
  }
}

/** A metric whose samples are read when scraped. */
class Collected implements Metric {
  constructor(
    readonly name: string,
    readonly help: string,
    readonly type: MetricType,
    private readonly read: () => number | undefined,
  ) {}

  samples(): string[] {
    const v = this.read();
    return v === undefined ? [] : [sampleLine(this.name, [], {}, v)];
  }
}

/**
 * The process's own figures, under prom-client's names (`process_…`, `nodejs_…`) with `prefix`:
 * CPU, resident memory, start time, open file descriptors, V8 heap.
 */
export function collectProcessMetrics(registry: Registry, prefix: string): void {
  const startS = Math.round(Date.now() / 1000 - process.uptime());
  const cpu = () => process.cpuUsage();
  const openFds = (): number | undefined => {
    const fs = process.getBuiltinModule('node:fs');
    try {
      return fs.readdirSync('/proc/self/fd').length - 1; // less the one reading the directory
    } catch {
      return undefined; // not Linux
    }
  };
  const add = (name: string, help: string, type: MetricType, read: () => number | undefined) =>
    registry.register(new Collected(prefix + name, help, type, read));
  add(
    'process_cpu_user_seconds_total',
    'Total user CPU time spent in seconds.',
    'counter',
    () => cpu().user / 1e6,
  );
  add(
    'process_cpu_system_seconds_total',
    'Total system CPU time spent in seconds.',
    'counter',
    () => cpu().system / 1e6,
  );
  add('process_cpu_seconds_total', 'Total user and system CPU time spent in seconds.', 'counter', () => {
    const c = cpu();
    return (c.user + c.system) / 1e6;
  });
  add(
    'process_start_time_seconds',
    'Start time of the process since unix epoch in seconds.',
    'gauge',
    () => startS,
  );
  add('process_resident_memory_bytes', 'Resident memory size in bytes.', 'gauge', () =>
    process.memoryUsage.rss(),
  );
  add('process_open_fds', 'Number of open file descriptors.', 'gauge', openFds);
  add(
    'nodejs_heap_size_total_bytes',
    'Process heap size from Node.js in bytes.',
    'gauge',
    () => process.memoryUsage().heapTotal,
  );
  add(
    'nodejs_heap_size_used_bytes',
    'Process heap size used from Node.js in bytes.',
    'gauge',
    () => process.memoryUsage().heapUsed,
  );
  add(
    'nodejs_external_memory_bytes',
    'Node.js external memory size in bytes.',
    'gauge',
    () => process.memoryUsage().external,
  );
}
