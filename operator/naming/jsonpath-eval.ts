/**
 * Runs a checked naming JSONPath (jsonpath-syntax.ts) against one pod, within a budget of
 * steps. Results are the ones jsonpath-plus gives for the same expression (the unit tests
 * compare the two on generated expressions and pods); the work is counted, so one pod cannot
 * hold the event loop.
 *
 * A step is one unit of work whose own cost does not depend on the data: visiting a value,
 * looking at one child, evaluating one node of a filter, reading one member. Work that does
 * depend on the data is charged by size before it is done: a comparison or arithmetic on an
 * array turns it into a string (every element, recursively), on a string reads its characters,
 * and `@path` builds a string as long as the path. Over budget, evaluation stops and reports
 * how far it got; nothing is partly returned.
 *
 * Semantics kept from jsonpath-plus, for this language:
 * - a name step follows an own property of a truthy value (so `[0]` indexes arrays and
 *   strings, `.length` reads their length);
 * - `*` and filters visit array elements by index, object fields in key order; `..` visits the
 *   value itself, then each child that is an object (null included), depth first;
 * - right after `*` or a plain name, a field whose name is the next step's text wins over
 *   that step's meaning;
 * - a filter's `@parent` and `@parentProperty` are those of the value being filtered (not of
 *   the item); `@property` is the item's index (a number) or key; a filter that throws
 *   (reading a field of null, coercing an object that cannot be) is false for that item.
 */
import type { FilterNode } from './jsonpath-filter.js';
import type { Step } from './jsonpath-syntax.js';

/** Steps one selection may take; see docs/runbook.md ("ExpressionTooCostly"). */
export const STEP_BUDGET = 400_000;

/** Characters of a string counted as one step when it is compared or coerced. */
const CHARS_PER_STEP = 64;

export type Evaluation =
  { ok: true; values: unknown[]; steps: number } | { ok: false; overBudget: true; budget: number };

class OverBudget extends Error {}

class Meter {
  left: number;
  constructor(readonly budget: number) {
    this.left = budget;
  }
  charge(n: number): void {
    this.left -= n;
    if (this.left < 0) throw new OverBudget();
  }
}

/** A path as a linked list from the leaf: O(1) per step, spelled out only for `@path`. */
interface PathLink {
  up: PathLink | null;
  key: string | number;
}

const hasOwn = (value: unknown, key: string | number): boolean => Object.hasOwn(value as object, key);

function walk(value: unknown, meter: Meter, visit: (key: string | number) => void): void {
  if (Array.isArray(value)) {
    const n = value.length;
    for (let i = 0; i < n; i++) {
      meter.charge(1);
      visit(i);
    }
  } else if (value && typeof value === 'object') {
    for (const k of Object.keys(value)) {
      meter.charge(1);
      visit(k);
    }
  }
}

// jsonpath-plus's path notation: $['a'][0]; `~`, `^` and `@…()` keys are left out.
function pathString(link: PathLink | null, meter: Meter): string {
  const keys: (string | number)[] = [];
  for (let l = link; l; l = l.up) keys.push(l.key);
  let p = '$';
  for (let i = keys.length - 1; i >= 0; i--) {
    const key = keys[i]!;
    const text = String(key);
    meter.charge(1 + Math.ceil(text.length / CHARS_PER_STEP));
    if (/^(~|\^|@.*?\(\))$/.test(text)) continue;
    p += /^[0-9*]+$/.test(text) ? `[${text}]` : `['${text.replace(/['\\]/g, '\\$&')}']`;
  }
  return p;
}

/** Charges what turning `value` into a primitive (or comparing it) costs, before it is done. */
function chargeCoercion(value: unknown, meter: Meter): void {
  if (typeof value === 'string') {
    meter.charge(1 + Math.floor(value.length / CHARS_PER_STEP));
  } else if (Array.isArray(value)) {
    // Array → string joins every element, recursively.
    meter.charge(1);
    for (const element of value) chargeCoercion(element, meter);
  } else {
    meter.charge(1);
  }
}

interface FilterScope {
  v: unknown;
  root: unknown;
  parent: unknown;
  property: unknown;
  parentProperty: unknown;
  path: () => string;
}

function member(object: unknown, key: string): unknown {
  if (object === undefined || object === null) throw new TypeError(`cannot read ${key} of ${object}`);
  const value = (object as Record<string, unknown>)[key];
  // jsonpath-plus hands back a bound function; it is never called (calls are refused).
  return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(object) : value;
}

function evalFilter(node: FilterNode, scope: FilterScope, meter: Meter): unknown {
  meter.charge(1);
  switch (node.t) {
    case 'literal':
      return node.value;
    case 'ref': {
      let value: unknown;
      switch (node.at) {
        case '':
          value = scope.v;
          break;
        case 'root':
          value = scope.root;
          break;
        case 'parent':
          value = scope.parent;
          break;
        case 'property':
          value = scope.property;
          break;
        case 'parentProperty':
          value = scope.parentProperty;
          break;
        case 'path':
          value = scope.path();
          break;
      }
      for (const key of node.members) {
        meter.charge(1);
        value = member(value, key);
      }
      return value;
    }
    case 'unary': {
      const a = evalFilter(node.arg, scope, meter);
      if (node.op === '!') return !a;
      chargeCoercion(a, meter);
      return -(a as number);
    }
    case 'binary': {
      const a = evalFilter(node.left, scope, meter);
      if (node.op === '||') return a || evalFilter(node.right, scope, meter);
      if (node.op === '&&') return a && evalFilter(node.right, scope, meter);
      const b = evalFilter(node.right, scope, meter);
      chargeCoercion(a, meter);
      chargeCoercion(b, meter);
      const x = a as number;
      const y = b as number;
      switch (node.op) {
        case '==':
          return x == y;
        case '!=':
          return x != y;
        case '===':
          return x === y;
        case '!==':
          return x !== y;
        case '<':
          return x < y;
        case '<=':
          return x <= y;
        case '>':
          return x > y;
        case '>=':
          return x >= y;
        case '+':
          return x + y;
        case '-':
          return x - y;
        case '*':
          return x * y;
        case '%':
          return x % y;
      }
      throw new Error(`unknown operator ${node.op}`);
    }
  }
}

