/**
 * The grammar of a filter `[?( … )]` inside a naming JSONPath. jsonpath-plus's "safe" evaluator
 * refuses the Function constructor, but it still calls any function it can reach — methods of
 * the pod's own arrays and strings included (`@.env.pop()` empties an env list of the pod
 * object the operator shares with its cache). So a filter is checked here first, and only
 * these forms pass:
 *
 * - values: `@` (the current item), `@root` (the pod), `@parent`, `@property`,
 *   `@parentProperty`, `@path`, each followed by any number of `.name` or `['name']` / `[0]`
 *   member steps; string literals in '…' or "…" (letters, digits, space and `. _ / : = + -`,
 *   no escapes); non-negative decimal numbers; `true`, `false`, `null`;
 * - operators: `== != === !== < <= > >=` (one per comparison), `&& ||`, `!`, unary and binary
 *   `-`, `+ * %`, and parentheses for grouping.
 *
 * Nothing else is accepted: no calls, no assignment, no other names (so no globals), no `?:`,
 * no commas or semicolons, no regular expressions, no templates, no escapes, no nested
 * filters, and no member named `constructor`, `prototype`, `caller`, `callee`, `arguments` or
 * starting with `__`. The accepted language is small enough that jsonpath-plus's own parser
 * (jsep) reads it the same way; the string alphabet excludes the brackets and parentheses
 * jsonpath-plus would otherwise take for a nested path inside a string.
 */

/** Which value an `@` name stands for. */
export type AtName = '' | 'root' | 'parent' | 'property' | 'parentProperty' | 'path';

/** A checked filter, as a tree the evaluator (jsonpath-eval.ts) walks. */
export type FilterNode =
  | { t: 'literal'; value: string | number | boolean | null }
  /** `@name` followed by member steps; computed steps are kept as the key's text. */
  | { t: 'ref'; at: AtName; members: string[] }
  | { t: 'unary'; op: '!' | '-'; arg: FilterNode }
  | { t: 'binary'; op: string; left: FilterNode; right: FilterNode };

export type FilterCheck = { ok: true; ast: FilterNode } | { ok: false; problem: string; at: number };

/** Deepest nesting of parentheses and unary operators a filter may have. */
export const MAX_FILTER_DEPTH = 32;

const AT_NAMES = new Set(['', 'root', 'parent', 'property', 'parentProperty', 'path']);
const BLOCKED_MEMBERS = new Set(['constructor', 'prototype', 'caller', 'callee', 'arguments']);
const STRING_CHAR = /^[A-Za-z0-9 ._/:=+-]$/;
const IDENT_START = /^[A-Za-z_]$/;
const IDENT_CHAR = /^[A-Za-z0-9_]$/;
const DIGIT = /^[0-9]$/;
const COMPARISONS = new Set(['==', '!=', '===', '!==', '<', '<=', '>', '>=']);
const OPERATORS = ['===', '!==', '==', '!=', '<=', '>=', '&&', '||', '<', '>', '!', '+', '-', '*', '%'];

/** Why a member name is refused, or undefined when it may be read. */
export function blockedMemberProblem(name: string): string | undefined {
  if (BLOCKED_MEMBERS.has(name) || name.startsWith('__'))
    return `${JSON.stringify(name)} is not allowed as a field name: it reaches JavaScript internals, not pod data`;
  return undefined;
}

const REFUSED_CHARS: Record<string, string> = {
  '=': 'assignment (=) is not allowed; compare with == or ===',
  '&': 'bitwise & is not allowed; use && for "and"',
  '|': 'bitwise | is not allowed; use || for "or"',
  '^': 'bitwise ^ is not allowed',
  '~': 'bitwise ~ is not allowed',
  '/': 'division and regular expressions are not allowed',
  '?': 'the conditional operator ?: is not allowed',
  ':': 'the conditional operator ?: is not allowed',
  ',': 'commas (sequences, argument lists, arrays) are not allowed',
  ';': 'several statements are not allowed',
  '`': 'template literals are not allowed',
  $: '$ is not available inside a filter; use @root for the pod',
  '\\': 'backslashes (escapes) are not allowed',
  '{': 'braces (objects, blocks) are not allowed',
  '}': 'braces (objects, blocks) are not allowed',
  '#': '# is not allowed',
};

type TokenKind = 'at' | 'dot' | '[' | ']' | '(' | ')' | 'string' | 'number' | 'ident' | 'op' | 'end';

interface Token {
  kind: TokenKind;
  text: string;
  at: number;
}

class FilterError extends Error {
  constructor(
    readonly problem: string,
    readonly at: number,
  ) {
    super(problem);
  }
}

function describeChar(ch: string): string {
  const code = ch.codePointAt(0) ?? 0;
  const hex = `U+${code.toString(16).toUpperCase().padStart(4, '0')}`;
  return code >= 0x20 && code < 0x7f ? `${JSON.stringify(ch)}` : hex;
}

