import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { JSONPath } from 'jsonpath-plus';
import { parseNamingPath } from '../../../operator/naming/jsonpath-syntax.js';
import { blockedMemberProblem } from '../../../operator/naming/jsonpath-filter.js';
import { SEED_HOST_EXPRESSION } from './fixtures.js';

function segments(expression: string): string[] {
  const r = parseNamingPath(expression);
  if (!r.ok) throw new Error(`refused ${expression}: ${r.problem}`);
  return r.path.segments;
}

function refusal(expression: string): { problem: string; at: number } {
  const r = parseNamingPath(expression);
  if (r.ok) throw new Error(`expected ${JSON.stringify(expression)} to be refused`);
  return r;
}

describe('parseNamingPath: accepted expressions, in jsonpath-plus notation', () => {
  it.each([
    [
      SEED_HOST_EXPRESSION,
      ['$', 'spec', 'containers', "?(@.name >= '0')", 'env', "?(@.name == 'EXTERNAL_DNS')", 'value'],
    ],
    ['$', ['$']],
    ['$.status.podIP', ['$', 'status', 'podIP']],
    ["$.metadata.labels['app.kubernetes.io/name']", ['$', 'metadata', 'labels', 'app.kubernetes.io/name']],
    [
      '$.metadata.labels["statefulset.kubernetes.io/pod-name"]',
      ['$', 'metadata', 'labels', 'statefulset.kubernetes.io/pod-name'],
    ],
    ["$['a','b'].c", ['$', "'a','b'", 'c']],
    ['$.a[0,2]', ['$', 'a', '0,2']],
    ['$.a[*].b', ['$', 'a', '*', 'b']],
    ['$.a.*', ['$', 'a', '*']],
    ['$.a[-1:]', ['$', 'a', '-1:']],
    ['$.a[1:5:2]', ['$', 'a', '1:5:2']],
    ['$.a[::-1]', ['$', 'a', '::-1']],
    ["$..env[?(@.name=='X')].value", ['$', '..', 'env', "?(@.name=='X')", 'value']],
    ['$..[0]', ['$', '..', '0']],
    ['$..*', ['$', '..', '*']],
    ['$.a-b.c_d.0', ['$', 'a-b', 'c_d', '0']],
    ["$.a[?((@.a == 'x') || (@.b == 'y'))]", ['$', 'a', "?((@.a == 'x') || (@.b == 'y'))"]],
  ])('%s', (expression, expected) => {
    expect(segments(expression)).toEqual(expected);
    // The notation is jsonpath-plus's own: the two agree on every accepted expression.
    expect(JSONPath.toPathArray(expression)).toEqual(expected);
  });

  it('collects the filter bodies', () => {
    const r = parseNamingPath(SEED_HOST_EXPRESSION);
    expect(r.ok && r.path.filters).toEqual(["@.name >= '0'", "@.name == 'EXTERNAL_DNS'"]);
  });
});

describe('parseNamingPath: refused expressions, with reason and position', () => {
  it.each([
    ['status.podIP', 'must start with $', 0],
    ['{.status.podIP}', 'write "$.status.podIP" instead', 0],
    ['{range .items}', "kubectl's {.field} template syntax", 0],
    ['$.a[(@.length-1)]', 'script steps [( … )] are not allowed', 4],
    ['$.a^', 'parent operator ^', 3],
    ['$.a~', 'property-name operator ~', 3],
    ['$.a.b@string()', 'type selectors', 5],
    ['$.`a', 'backtick', 2],
    ['$.a b', 'whitespace', 3],
    ["$['a', 'b']", 'quoted names only, without spaces', 6],
    ['$.a,b', 'union needs brackets', 3],
    ['$.a.$', '$ may only start', 4],
    ['$.a[-1]', 'negative index', 4],
    ['$.a[01]', 'malformed index', 4],
    ['$.a[0,0]', 'index 0 appears twice', 4],
    ["$['a','a']", '"a" appears twice', 7],
    ['$.a[1:2,3]', 'malformed slice', 4],
    ['$.a[1:2:3:4]', 'malformed slice', 4],
    ['$..a..b', 'at most one recursive descent', 4],
    ['$..', 'ends with ..', 1],
    ['$.', 'ends with .', 1],
    ['$...a', 'expected a name, * or [ after ..', 3],
    ['$.a[', '[ is not closed', 3],
    ['$.a[0', '[ is not closed', 3],
    ['$.a[*', '[ is not closed', 3],
    ['$.a[?(@.b)', 'not closed', 3],
    ['$.a[?(@.b) ]', 'must end with )]', 10],
    ['$.a[?@.b]', 'written [?( … )]', 4],
    ["$.a[?(@.b == 'x)]", 'quoted string is not closed', 13],
    ["$.a[?(@.b == 'x\\'y')]", 'escapes', 15],
    ["$.a[?(@.b == 'a,b')]", 'in the filter:', 15],
    ['$.a[?(@.b.pop())]', 'in the filter: calling functions', 13],
    ["$['a b']", 'not allowed in a quoted name', 4],
    ["$['']", 'quoted name is empty', 2],
    ["$['..']", 'only of dots', 3],
    ["$['?(@.x)']", 'not allowed in a quoted name', 3],
    ["$['a'", '[ is not closed', 1],
    ["$['a", 'quoted name is not closed', 2],
    ['$.constructor', 'constructor', 2],
    ["$['__proto__']", '__proto__', 3],
    ['$..prototype', 'prototype', 3],
    ['$.a[b]', 'unexpected "b" after [', 4],
    ['$x', 'a step starts with . or [', 1],
  ])('%j → %s', (expression, expected, at) => {
    const r = refusal(expression);
    expect(r.problem).toContain(expected);
    expect(r.at).toBe(at);
  });
});

