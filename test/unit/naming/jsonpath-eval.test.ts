import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { JSONPath } from 'jsonpath-plus';
import { evaluatePath, STEP_BUDGET } from '../../../operator/naming/jsonpath-eval.js';
import { parseNamingPath, type Step } from '../../../operator/naming/jsonpath-syntax.js';
import { compileJsonPath, selectValue } from '../../../operator/naming/jsonpath.js';
import { resolvePod } from '../../../operator/naming/index.js';
import { HOST, pod } from './fixtures.js';

function stepsOf(expression: string): Step[] {
  const r = parseNamingPath(expression);
  if (!r.ok) throw new Error(`refused ${expression}: ${r.problem}`);
  return r.path.steps;
}

function theirs(expression: string, json: unknown): unknown[] {
  return JSONPath({
    path: expression,
    json: json as object,
    eval: 'safe',
    wrap: true,
    resultType: 'value',
    ignoreEvalErrors: true,
  }) as unknown[];
}

function ours(expression: string, json: unknown): unknown[] {
  const e = evaluatePath(stepsOf(expression), json);
  if (!e.ok) throw new Error(`over budget: ${expression}`);
  return e.values;
}

// A small vocabulary, so expressions and data meet: the same names appear as keys, and keys
// that are also the text of a step ('*', '..', '0,1', '-1:') exercise jsonpath-plus's
// "literal priority" after * and after a plain name.
const KEYS = ['a', 'b', 'name', '0', '1', 'length', 'x-y', '*', '..', '0,1', '-1:', '~', "a'b"];
const DOT_NAMES = ['a', 'b', 'name', '0', '1', 'length', 'x-y'];
const QUOTED = ['a', 'b', 'name', 'x.y', '0'];
const LEAF = fc.oneof(
  fc.constantFrom('a', 'b', 'x', '', '0', '1', '10', 'web-0', 'a,b'),
  fc.integer({ min: -3, max: 12 }),
  fc.boolean(),
  fc.constant(null),
);
const { json } = fc.letrec<{ json: unknown }>((tie) => ({
  json: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    LEAF,
    fc.array(tie('json'), { maxLength: 4 }),
    fc.dictionary(fc.constantFrom(...KEYS), tie('json'), { maxKeys: 5 }),
  ),
}));

const member = fc.oneof(
  fc.constantFrom('a', 'b', 'name', 'length').map((n) => `.${n}`),
  fc.nat(3).map((k) => `[${k}]`),
  fc.constantFrom(...QUOTED).map((n) => `['${n}']`),
);
const value = fc.oneof(
  fc
    .tuple(
      fc.constantFrom('@', '@root', '@parent', '@property', '@parentProperty', '@path'),
      fc.array(member, { maxLength: 2 }),
    )
    .map(([a, ms]) => a + ms.join('')),
  fc.constantFrom("'a'", '"b"', "''", "'0'", '0', '1', '2.5', 'true', 'false', 'null', "'$[0]'"),
);
const { expr: filterExpr } = fc.letrec<{ expr: string }>((tie) => ({
  expr: fc.oneof(
    { depthSize: 'small' },
    value,
    fc
      .tuple(
        value,
        fc.constantFrom('==', '!=', '===', '!==', '<', '<=', '>', '>=', '+', '-', '*', '%'),
        value,
      )
      .map(([l, op, r]) => `${l} ${op} ${r}`),
    fc
      .tuple(tie('expr'), fc.constantFrom(' && ', ' || '), tie('expr'))
      .map(([l, op, r]) => `(${l})${op}(${r})`),
    tie('expr').map((e) => `!(${e})`),
    value.map((v) => `-${v}`),
  ),
}));
const bracket = fc.oneof(
  fc.constant('[*]'),
  fc.uniqueArray(fc.nat(3), { minLength: 1, maxLength: 3 }).map((ks) => `[${ks.join(',')}]`),
  fc
    .tuple(
      fc.option(fc.integer({ min: -4, max: 4 })),
      fc.option(fc.integer({ min: -4, max: 4 })),
      fc.option(fc.integer({ min: -2, max: 2 })),
    )
    .map(([a, b, c]) => `[${a ?? ''}:${b ?? ''}${c === null ? '' : `:${c}`}]`),
  fc
    .uniqueArray(fc.constantFrom(...QUOTED), { minLength: 1, maxLength: 3 })
    .map((ns) => `[${ns.map((n) => `'${n}'`).join(',')}]`),
  filterExpr.map((b) => `[?(${b})]`),
);
const step = fc.oneof(
  fc.constantFrom(...DOT_NAMES).map((n) => `.${n}`),
  fc.constant('.*'),
  bracket,
);
const expression = fc
  .tuple(
    fc.array(step, { maxLength: 4 }),
    fc.option(fc.tuple(fc.nat(4), fc.oneof(fc.constantFrom(...DOT_NAMES), fc.constant('*'), bracket))),
  )
  .map(([steps, descent]) => {
    if (!descent) return `$${steps.join('')}`;
    const [at, target] = descent;
    const k = Math.min(at, steps.length);
    return `$${steps.slice(0, k).join('')}..${target}${steps.slice(k).join('')}`;
  })
  .filter((e) => parseNamingPath(e).ok);