function tokenize(body: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < body.length) {
    const ch = body[i]!;
    const start = i;
    if (ch === ' ' || ch === '\t') {
      i++;
    } else if (ch === '@') {
      i++;
      while (i < body.length && /^[A-Za-z0-9_$]$/.test(body[i]!)) i++;
      const name = body.slice(start + 1, i);
      if (!AT_NAMES.has(name))
        throw new FilterError(
          `unknown name @${name}; only @, @root, @parent, @property, @parentProperty and @path exist`,
          start,
        );
      tokens.push({ kind: 'at', text: body.slice(start, i), at: start });
    } else if (ch === '.') {
      if (i + 1 < body.length && DIGIT.test(body[i + 1]!)) {
        const previous = tokens[tokens.length - 1]?.kind;
        throw new FilterError(
          previous === 'at' || previous === ']' || previous === 'ident'
            ? "a field name after . starts with a letter or _; write [0] for an index or ['1a'] for such a name"
            : 'a number must not start with "."; write 0.5, not .5',
          start,
        );
      }
      tokens.push({ kind: 'dot', text: '.', at: start });
      i++;
    } else if (ch === '[' || ch === ']' || ch === '(' || ch === ')') {
      tokens.push({ kind: ch, text: ch, at: start });
      i++;
    } else if (ch === "'" || ch === '"') {
      i++;
      while (i < body.length && body[i] !== ch) {
        const c = body[i]!;
        if (c === '\\') throw new FilterError('escapes (\\) are not allowed inside a quoted string', i);
        if (!STRING_CHAR.test(c))
          throw new FilterError(
            `${describeChar(c)} is not allowed inside a quoted string in a filter (allowed: letters, digits, space and . _ / : = + -)`,
            i,
          );
        i++;
      }
      if (i >= body.length) throw new FilterError('a quoted string is not closed', start);
      i++;
      tokens.push({ kind: 'string', text: body.slice(start, i), at: start });
    } else if (DIGIT.test(ch)) {
      while (i < body.length && DIGIT.test(body[i]!)) i++;
      if (body[i] === '.' && i + 1 < body.length && DIGIT.test(body[i + 1]!)) {
        i++;
        while (i < body.length && DIGIT.test(body[i]!)) i++;
      }
      if (i < body.length && /^[A-Za-z0-9_$.]$/.test(body[i]!))
        throw new FilterError('malformed number (only plain decimals like 3 or 2.5 are allowed)', start);
      tokens.push({ kind: 'number', text: body.slice(start, i), at: start });
    } else if (IDENT_START.test(ch)) {
      while (i < body.length && IDENT_CHAR.test(body[i]!)) i++;
      if (body[i] === '$') throw new FilterError('$ is not allowed in names', i);
      tokens.push({ kind: 'ident', text: body.slice(start, i), at: start });
    } else {
      const op = OPERATORS.find((o) => body.startsWith(o, i));
      if (op !== undefined) {
        tokens.push({ kind: 'op', text: op, at: start });
        i += op.length;
      } else if (ch === '?' && body[i + 1] === '(') {
        throw new FilterError('nested filters [?( … )] are not allowed inside a filter', start);
      } else {
        const refused = REFUSED_CHARS[ch];
        throw new FilterError(refused ?? `${describeChar(ch)} is not allowed in a filter`, start);
      }
    }
  }
  tokens.push({ kind: 'end', text: '', at: body.length });
  return tokens;
}

class Parser {
  private pos = 0;
  constructor(private readonly tokens: Token[]) {}

  private peek(): Token {
    return this.tokens[this.pos]!;
  }

  private next(): Token {
    const t = this.tokens[this.pos]!;
    if (t.kind !== 'end') this.pos++;
    return t;
  }

  private isOp(...ops: string[]): boolean {
    const t = this.peek();
    return t.kind === 'op' && ops.includes(t.text);
  }

  parseAll(): FilterNode {
    if (this.peek().kind === 'end') throw new FilterError('the filter is empty', 0);
    const ast = this.parseOr(0);
    const t = this.peek();
    if (t.kind !== 'end') throw new FilterError(`unexpected ${describeToken(t)}`, t.at);
    return ast;
  }

  private parseOr(depth: number): FilterNode {
    let left = this.parseAnd(depth);
    while (this.isOp('||')) {
      this.next();
      left = { t: 'binary', op: '||', left, right: this.parseAnd(depth) };
    }
    return left;
  }

  private parseAnd(depth: number): FilterNode {
    let left = this.parseComparison(depth);
    while (this.isOp('&&')) {
      this.next();
      left = { t: 'binary', op: '&&', left, right: this.parseComparison(depth) };
    }
    return left;
  }