function passes(step: Step & { kind: 'filter' }, scope: FilterScope, meter: Meter): boolean {
  try {
    return Boolean(evalFilter(step.ast, scope, meter));
  } catch (e) {
    if (e instanceof OverBudget) throw e;
    return false; // a filter that throws is false for this item
  }
}

function sliceIndexes(length: number, step: Step & { kind: 'slice' }): number[] {
  const by = step.step ?? 1;
  if (by === 0) return [];
  const normal = (i: number) => (i < 0 ? i + length : i);
  const clamp = (i: number, lo: number, hi: number) => Math.min(Math.max(i, lo), hi);
  const start = normal(step.start ?? (by > 0 ? 0 : length - 1));
  const end = normal(step.end ?? (by > 0 ? length : -length - 1));
  const out: number[] = [];
  if (by > 0) {
    for (let i = clamp(start, 0, length); i < clamp(end, 0, length); i += by) out.push(i);
  } else {
    for (let i = clamp(start, -1, length - 1); i > clamp(end, -1, length - 1); i += by) out.push(i);
  }
  return out;
}

class Run {
  readonly values: unknown[] = [];
  constructor(
    private readonly steps: readonly Step[],
    private readonly root: unknown,
    readonly meter: Meter,
  ) {}

  trace(
    k: number,
    value: unknown,
    path: PathLink | null,
    parent: unknown,
    parentProperty: unknown,
    literal: boolean,
  ): void {
    this.meter.charge(1);
    if (k === this.steps.length) {
      this.values.push(value);
      return;
    }
    const step = this.steps[k]!;
    const v = value as Record<string | number, unknown>;
    if (step.kind === 'name') {
      if (value && hasOwn(value, step.name))
        this.trace(k + 1, v[step.name], { up: path, key: step.name }, value, step.name, !literal);
      return;
    }
    if (literal && value && hasOwn(value, step.text)) {
      this.trace(k + 1, v[step.text], { up: path, key: step.text }, value, step.text, false);
      return;
    }
    switch (step.kind) {
      case 'wildcard':
        walk(value, this.meter, (m) => this.trace(k + 1, v[m], { up: path, key: m }, value, m, true));
        return;
      case 'descent':
        this.trace(k + 1, value, path, parent, parentProperty, false);
        walk(value, this.meter, (m) => {
          if (typeof v[m] === 'object') this.trace(k, v[m], { up: path, key: m }, value, m, false);
        });
        return;
      case 'names':
        for (const name of step.names) {
          this.meter.charge(1);
          if (value && hasOwn(value, name))
            this.trace(k + 1, v[name], { up: path, key: name }, value, name, false);
        }
        return;
      case 'indexes':
        for (const name of step.names) {
          this.meter.charge(1);
          if (value && hasOwn(value, name))
            this.trace(k + 1, v[name], { up: path, key: name }, value, name, true);
        }
        return;
      case 'slice':
        if (!Array.isArray(value)) return;
        for (const i of sliceIndexes(value.length, step)) {
          this.meter.charge(1);
          if (hasOwn(value, i)) this.trace(k + 1, value[i], { up: path, key: i }, value, i, false);
        }
        return;
      case 'filter':
        walk(value, this.meter, (m) => {
          const scope: FilterScope = {
            v: v[m],
            root: this.root,
            parent,
            property: m,
            parentProperty,
            path: () => pathString({ up: path, key: m }, this.meter),
          };
          if (passes(step, scope, this.meter)) this.trace(k + 1, v[m], { up: path, key: m }, value, m, false);
        });
        return;
    }
  }
}

/** Runs `steps` against `json`; at most `budget` steps. */
export function evaluatePath(steps: readonly Step[], json: unknown, budget = STEP_BUDGET): Evaluation {
  const run = new Run(steps, json, new Meter(budget));
  try {
    run.trace(0, json, null, null, null, false);
  } catch (e) {
    if (e instanceof OverBudget) return { ok: false, overBudget: true, budget };
    throw e;
  }
  return { ok: true, values: run.values, steps: budget - run.meter.left };
}

/**
 * Charges what telling matches apart costs (each distinct non-string match is serialised),
 * against what is left of a budget; false when it does not fit.
 */
export function chargeMatches(values: readonly unknown[], budgetLeft: number): boolean {
  const meter = new Meter(budgetLeft);
  try {
    for (const value of values) chargeSize(value, meter);
    return true;
  } catch (e) {
    if (e instanceof OverBudget) return false;
    throw e;
  }
}

function chargeSize(value: unknown, meter: Meter): void {
  if (typeof value === 'string') meter.charge(1 + Math.floor(value.length / CHARS_PER_STEP));
  else if (value && typeof value === 'object') {
    meter.charge(1);
    for (const child of Object.values(value)) chargeSize(child, meter);
  } else meter.charge(1);
}