// Expressions built from the accepted grammar, to check that jsonpath-plus splits every one
// of them exactly as the strict parser does.
const allowed = (n: string) => blockedMemberProblem(n) === undefined;
const name = fc.stringMatching(/^[A-Za-z0-9_-]{1,6}$/).filter(allowed);
const quotedName = fc.stringMatching(/^[A-Za-z0-9._/-]{1,8}$/).filter((n) => !/^\.+$/.test(n) && allowed(n));
const member = fc.oneof(
  name.filter((n) => /^[A-Za-z_]/.test(n) && /^[A-Za-z0-9_]+$/.test(n)).map((n) => `.${n}`),
  fc.nat(20).map((k) => `[${k}]`),
  quotedName.filter((n) => /^[A-Za-z0-9 ._/:=+-]+$/.test(n)).map((n) => `['${n}']`),
);
const atPath = fc
  .tuple(fc.constantFrom('@', '@root', '@parent'), fc.array(member, { maxLength: 3 }))
  .map(([a, ms]) => a + ms.join(''));
const literal = fc.oneof(
  fc.stringMatching(/^[A-Za-z0-9 ._/:=+-]{0,8}$/).map((s) => `'${s}'`),
  fc.stringMatching(/^[A-Za-z0-9 ._/:=+-]{0,8}$/).map((s) => `"${s}"`),
  fc.nat(999).map(String),
  fc.constantFrom('true', 'false', 'null'),
);
const comparison = fc
  .tuple(atPath, fc.constantFrom('==', '!=', '===', '!==', '<', '<=', '>', '>='), literal)
  .map(([l, op, r]) => `${l} ${op} ${r}`);
const filterBody = fc
  .array(
    fc.oneof(
      comparison,
      atPath,
      comparison.map((c) => `(${c})`),
      atPath.map((a) => `!${a}`),
    ),
    {
      minLength: 1,
      maxLength: 3,
    },
  )
  .chain((parts) => fc.constantFrom(' && ', ' || ', '&&').map((j) => parts.join(j)));
const bracket = fc.oneof(
  fc.constant('[*]'),
  fc.uniqueArray(fc.nat(30), { minLength: 1, maxLength: 3 }).map((ks) => `[${ks.join(',')}]`),
  fc
    .tuple(
      fc.option(fc.integer({ min: -5, max: 5 })),
      fc.option(fc.integer({ min: -5, max: 5 })),
      fc.option(fc.integer({ min: -3, max: 3 })),
    )
    .map(([a, b, c]) => `[${a ?? ''}:${b ?? ''}${c === null ? '' : `:${c}`}]`),
  fc
    .uniqueArray(quotedName, { minLength: 1, maxLength: 3 })
    .chain((ns) => fc.constantFrom("'", '"').map((q) => `[${ns.map((n) => `${q}${n}${q}`).join(',')}]`)),
  filterBody.map((b) => `[?(${b})]`),
);
const step = fc.oneof(
  name.map((n) => `.${n}`),
  fc.constant('.*'),
  bracket,
);
const expression = fc
  .tuple(
    fc.array(step, { maxLength: 5 }),
    fc.option(fc.tuple(fc.nat(5), fc.oneof(name, fc.constant('*'), bracket))),
  )
  .map(([steps, descent]) => {
    if (!descent) return `$${steps.join('')}`;
    const [at, target] = descent;
    const k = Math.min(at, steps.length);
    return `$${steps.slice(0, k).join('')}..${target}${steps.slice(k).join('')}`;
  });

describe('parseNamingPath and jsonpath-plus agree', () => {
  it('on every expression of the accepted grammar (property)', () => {
    fc.assert(
      fc.property(expression, (e) => {
        const r = parseNamingPath(e);
        if (!r.ok) throw new Error(`refused ${e}: ${r.problem}`);
        expect(r.path.segments).toEqual(JSONPath.toPathArray(e));
      }),
      { numRuns: 2000 },
    );
  });

  it('never throws, whatever the text (property)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 60 }), (s) => {
        const r = parseNamingPath(`$${s}`);
        expect(typeof r.ok).toBe('boolean');
      }),
      { numRuns: 3000 },
    );
  });
});
