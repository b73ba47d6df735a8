/**
 * The JSONPath language a naming annotation may use: a plain subset of JSONPath, checked by
 * this strict parser before jsonpath-plus ever sees the expression.
 *
 * - It starts with `$`, the pod.
 * - Steps: `.name` (letters, digits, `_`, `-`), `.*`, `['name']` / `["name"]` (letters,
 *   digits and `. _ / -`, so label and annotation keys fit), `['a','b']` (distinct names),
 *   `[0]`, `[0,2]` (distinct non-negative indexes), `[*]`, slices `[start:end:step]`
 *   (`[-1:]` is the last element), filters `[?( … )]` (see jsonpath-filter.ts), and at most
 *   one recursive descent `..` followed by a name, `*` or a bracket.
 * - No whitespace outside filters, no escapes, printable ASCII only.
 *
 * Refused, with the reason: jsonpath-plus's script steps `[( … )]` (their result is read as
 * more path, so pod data could smuggle a filter in), the parent `^` and property-name `~`
 * operators, type selectors `@string()`, backtick escapes, negative indexes, repeated
 * union members and a second `..` (the last three let a short expression multiply the work of
 * one evaluation), and field names that reach JavaScript internals (`constructor`,
 * `__proto__`, …).
 *
 * The parser returns the steps in jsonpath-plus's own notation, so the caller can check that
 * jsonpath-plus splits the expression the same way.
 */
import { blockedMemberProblem, checkFilter, type FilterNode } from './jsonpath-filter.js';

/**
 * One step after `$`, as the evaluator (jsonpath-eval.ts) runs it. `text` is the step as
 * jsonpath-plus writes it (a field of that exact name wins over the step's meaning right after
 * `*` or a plain name — jsonpath-plus's "literal priority", kept so results stay the same).
 */
export type Step =
  /** `.name`, `['name']`, `[0]`: a field (or index) of this name. */
  | { kind: 'name'; name: string; text: string }
  /** `['a','b']` */
  | { kind: 'names'; names: string[]; text: string }
  /** `[0,2]` */
  | { kind: 'indexes'; names: string[]; text: string }
  | { kind: 'wildcard'; text: string }
  | { kind: 'descent'; text: string }
  | { kind: 'slice'; start?: number; end?: number; step?: number; text: string }
  | { kind: 'filter'; ast: FilterNode; usesPath: boolean; text: string };

export interface ParsedPath {
  /** The steps as jsonpath-plus's `toPathArray` writes them, starting with '$'. */
  segments: string[];
  /** The bodies of the filters, in order. */
  filters: string[];
  /** The steps after `$`, in order. */
  steps: Step[];
}

export type PathParse = { ok: true; path: ParsedPath } | { ok: false; problem: string; at: number };

const DOT_NAME_CHAR = /^[A-Za-z0-9_-]$/;
const QUOTED_NAME_CHAR = /^[A-Za-z0-9._/-]$/;
const DIGIT = /^[0-9]$/;

class PathError extends Error {
  constructor(
    readonly problem: string,
    readonly at: number,
  ) {
    super(problem);
  }
}

const PATH_LEVEL_REFUSALS: Record<string, string> = {
  '^': 'the parent operator ^ is not supported',
  '~': 'the property-name operator ~ is not supported',
  '@': 'type selectors such as @string() are not supported outside a filter',
  '`': "backtick escapes are not supported; use ['name']",
  ' ': 'whitespace is only allowed inside a filter [?( … )]',
  '\t': 'whitespace is only allowed inside a filter [?( … )]',
  '(': 'parentheses are only allowed inside a filter [?( … )]',
  ',': "a union needs brackets: ['a','b'] or [0,1]",
  $: '$ may only start the expression',
};

function refuse(ch: string, at: number, fallback: string): never {
  throw new PathError(PATH_LEVEL_REFUSALS[ch] ?? fallback, at);
}

function checkName(name: string, at: number): void {
  const blocked = blockedMemberProblem(name);
  if (blocked) throw new PathError(blocked, at);
}

class PathParser {
  private i = 1; // after '$'
  private readonly segments: string[] = ['$'];
  private readonly filters: string[] = [];
  private readonly steps: Step[] = [];
  private descents = 0;

  constructor(private readonly text: string) {}

