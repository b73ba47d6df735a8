/**
 * Naming JSONPath: compile an annotation value once, then select one string from a pod.
 *
 * Compiling refuses, as data never to run:
 * - a value longer than MAX_EXPRESSION_BYTES bytes (UTF-8), an empty value, a value with
 *   leading or trailing whitespace (nothing is trimmed: a YAML `|` block leaves a trailing
 *   line break, and the message says so), characters other than printable ASCII;
 * - anything outside the language of jsonpath-syntax.ts / jsonpath-filter.ts;
 * - an expression jsonpath-plus would split into different steps than that parser did, so
 *   what was checked is what runs.
 * Compilations (refusals too) are kept in a bounded LRU cache keyed by the expression, so
 * 10,000 pods sharing one annotation parse it once.
 *
 * Selecting runs jsonpath-plus with `eval: 'safe'` (never native eval) and reads its matches:
 * no match → NoMatch; matches that are all the same value count as one; several distinct
 * values → AmbiguousMatch; one value that is not a string → NotAString. A filter that reads a
 * missing field is false for that item, not an error. Filter evaluations per selection are
 * capped, so one pod cannot make an expression run for long.
 */
import { JSONPath } from 'jsonpath-plus';
import { BoundedCache } from './bounded-cache.js';
import { parseNamingPath } from './jsonpath-syntax.js';

export const MAX_EXPRESSION_BYTES = 4096;
/** Distinct expressions whose compilation is remembered. */
export const COMPILE_CACHE_CAPACITY = 1024;
/** Upper bound on filter evaluations in one selection. */
export const MAX_FILTER_EVALUATIONS = 100_000;
/** Filter evaluations × length of the longest filter, per selection. */
export const FILTER_WORK_BUDGET = 4_000_000;

/** A checked expression. Only compileJsonPath makes these; selectValue refuses any other. */
export interface CompiledJsonPath {
  readonly expression: string;
  readonly hasFilters: boolean;
  /** How many filter evaluations one selection may run before it is stopped. */
  readonly evaluationLimit: number;
}

// The record of what compileJsonPath issued: an object of the same shape made elsewhere has
// not been checked, so it is never run.
const issued = new WeakSet<CompiledJsonPath>();

function issue(expression: string, filters: readonly string[]): CompiledJsonPath {
  const longest = Math.max(1, ...filters.map((f) => f.length));
  const compiled: CompiledJsonPath = Object.freeze({
    expression,
    hasFilters: filters.length > 0,
    evaluationLimit: Math.min(MAX_FILTER_EVALUATIONS, Math.floor(FILTER_WORK_BUDGET / longest)),
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
  return { ok: true, path: issue(expression, parsed.path.filters) };
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

class EvaluationLimitReached extends Error {}

// jsonpath-plus assigns the current item to `sandbox._$_v` before each filter evaluation, and
// copies the sandbox's own enumerable properties into the evaluation context. An accessor
// there counts evaluations; its throw happens outside jsonpath-plus's ignoreEvalErrors guard.
function countingSandbox(limit: number): object {
  let current: unknown;
  let count = 0;
  const sandbox = {};
  Object.defineProperty(sandbox, '_$_v', {
    enumerable: true,
    get: () => current,
    set: (value: unknown) => {
      if (++count > limit) throw new EvaluationLimitReached();
      current = value;
    },
  });
  return sandbox;
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
export function selectValue(path: CompiledJsonPath, json: object): Selection {
  if (!issued.has(path))
    return { kind: 'Failed', problem: 'internal error: the expression was not compiled by compileJsonPath' };
  let matches: unknown;
  try {
    matches = JSONPath({
      path: path.expression,
      json,
      eval: 'safe',
      wrap: true,
      resultType: 'value',
      ignoreEvalErrors: true,
      ...(path.hasFilters ? { sandbox: countingSandbox(path.evaluationLimit) } : {}),
    });
  } catch (e) {
    if (e instanceof EvaluationLimitReached)
      return {
        kind: 'Failed',
        problem: `evaluating it against this pod took more than ${path.evaluationLimit} filter evaluations; narrow it (for example, avoid a filter after ..)`,
      };
    return { kind: 'Failed', problem: e instanceof Error ? e.message : String(e) };
  }
  return classifyMatches(Array.isArray(matches) ? matches : []);
}
