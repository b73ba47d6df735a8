/**
 * One measured figure of a benchmark. `samples` are the repeated measurements of one run
 * (the report shows min/median/max); `goal` is the target an issue set for it, if any.
 */
export interface Figure {
  name: string;
  unit: string;
  samples: number[];
  goal?: { op: '>=' | '<='; value: number };
  note?: string;
}

export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

export function goalMet(f: Figure): boolean | undefined {
  if (!f.goal) return undefined;
  const m = median(f.samples);
  return f.goal.op === '>=' ? m >= f.goal.value : m <= f.goal.value;
}

function round(x: number): string {
  if (!Number.isFinite(x)) return String(x);
  const a = Math.abs(x);
  return a >= 100 ? x.toFixed(0) : a >= 1 ? x.toFixed(2) : x.toPrecision(3);
}

/** One line per figure: name, min/median/max, unit, goal and whether it is met. */
export function formatFigure(f: Figure): string {
  const min = Math.min(...f.samples);
  const max = Math.max(...f.samples);
  const goal = f.goal
    ? `  goal ${f.goal.op} ${f.goal.value} ${f.unit}: ${goalMet(f) ? 'met' : 'NOT met'}`
    : '';
  return `${f.name}: min ${round(min)} / median ${round(median(f.samples))} / max ${round(max)} ${f.unit} (n=${f.samples.length})${goal}${f.note ? `  — ${f.note}` : ''}`;
}