  parse(): ParsedPath {
    const t = this.text;
    while (this.i < t.length) {
      const ch = t[this.i]!;
      if (ch === '.' && t[this.i + 1] === '.') {
        const at = this.i;
        if (++this.descents > 1)
          throw new PathError('at most one recursive descent (..) is allowed in an expression', at);
        this.i += 2;
        this.segments.push('..');
        this.steps.push({ kind: 'descent', text: '..' });
        const next = t[this.i];
        if (next === undefined) throw new PathError('the expression ends with ..; name what to look for', at);
        if (next === '[') this.bracket();
        else if (next === '*') this.wildcard();
        else if (DOT_NAME_CHAR.test(next)) this.dotName();
        else refuse(next, this.i, `expected a name, * or [ after .. but found ${JSON.stringify(next)}`);
      } else if (ch === '.') {
        this.i++;
        const next = t[this.i];
        if (next === undefined) throw new PathError('the expression ends with .; name a field', this.i - 1);
        if (next === '*') this.wildcard();
        else if (DOT_NAME_CHAR.test(next)) this.dotName();
        else
          refuse(
            next,
            this.i,
            `expected a field name or * after . but found ${JSON.stringify(next)}; for other names write ['name']`,
          );
      } else if (ch === '[') {
        this.bracket();
      } else {
        refuse(ch, this.i, `unexpected ${JSON.stringify(ch)}; a step starts with . or [`);
      }
    }
    return { segments: this.segments, filters: this.filters, steps: this.steps };
  }

  private wildcard(): void {
    this.i++;
    this.segments.push('*');
    this.steps.push({ kind: 'wildcard', text: '*' });
  }

  private dotName(): void {
    const t = this.text;
    const start = this.i;
    while (this.i < t.length && DOT_NAME_CHAR.test(t[this.i]!)) this.i++;
    const name = t.slice(start, this.i);
    checkName(name, start);
    this.segments.push(name);
    this.steps.push({ kind: 'name', name, text: name });
  }

  private bracket(): void {
    const t = this.text;
    const open = this.i;
    this.i++; // '['
    const ch = t[this.i];
    if (ch === undefined) throw new PathError('[ is not closed', open);
    if (ch === '*') {
      this.wildcard();
    } else if (ch === '?') {
      this.filter(open);
      return; // filter() consumes the closing ']'
    } else if (ch === '(') {
      throw new PathError(
        'script steps [( … )] are not allowed: their result is read as more path; use a filter [?( … )] or a slice such as [-1:]',
        this.i,
      );
    } else if (ch === "'" || ch === '"') {
      this.quotedNames();
    } else if (DIGIT.test(ch) || ch === '-' || ch === ':') {
      this.indexes();
    } else {
      refuse(
        ch,
        this.i,
        `unexpected ${JSON.stringify(ch)} after [; expected *, a quoted name, an index, a slice or a filter ?( … )`,
      );
    }
    if (t[this.i] !== ']') {
      if (this.i >= t.length) throw new PathError('[ is not closed', open);
      refuse(t[this.i]!, this.i, `expected ] but found ${JSON.stringify(t[this.i])}`);
    }
    this.i++;
  }

  private filter(open: number): void {
    const t = this.text;
    if (t[this.i + 1] !== '(') throw new PathError('a filter is written [?( … )]', this.i);
    const bodyStart = this.i + 2;
    let depth = 1;
    let j = bodyStart;
    while (j < t.length) {
      const c = t[j]!;
      if (c === "'" || c === '"') {
        const close = t.indexOf(c, j + 1);
        const escape = t.indexOf('\\', j + 1);
        if (escape >= 0 && (close < 0 || escape < close))
          throw new PathError('in the filter: escapes (\\) are not allowed inside a quoted string', escape);
        if (close < 0) throw new PathError('a quoted string is not closed', j);
        j = close + 1;
        continue;
      }
      if (c === '(') depth++;
      else if (c === ')' && --depth === 0) break;
      j++;
    }
    if (j >= t.length || j + 1 >= t.length) throw new PathError('the filter [?( is not closed with )]', open);
    if (t[j + 1] !== ']') throw new PathError('a filter must end with )]', j + 1);
    const body = t.slice(bodyStart, j);
    const check = checkFilter(body);
    if (!check.ok) throw new PathError(`in the filter: ${check.problem}`, bodyStart + check.at);
    this.filters.push(body);
    this.segments.push(`?(${body})`);
    this.steps.push({ kind: 'filter', ast: check.ast, usesPath: body.includes('@path'), text: `?(${body})` });
    this.i = j + 2;
  }

