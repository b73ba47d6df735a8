/**
 * Reading Prometheus text exposition (format 0.0.4) — what the kube-apiserver and the operator
 * serve on /metrics — and diffing counters between two scrapes. Pure: text in, numbers out.
 */

export interface Sample {
  name: string;
  labels: Readonly<Record<string, string>>;
  value: number;
}

function parseValue(s: string): number {
  switch (s) {
    case '+Inf':
    case 'Inf':
      return Infinity;
    case '-Inf':
      return -Infinity;
    case 'NaN':
      return NaN;
    default: {
      const v = Number(s);
      if (s === '' || Number.isNaN(v)) throw new Error(`not a sample value: ${JSON.stringify(s)}`);
      return v;
    }
  }
}

/** Parses `{a="x",b="y\"z"}` starting at `text[start] === '{'`; returns the labels and the index after '}'. */
function parseLabels(text: string, start: number): { labels: Record<string, string>; end: number } {
  const labels: Record<string, string> = {};
  let i = start + 1;
  const skipSpace = () => {
    while (text[i] === ' ' || text[i] === '\t') i++;
  };
  for (;;) {
    skipSpace();
    if (text[i] === '}') return { labels, end: i + 1 };
    const nameMatch = /^[a-zA-Z_][a-zA-Z0-9_]*/.exec(text.slice(i));
    if (!nameMatch) throw new Error(`bad label name at ${i}: ${text.slice(i, i + 20)}`);
    const name = nameMatch[0];
    i += name.length;
    skipSpace();
    if (text[i] !== '=') throw new Error(`expected '=' after label ${name}`);
    i++;
    skipSpace();
    if (text[i] !== '"') throw new Error(`expected '"' to open the value of label ${name}`);
    i++;
    let value = '';
    for (;;) {
      const c = text[i];
      if (c === undefined) throw new Error(`unterminated value of label ${name}`);
      if (c === '"') {
        i++;
        break;
      }
      if (c === '\\') {
        const e = text[i + 1];
        value += e === 'n' ? '\n' : e === '\\' ? '\\' : e === '"' ? '"' : `\\${e ?? ''}`;
        i += 2;
        continue;
      }
      value += c;
      i++;
    }
    labels[name] = value;
    skipSpace();
    if (text[i] === ',') i++;
    else if (text[i] !== '}') throw new Error(`expected ',' or '}' after label ${name}`);
  }
}

/** All samples of a scrape. Comment and blank lines are skipped; a malformed line throws. */
export function parsePrometheusText(text: string): Sample[] {
  const out: Sample[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const nameMatch = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line);
    if (!nameMatch) throw new Error(`not a sample line: ${line.slice(0, 80)}`);
    const name = nameMatch[0];
    let labels: Record<string, string> = {};
    let rest = line.slice(name.length);
    if (rest.startsWith('{')) {
      const parsed = parseLabels(line, name.length);
      labels = parsed.labels;
      rest = line.slice(parsed.end);
    }
    const fields = rest.trim().split(/\s+/); // value, then an optional timestamp
    out.push({ name, labels, value: parseValue(fields[0] ?? '') });
  }
  return out;
}

/** A label filter: the exact value, or a predicate over the value (undefined when the label is absent). */
export type LabelFilter = Record<string, string | ((value: string | undefined) => boolean)>;

export function matches(labels: Readonly<Record<string, string>>, filter: LabelFilter): boolean {
  return Object.entries(filter).every(([k, want]) =>
    typeof want === 'function' ? want(labels[k]) : labels[k] === want,
  );
}

/** The sum of `name` over every sample whose labels pass `filter`. */
export function sumWhere(samples: readonly Sample[], name: string, filter: LabelFilter = {}): number {
  let sum = 0;
  for (const s of samples) if (s.name === name && matches(s.labels, filter)) sum += s.value;
  return sum;
}

/** Sums of `name` per value of the label `by` (a missing label groups under ""), over samples passing `filter`. */
export function sumBy(
  samples: readonly Sample[],
  name: string,
  by: string,
  filter: LabelFilter = {},
): Map<string, number> {
  const out = new Map<string, number>();
  for (const s of samples) {
    if (s.name !== name || !matches(s.labels, filter)) continue;
    const k = s.labels[by] ?? '';
    out.set(k, (out.get(k) ?? 0) + s.value);
  }
  return out;
}

/**
 * How much a counter grew between two scrapes, per value of `by`. A group missing in `before`
 * counts from 0 (a counter appears on its first increment). A group that shrank means the
 * process restarted: that is reported as an error rather than a negative rate.
 */
export function counterDelta(
  before: readonly Sample[],
  after: readonly Sample[],
  name: string,
  by: string,
  filter: LabelFilter = {},
): Map<string, number> {
  const b = sumBy(before, name, by, filter);
  const a = sumBy(after, name, by, filter);
  const out = new Map<string, number>();
  for (const [k, v] of a) {
    const d = v - (b.get(k) ?? 0);
    if (d < 0) throw new Error(`${name}{${by}="${k}"} went down (${b.get(k)} → ${v}): the process restarted`);
    out.set(k, d);
  }
  for (const [k, v] of b) if (!a.has(k) && v > 0) throw new Error(`${name}{${by}="${k}"} disappeared`);
  return out;
}
