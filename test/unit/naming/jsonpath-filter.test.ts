import { describe, expect, it } from '@jest/globals';
import {
  checkFilter,
  blockedMemberProblem,
  MAX_FILTER_DEPTH,
} from '../../../operator/naming/jsonpath-filter.js';

function problem(body: string): string {
  const r = checkFilter(body);
  if (r.ok) throw new Error(`expected ${JSON.stringify(body)} to be refused`);
  return r.problem;
}

describe('filter grammar: accepted', () => {
  it.each([
    "@.name >= '0'",
    "@.name == 'EXTERNAL_DNS'",
    "@.name=='EXTERNAL_DNS'",
    '@.name === "app"',
    "@['name'] != 'x'",
    '@[0] == 1',
    '@.ports[0].containerPort == 4369',
    '@.a',
    '!@.a',
    '-@.a < 0',
    '@.length - 1 >= 0',
    '@.a + @.b == 3 * 2 % 5',
    "(@.a == 'x') || (@.b == 'y' && !(@.c))",
    "@root.metadata.name == 'web-0'",
    "@parent.name == 'x' && @property == 'env' && @parentProperty == 'spec' && @path != ''",
    '@.x == true || @.x == false || @.x == null',
    '@.x == 2.5',
    "@.value == 'a b.c/d:e=f+g-h_i'",
    '@.class == 1', // reserved words are plain field names after a dot
  ])('%s', (body) => {
    expect(checkFilter(body)).toMatchObject({ ok: true });
  });
});

describe('filter grammar: refused, with the reason', () => {
  it.each([
    ['', 'empty'],
    ['@.hook()', 'calling functions'],
    ["@['hook']()", 'calling functions'],
    ['(@.hook)()', 'calling functions'],
    ['@.env.pop()', 'calling functions'],
    ["'x'.length", 'only @ paths have fields'],
    ['(@.a).b', 'only @ paths have fields'],
    ['@.constructor', 'constructor'],
    ["@['constructor']", 'constructor'],
    ['@.__proto__', '__proto__'],
    ['@.__defineGetter__', '__defineGetter__'],
    ['@.prototype', 'prototype'],
    ['@.caller', 'caller'],
    ['@.arguments', 'arguments'],
    ['x', 'the name "x" is not allowed'],
    ['this', 'the name "this"'],
    ['globalThis', 'the name "globalThis"'],
    ['process', 'the name "process"'],
    ['typeof @.a', 'the name "typeof"'],
    ['void 0', 'the name "void"'],
    ['new Function', 'the name "new"'],
    ['_$_v', '$ is not allowed'],
    ['$.a', '$ is not available inside a filter'],
    ['@.a = 1', 'assignment'],
    ['@.a & 1', 'bitwise &'],
    ['@.a | 1', 'bitwise |'],
    ['~@.a', 'bitwise ~'],
    ['@.a ^ 1', 'bitwise ^'],
    ['@.a / 2', 'regular expressions'],
    ['/a+/', 'regular expressions'],
    ['@.a ? 1 : 2', 'conditional'],
    ['@.a, @.b', 'commas'],
    ['@.a; @.b', 'statements'],
    ['`x`', 'template'],
    ["'a\\'b'", 'escapes'],
    ["@.a == '(x)'", 'not allowed inside a quoted string'],
    ["@.a == '[0]'", 'not allowed inside a quoted string'],
    ["@.a == '?x'", 'not allowed inside a quoted string'],
    ["@.a == '@'", 'not allowed inside a quoted string'],
    ["@.a == 'ä'", 'U+00E4'],
    ["@.a == 'x", 'not closed'],
    ['{a: 1}', 'braces'],
    ['[1, 2]', 'commas'],
    ['[1]', 'expected a value'],
    ['@.a[?(@.b)]', 'nested filters'],
    ['@.a[?x]', 'conditional'],
    ['@.a[@.b]', 'inside [ ] a filter accepts only'],
    ['@.a[1.5]', 'inside [ ] a filter accepts only'],
    ['@.a[0', 'expected ]'],
    ['(@.a', 'expected )'],
    ['@.a)', 'unexpected'],
    ['@.a == 1 == 2', 'chained comparisons'],
    ['@foo', 'unknown name @foo'],
    ['@rooty', 'unknown name @rooty'],
    ['@.', 'expected a field name'],
    ['@.1a', 'a field name after . starts with a letter'],
    ['@.a.1', 'a field name after . starts with a letter'],
    ['.5', 'must not start with "."'],
    ['1e5', 'malformed number'],
    ['0x10', 'malformed number'],
    ['1.2.3', 'malformed number'],
    ['@.a\n', 'U+000A'],
    ['@.a #', '# is not allowed'],
    ['@.a ==', 'expected a value but found the end'],
  ])('%j → %s', (body, expected) => {
    expect(problem(body)).toContain(expected);
  });

  it('reports where the problem is', () => {
    expect(checkFilter("@.name == 'x' && @.hook()")).toEqual({
      ok: false,
      problem: 'calling functions is not allowed',
      at: 23,
    });
  });

  it('limits nesting', () => {
    const deep = (n: number) => '('.repeat(n) + '@.a' + ')'.repeat(n);
    expect(checkFilter(deep(MAX_FILTER_DEPTH))).toMatchObject({ ok: true });
    expect(problem(deep(MAX_FILTER_DEPTH + 1))).toContain('nested too deeply');
    expect(problem('!'.repeat(MAX_FILTER_DEPTH + 1) + '@.a')).toContain('nested too deeply');
  });
});

describe('blockedMemberProblem', () => {
  it('refuses JavaScript internals and allows data names', () => {
    for (const name of [
      'constructor',
      'prototype',
      '__proto__',
      '__anything',
      'caller',
      'callee',
      'arguments',
    ])
      expect(blockedMemberProblem(name)).toContain('JavaScript internals');
    for (const name of ['name', 'value', 'values', 'keys', 'length', 'toString_', '_private', 'proto'])
      expect(blockedMemberProblem(name)).toBeUndefined();
  });
});