  private parseComparison(depth: number): FilterNode {
    const left = this.parseAdditive(depth);
    const t = this.peek();
    if (t.kind === 'op' && COMPARISONS.has(t.text)) {
      this.next();
      const right = this.parseAdditive(depth);
      const u = this.peek();
      if (u.kind === 'op' && COMPARISONS.has(u.text))
        throw new FilterError('chained comparisons are not allowed; join them with &&', u.at);
      return { t: 'binary', op: t.text, left, right };
    }
    return left;
  }

  private parseAdditive(depth: number): FilterNode {
    let left = this.parseMultiplicative(depth);
    while (this.isOp('+', '-')) {
      const op = this.next().text;
      left = { t: 'binary', op, left, right: this.parseMultiplicative(depth) };
    }
    return left;
  }

  private parseMultiplicative(depth: number): FilterNode {
    let left = this.parseUnary(depth);
    while (this.isOp('*', '%')) {
      const op = this.next().text;
      left = { t: 'binary', op, left, right: this.parseUnary(depth) };
    }
    return left;
  }

  private parseUnary(depth: number): FilterNode {
    if (this.isOp('!', '-')) {
      const t = this.next();
      if (depth + 1 > MAX_FILTER_DEPTH) throw new FilterError('the filter is nested too deeply', t.at);
      return { t: 'unary', op: t.text as '!' | '-', arg: this.parseUnary(depth + 1) };
    }
    return this.parsePrimary(depth);
  }

  private parsePrimary(depth: number): FilterNode {
    const t = this.next();
    let node: FilterNode;
    switch (t.kind) {
      case '(': {
        if (depth + 1 > MAX_FILTER_DEPTH) throw new FilterError('the filter is nested too deeply', t.at);
        node = this.parseOr(depth + 1);
        const close = this.next();
        if (close.kind !== ')')
          throw new FilterError(`expected ) but found ${describeToken(close)}`, close.at);
        break;
      }
      case 'string':
        node = { t: 'literal', value: t.text.slice(1, -1) };
        break;
      case 'number':
        node = { t: 'literal', value: parseFloat(t.text) };
        break;
      case 'ident':
        if (t.text !== 'true' && t.text !== 'false' && t.text !== 'null')
          throw new FilterError(
            `the name ${JSON.stringify(t.text)} is not allowed: a filter may only refer to data through @ (for example @.${t.text})`,
            t.at,
          );
        node = { t: 'literal', value: t.text === 'null' ? null : t.text === 'true' };
        break;
      case 'at':
        node = { t: 'ref', at: t.text.slice(1) as AtName, members: this.parseMembers() };
        break;
      default:
        throw new FilterError(`expected a value but found ${describeToken(t)}`, t.at);
    }
    const after = this.peek();
    if (after.kind === '(') throw new FilterError('calling functions is not allowed', after.at);
    if (t.kind !== 'at' && (after.kind === 'dot' || after.kind === '['))
      throw new FilterError('only @ paths have fields; a literal or a group has none', after.at);
    return node;
  }

  private parseMembers(): string[] {
    const members: string[] = [];
    for (;;) {
      const t = this.peek();
      if (t.kind === 'dot') {
        this.next();
        const name = this.next();
        if (name.kind !== 'ident')
          throw new FilterError(`expected a field name after "." but found ${describeToken(name)}`, name.at);
        const blocked = blockedMemberProblem(name.text);
        if (blocked) throw new FilterError(blocked, name.at);
        members.push(name.text);
      } else if (t.kind === '[') {
        this.next();
        const key = this.next();
        if (key.kind === 'string') {
          const blocked = blockedMemberProblem(key.text.slice(1, -1));
          if (blocked) throw new FilterError(blocked, key.at);
          members.push(key.text.slice(1, -1));
        } else if (key.kind !== 'number' || key.text.includes('.')) {
          throw new FilterError(
            `inside [ ] a filter accepts only a quoted field name or an index like [0], not ${describeToken(key)}`,
            key.at,
          );
        } else {
          // jsep reads the index as a number, and a member key is its String().
          members.push(String(parseFloat(key.text)));
        }
        const close = this.next();
        if (close.kind !== ']')
          throw new FilterError(`expected ] but found ${describeToken(close)}`, close.at);
      } else {
        return members;
      }
    }
  }
}

function describeToken(t: Token): string {
  return t.kind === 'end' ? 'the end of the filter' : JSON.stringify(t.text);
}

/** Whether `body` (the text between `[?(` and `)]`) is in the accepted filter language. */
export function checkFilter(body: string): FilterCheck {
  try {
    return { ok: true, ast: new Parser(tokenize(body)).parseAll() };
  } catch (e) {
    if (e instanceof FilterError) return { ok: false, problem: e.problem, at: e.at };
    throw e;
  }
}
