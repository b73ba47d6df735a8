/**
 * Naming JSONPath: compile an annotation value once, then select one string from a pod.
 *
 * Compiling refuses, as data never to run:
 * - a value longer than MAX_EXPRESSION_BYTES bytes (UTF-8), an empty value, a value with
 *   leading or trailing whitespace (nothing is trimmed: a YAML `|` block leaves a trailing
 *   line break, and the message says so), characters other than printable ASCII;
 * - anything outside the language of jsonpath-syntax.ts / jsonpath-filter.ts;
 * - an expression jsonpath-plus would split into different steps than that parser did, so
 *   what was checked means the same in the reference implementation our evaluator follows.
 * Compilations (refusals too) are kept in a bounded LRU cache keyed by the expression, so
 * 10,000 pods sharing one annotation parse it once.
 *
 * Selecting runs the checked steps with our own evaluator (jsonpath-eval.ts), which gives
 * jsonpath-plus's results for this language but counts its work: no match → NoMatch; matches
 * that are all the same value count as one; several distinct values → AmbiguousMatch; one
 * value that is not a string → NotAString. A filter that reads a missing field is false for
 * that item, not an error. A selection that needs more than STEP_BUDGET steps (telling its
 * matches apart included) is OverBudget, so one pod cannot hold the event loop.
 */
import { JSONPath } from 'jsonpath-plus';
import { BoundedCache } from './bounded-cache.js';
import { chargeMatches, evaluatePath, STEP_BUDGET } from './jsonpath-eval.js';
import { parseNamingPath, type Step } from './jsonpath-syntax.js';

export { STEP_BUDGET };

export const MAX_EXPRESSION_BYTES = 4096;
/** Distinct expressions whose compilation is remembered. */
export const COMPILE_CACHE_CAPACITY = 1024;
/** A checked expression. Only compileJsonPath makes these; selectValue refuses any other. */
export interface CompiledJsonPath {
  readonly expression: string;
  readonly hasFilters: boolean;
  /** The steps after `$`, as the evaluator runs them. */
  readonly steps: readonly Step[];
}

// The record of what compileJsonPath issued: an object of the same shape made elsewhere has
// not been checked, so it is never run.
const issued = new WeakSet<CompiledJsonPath>();

function issue(expression: string, filters: readonly string[], steps: readonly Step[]): CompiledJsonPath {
  const compiled: CompiledJsonPath = Object.freeze({
    expression,
    hasFilters: filters.length > 0,
    steps: Object.freeze([...steps]),
  });
  issued.add(compiled);
  return compiled;
}

export type Compilation = { ok: true; path: CompiledJsonPath } | { ok: false; problem: string };

export type Selection =
  | { kind: 'Match'; value: string }
  | { kind: 'NoMatch' }
  /** `distinct` holds the first few distinct values; `count` how many distinct there are. */
  | { kind: 'AmbiguousMatch'; distinct: unknown[]; count: number }
  | { kind: 'NotAString'; value: unknown }
  /** Evaluating it against this pod would take more than `budget` steps; it was stopped. */
  | { kind: 'OverBudget'; budget: number }
  | { kind: 'Failed'; problem: string };

/** How many distinct values an AmbiguousMatch keeps for its message. */
export const AMBIGUOUS_SAMPLE = 3;

const cache = new BoundedCache<string, Compilation>(COMPILE_CACHE_CAPACITY);
// jsonpath-plus keeps its own parsed paths and filter scripts in module-level Maps without a
// bound; every miss here may add to them, so they are cleared after as many misses as would
// refill this cache twice.
let missesSinceFlush = 0;