  private quotedNames(): void {
    const t = this.text;
    const start = this.i;
    const names: string[] = [];
    for (;;) {
      const quote = t[this.i]!;
      const nameStart = this.i + 1;
      let j = nameStart;
      while (j < t.length && t[j] !== quote) {
        if (!QUOTED_NAME_CHAR.test(t[j]!))
          throw new PathError(
            `${JSON.stringify(t[j])} is not allowed in a quoted name (allowed: letters, digits and . _ / -)`,
            j,
          );
        j++;
      }
      if (j >= t.length) throw new PathError('a quoted name is not closed', this.i);
      const name = t.slice(nameStart, j);
      if (name.length === 0) throw new PathError('a quoted name is empty', this.i);
      // jsonpath-plus reads a bare ".." as recursive descent, even from quotes.
      if (/^\.+$/.test(name)) throw new PathError('a name made only of dots is not allowed', nameStart);
      checkName(name, nameStart);
      if (names.includes(name))
        throw new PathError(`${JSON.stringify(name)} appears twice in the union`, nameStart);
      names.push(name);
      this.i = j + 1;
      if (t[this.i] !== ',') break;
      this.i++;
      if (t[this.i] !== "'" && t[this.i] !== '"')
        throw new PathError('a union of names lists quoted names only, without spaces', this.i);
    }
    // jsonpath-plus keeps a union quoted and unwraps a single name.
    const text = names.length === 1 ? names[0]! : t.slice(start, this.i);
    this.segments.push(text);
    this.steps.push(names.length === 1 ? { kind: 'name', name: text, text } : { kind: 'names', names, text });
  }

  private indexes(): void {
    const t = this.text;
    const start = this.i;
    while (this.i < t.length && /^[0-9:,-]$/.test(t[this.i]!)) this.i++;
    const inner = t.slice(start, this.i);
    if (inner.includes(':')) {
      if (!/^(-?[0-9]+)?:(-?[0-9]+)?(:(-?[0-9]+)?)?$/.test(inner))
        throw new PathError(
          `malformed slice ${JSON.stringify(inner)}; write [start:end] or [start:end:step]`,
          start,
        );
      const [from, to, step] = inner.split(':').map((n) => (n === '' ? undefined : Number(n)));
      this.steps.push({
        kind: 'slice',
        text: inner,
        ...(from !== undefined ? { start: from } : {}),
        ...(to !== undefined ? { end: to } : {}),
        ...(step !== undefined ? { step } : {}),
      });
    } else {
      const parts = inner.split(',');
      const seen = new Set<string>();
      for (const part of parts) {
        if (part.startsWith('-'))
          throw new PathError(
            `negative index ${JSON.stringify(part)} is not supported; use a slice such as [-1:] for the last element`,
            start,
          );
        if (!/^(0|[1-9][0-9]*)$/.test(part))
          throw new PathError(`malformed index ${JSON.stringify(part)}`, start);
        if (seen.has(part)) throw new PathError(`index ${part} appears twice in the union`, start);
        seen.add(part);
      }
      this.steps.push(
        parts.length === 1
          ? { kind: 'name', name: inner, text: inner }
          : { kind: 'indexes', names: parts, text: inner },
      );
    }
    this.segments.push(inner);
  }
}

/** Parses a naming JSONPath; refusals say what is wrong and where (0-based offset). */
export function parseNamingPath(expression: string): PathParse {
  if (!expression.startsWith('$')) {
    const kubectl = /^\{(\.[^{}]*)\}$/.exec(expression);
    const hint = kubectl
      ? `it looks like kubectl's {.field} template syntax; write ${JSON.stringify(`$${kubectl[1]}`)} instead`
      : expression.startsWith('{')
        ? "it looks like kubectl's {.field} template syntax; write $.field instead"
        : 'it must start with $ (the pod), as in $.status.podIP';
    return { ok: false, problem: hint, at: 0 };
  }
  try {
    return { ok: true, path: new PathParser(expression).parse() };
  } catch (e) {
    if (e instanceof PathError) return { ok: false, problem: e.problem, at: e.at };
    throw e;
  }
}