describe('the step-counting evaluator gives jsonpath-plus results', () => {
  it('on generated expressions and documents (property)', () => {
    fc.assert(
      fc.property(expression, json, (e, doc) => {
        const root = doc !== null && typeof doc === 'object' ? doc : { v: doc };
        expect(ours(e, root)).toEqual(theirs(e, root));
      }),
      { numRuns: 3000 },
    );
  });

  it.each<[string, unknown]>([
    // literal priority: right after * or a plain name, a field named like the next step wins
    ['$.a.*', { a: { '*': 1, b: 2 } }],
    ['$.a..b', { a: { '..': { b: 'lit' }, c: { b: 'deep' } } }],
    ['$.*.*', { a: { '*': 'lit', x: 'other' } }],
    ['$.a[-1:]', { a: { '-1:': 'lit' } }],
    ['$.a[0,1]', { a: { '0,1': 'lit', 0: 'zero' } }],
    ['$[0,1].a.b', { 0: { a: { b: 'x' } }, 1: { a: { b: 'y' } } }],
    // @parent and @parentProperty are those of the value being filtered
    ['$.a.b[?(@parentProperty == "b" && @parent.k == 1)]', { a: { k: 1, b: [3, 4] } }],
    ['$.a[?(@property === 1)]', { a: ['x', 'y', 'z'] }],
    ['$.a[?(@path.length > 7)]', { a: ['x', 'y'], bb: { a: [1] } }],
    ['$..[?(@path.length === 9)]', { a: ['x', 'y'], bb: { a: [1] } }],
    ['$..[?(@.length > 1)]', { a: ['xy', 'z', [1, 2]] }],
    ['$.a[?(@ == 1)]', { a: [[1, 2], [1], '1', [[1]]] }],
    ['$.s[0]', { s: 'abc' }],
    ['$.s.length', { s: 'abc' }],
    ['$.a[?(@.toString == 1)]', { a: [{ toString: 'not a function' }, { b: 1 }] }],
    ['$.a[?(@ == "x")]', { a: [{ toString: 'boom' }, 'x'] }],
  ])('%s', (e, doc) => {
    expect(ours(e, doc)).toEqual(theirs(e, doc));
  });
});