function byteLength(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

function position(at: number): string {
  return `at character ${at + 1}`;
}

function check(expression: string): Compilation {
  if (expression.length === 0) return { ok: false, problem: 'the expression is empty' };
  if (/^\s/.test(expression))
    return { ok: false, problem: 'the expression starts with whitespace (nothing is trimmed)' };
  if (/\s$/.test(expression)) {
    const lineBreak = /[\r\n]$/.test(expression);
    return {
      ok: false,
      problem: lineBreak
        ? 'the expression ends with a line break (nothing is trimmed; a YAML | block adds one — use |- or a quoted string)'
        : 'the expression ends with whitespace (nothing is trimmed)',
    };
  }
  const bad = /[^\x20-\x7e]/.exec(expression);
  if (bad) {
    const code = bad[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0');
    return {
      ok: false,
      problem: `character U+${code} ${position(bad.index)} is not allowed (only printable ASCII)`,
    };
  }
  const parsed = parseNamingPath(expression);
  if (!parsed.ok) return { ok: false, problem: `${parsed.problem} (${position(parsed.at)})` };

  if (++missesSinceFlush > 2 * COMPILE_CACHE_CAPACITY) {
    JSONPath.clearCache();
    missesSinceFlush = 0;
  }
  const theirs = JSONPath.toPathArray(expression);
  const ours = parsed.path.segments;
  if (theirs.length !== ours.length || theirs.some((s, k) => s !== ours[k]))
    return {
      ok: false,
      problem:
        'jsonpath-plus would read this expression differently from what was checked; write it more plainly',
    };
  return { ok: true, path: issue(expression, parsed.path.filters, parsed.path.steps) };
}

/** Checks an expression (cached). The problem text is for a person and names the position. */
export function compileJsonPath(expression: string): Compilation {
  // Checked before the cache, so an oversized value is never kept as a key.
  if (expression.length > MAX_EXPRESSION_BYTES || byteLength(expression) > MAX_EXPRESSION_BYTES)
    return {
      ok: false,
      problem: `the expression is ${byteLength(expression)} bytes long; at most ${MAX_EXPRESSION_BYTES} bytes are allowed`,
    };
  const cached = cache.get(expression);
  if (cached) return cached;
  const result = check(expression);
  cache.set(expression, result);
  return result;
}

export function jsonPathCacheStats(): { size: number; capacity: number; hits: number; misses: number } {
  return { size: cache.size, capacity: cache.capacity, hits: cache.hits, misses: cache.misses };
}

/** Empties the compile cache (and jsonpath-plus's); for tests and benchmarks. */
export function clearJsonPathCache(): void {
  cache.clear();
  JSONPath.clearCache();
  missesSinceFlush = 0;
}

function identity(value: unknown): string {
  if (typeof value === 'string') return `s${value}`;
  try {
    return `j${JSON.stringify(value)}`;
  } catch {
    return `?${typeof value}`;
  }
}

/** Interprets the list of matches (see the module comment). */
export function classifyMatches(matches: readonly unknown[]): Selection {
  if (matches.length === 0) return { kind: 'NoMatch' };
  const first = matches[0];
  let distinctKeys: Set<string> | undefined;
  const distinct: unknown[] = [first];
  for (let k = 1; k < matches.length; k++) {
    const m = matches[k];
    if (m === first) continue;
    distinctKeys ??= new Set([identity(first)]);
    const key = identity(m);
    if (distinctKeys.has(key)) continue;
    distinctKeys.add(key);
    if (distinct.length < AMBIGUOUS_SAMPLE) distinct.push(m);
  }
  const count = distinctKeys?.size ?? 1;
  if (count > 1) return { kind: 'AmbiguousMatch', distinct, count };
  return typeof first === 'string' ? { kind: 'Match', value: first } : { kind: 'NotAString', value: first };
}

/** Runs a compiled expression against one JSON document (a pod) and classifies the result. */
export function selectValue(path: CompiledJsonPath, json: object, budget = STEP_BUDGET): Selection {
  if (!issued.has(path))
    return { kind: 'Failed', problem: 'internal error: the expression was not compiled by compileJsonPath' };
  let evaluation;
  try {
    evaluation = evaluatePath(path.steps, json, budget);
  } catch (e) {
    // A pod nested deeper than the stack allows.
    return { kind: 'Failed', problem: e instanceof Error ? e.message : String(e) };
  }
  if (!evaluation.ok) return { kind: 'OverBudget', budget };
  if (evaluation.values.length > 1 && !chargeMatches(evaluation.values, budget - evaluation.steps))
    return { kind: 'OverBudget', budget };
  return classifyMatches(evaluation.values);
}