describe('the step budget', () => {
  const doc = { a: Array.from({ length: 50 }, (_, k) => ({ name: `n${k}`, value: `v${k}` })) };
  const e = "$..[?(@.name == 'n7')].value";

  it('counts steps deterministically and stops exactly at the budget', () => {
    const first = evaluatePath(stepsOf(e), doc);
    if (!first.ok) throw new Error('over budget');
    expect(first.values).toEqual(['v7']);
    const again = evaluatePath(stepsOf(e), doc);
    expect(again).toEqual(first);
    expect(evaluatePath(stepsOf(e), doc, first.steps)).toEqual(first);
    expect(evaluatePath(stepsOf(e), doc, first.steps - 1)).toEqual({
      ok: false,
      overBudget: true,
      budget: first.steps - 1,
    });
  });

  it('charges the size of an array a comparison turns into a string', () => {
    const small = { args: ['x'], items: [1, 2, 3] };
    const large = { args: Array.from({ length: 1000 }, (_, k) => `argument-${k}`), items: [1, 2, 3] };
    const cmp = "$.items[?(@root.args == 'x')]";
    const a = evaluatePath(stepsOf(cmp), small);
    const b = evaluatePath(stepsOf(cmp), large);
    if (!a.ok || !b.ok) throw new Error('over budget');
    expect(a.values).toEqual([1, 2, 3]);
    expect(b.steps - a.steps).toBeGreaterThanOrEqual(3 * 990);
  });

  it('charges telling apart many large matches', () => {
    const big = { a: Array.from({ length: 20 }, (_, k) => ({ k, pad: 'p'.repeat(6400) })) };
    const c = compileJsonPath('$.a[*]');
    if (!c.ok) throw new Error(c.problem);
    // The walk itself is cheap; serialising 20 objects of 100 steps each is not.
    expect(selectValue(c.path, big, 1000).kind).toBe('OverBudget');
    expect(selectValue(c.path, big, 5000).kind).toBe('AmbiguousMatch');
  });
});

// The classes measured in the issue: each used to hold the event loop for seconds.
describe('expressions that would hold the event loop are excluded as ExpressionTooCostly', () => {
  function fill(item: (k: number) => string, sep: string, room: number): string {
    const parts: string[] = [];
    let length = 0;
    for (let k = 0; length + sep.length + item(k).length < room; k++) {
      parts.push(item(k));
      length += sep.length + item(k).length;
    }
    return parts.join(sep);
  }
  const env = (n: number) => Array.from({ length: n }, (_, k) => ({ name: `E${k}`, value: `v${k}` }));
  const bigEnv = env(30_000);
  const midEnv = env(300);
  const args = Array.from({ length: 100_000 }, (_, k) => `arg-${k}-xx`);

  it.each<[string, string, object[], string[]]>([
    ['a name union after ..', `$..[${fill((k) => `'n${k}'`, ',', 4000)}]`, bigEnv, []],
    ['an index union after ..', `$..[${fill((k) => `${k}`, ',', 4000)}]`, bigEnv, []],
    ['an || chain after ..', `$..[?(${fill(() => '@', ' || ', 4000)})]`, midEnv, []],
    ['an && chain after ..', `$..[?(${fill(() => '@', ' && ', 4000)})]`, midEnv, []],
    [
      "a comparison against @root's 1 MB of args",
      "$..[?(@root.spec.containers[0].args == 'x')]",
      midEnv,
      args,
    ],
  ])('%s', (_, expression, envs, argv) => {
    expect(expression.length).toBeLessThanOrEqual(4096);
    const p = pod({ annotations: { [HOST]: expression } });
    const container = (p['spec'] as { containers: Record<string, unknown>[] }).containers[0]!;
    container['env'] = envs;
    container['args'] = argv;
    const v = resolvePod(p);
    expect(v.ok).toBe(false);
    if (v.ok) return;
    expect(v.excluded.reason).toBe('ExpressionTooCostly');
    expect(v.excluded.message).toContain(`needs more than ${STEP_BUDGET} evaluation steps`);
    expect(v.excluded.message).toContain('spell the path out from $ instead of searching with ..');
  });

  it('still names a pod with the same many env entries through a spelled-out path', () => {
    const p = pod({
      annotations: {
        [HOST]: "$.spec.containers[?(@.name == 'app')].env[?(@.name == 'E29999')].value",
      },
    });
    (p['spec'] as { containers: Record<string, unknown>[] }).containers[0]!['env'] = bigEnv;
    const v = resolvePod(p);
    expect(v.ok && v.peer.nodeName.endsWith('@v29999')).toBe(true);
  });
});
