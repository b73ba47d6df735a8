import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { JSONPath } from 'jsonpath-plus';
import {
  classifyMatches,
  clearJsonPathCache,
  compileJsonPath,
  COMPILE_CACHE_CAPACITY,
  jsonPathCacheStats,
  MAX_EXPRESSION_BYTES,
  selectValue,
  STEP_BUDGET,
  type CompiledJsonPath,
  type Selection,
} from '../../../operator/naming/jsonpath.js';
import { pod, SEED_HOST_EXPRESSION } from './fixtures.js';

function compiled(expression: string): CompiledJsonPath {
  const c = compileJsonPath(expression);
  if (!c.ok) throw new Error(`refused ${expression}: ${c.problem}`);
  return c.path;
}

function refused(expression: string): string {
  const c = compileJsonPath(expression);
  if (c.ok) throw new Error(`expected ${JSON.stringify(expression)} to be refused`);
  return c.problem;
}

function select(expression: string, json: object): Selection {
  return selectValue(compiled(expression), json);
}

// A "pod" that holds functions and arrays: if any expression ever ran code, calling `hook`
// flips a global, and a mutating method empties `list`.
declare global {
  var namingTestSideEffect: number | undefined;
}
function trapPod(): Record<string, unknown> {
  const hook = () => {
    globalThis.namingTestSideEffect = (globalThis.namingTestSideEffect ?? 0) + 1;
    return true;
  };
  return {
    metadata: { name: 'trap', annotations: {} },
    hook,
    spec: {
      containers: [
        { name: 'app', hook, env: [{ name: 'EXTERNAL_DNS', value: 'x.example' }], list: [1, 2, 3] },
      ],
    },
    list: [1, 2, 3],
    status: { podIP: '10.0.0.1' },
  };
}

describe('the side-effect detector', () => {
  beforeEach(() => {
    globalThis.namingTestSideEffect = undefined;
  });
  afterEach(() => {
    globalThis.namingTestSideEffect = undefined;
  });

  // Proves the hostile-expression tests below could fail: jsonpath-plus's own safe mode,
  // without the checks in front of it, does run these.
  it('sees jsonpath-plus call a function and mutate data when nothing stands in front of it', () => {
    const p = trapPod();
    JSONPath({ path: '$.spec.containers[?(@.hook())]', json: p, eval: 'safe' });
    expect(globalThis.namingTestSideEffect).toBe(1);
    JSONPath({ path: '$.spec.containers[?(@.list.pop())]', json: p, eval: 'safe' });
    expect((p['spec'] as { containers: { list: number[] }[] }).containers[0]!.list).toEqual([1, 2]);
  });
});

describe('hostile expressions are refused and never run', () => {
  beforeEach(() => {
    globalThis.namingTestSideEffect = undefined;
  });
  afterEach(() => {
    globalThis.namingTestSideEffect = undefined;
  });

  const hostile = [
    "$.spec.containers[?(@.constructor.constructor('globalThis.namingTestSideEffect = 1')())]",
    "$.spec.containers[?(@['constructor']['constructor']('return 1')())]",
    '$[?(@root.hook())]',
    '$.spec.containers[?(@.hook())]',
    "$.spec.containers[?(@['hook']())]",
    '$.spec.containers[?((@.hook)())]',
    '$..[?(@.hook())]',
    '$..*[?(@.hook())]',
    '$.spec.containers[?(@parent.hook())]',
    '$.spec.containers[?(@.list.pop())]',
    '$.spec.containers[?(@.list.splice(0))]',
    '$.spec.containers[?(@.list.fill(0) && true)]',
    "$.spec.containers[?(@.name == '(@.list.pop())')]",
    '$.spec.containers[?(@.name == "(@.list.pop())")]',
    "$.spec.containers[?(@.name == '?(@.list.pop())')]",
    '$.spec.containers[?(@.list[?(@.hook())])]',
    "$.spec.containers[?(@.list['?(@.hook())'])]",
    "$['?(@.hook())']",
    "$.spec['containers','?(@.hook())']",
    '$.spec.containers[0,?(@.hook())]',
    '$.spec[(@.containers.pop())]',
    '$.spec.containers[(@.length-1)]',
    '$.spec.containers[?(@.__proto__)]',
    "$.spec.containers[?(@['__proto__'])]",
    '$.spec.containers[?(@.__defineGetter__)]',
    '$.spec.containers[?(@.prototype)]',
    '$.__proto__.polluted',
    "$['__proto__']",
    "$['constructor']",
    '$.constructor.name',
    '$..constructor',
    '$[?(globalThis.namingTestSideEffect = 1)]',
    '$[?(process.exit(1))]',
    '$[?(this.constructor)]',
    "$[?(Function('globalThis.namingTestSideEffect = 1')())]",
    "$[?(new Function('x'))]",
    '$[?(@.x = 1)]',
    '$[?(_$_v.hook())]',
    '$[?(_$_root)]',
    '$[?(`${globalThis.namingTestSideEffect = 1}`)]',
    '$[?(@.name.match(/(a+)+$/))]',
    '$[?(typeof @.hook)]',
    '$[?(void 0)]',
    '$[?(@.x ? 1 : 2)]',
    '$[?(@.x, @.hook())]',
    '$[?(@.x; @.hook())]',
    '$[?(\\u0063onstructor)]',
    '$[?(@.\\u0063onstructor)]',
    '$[?(@.hook\n())]',
    '$.list^',
    '$.hook~',
    '$.hook@function()',
    '$.hook@other()',
    '$.`constructor',
  ];

  it.each(hostile)('%j', (expression) => {
    const p = trapPod();
    const before = JSON.stringify(p);
    const c = compileJsonPath(expression);
    expect(c.ok).toBe(false);
    // Even a forged compilation of the same text does not run.
    const forged = { expression, hasFilters: true, steps: [] } as unknown as CompiledJsonPath;
    expect(selectValue(forged, p).kind).toBe('Failed');
    expect(globalThis.namingTestSideEffect).toBeUndefined();
    expect(JSON.stringify(p)).toBe(before);
  });

  it('runs accepted expressions without touching the pod', () => {
    const p = trapPod();
    const before = JSON.stringify(p);
    for (const e of [
      SEED_HOST_EXPRESSION,
      '$..[?(@.name)].name',
      "$.spec.containers[?(@.hook == 'x' || @.list.length > 1)].name",
      '$..*',
    ])
      selectValue(compiled(e), p);
    expect(globalThis.namingTestSideEffect).toBeUndefined();
    expect(JSON.stringify(p)).toBe(before);
  });
});

describe('compileJsonPath: the annotation value itself', () => {
  it('accepts the seed expression', () => {
    expect(compileJsonPath(SEED_HOST_EXPRESSION).ok).toBe(true);
  });

  it(`accepts ${MAX_EXPRESSION_BYTES} bytes and refuses one more, saying so`, () => {
    const fits = `$.a[?(@.b == '${'x'.repeat(MAX_EXPRESSION_BYTES - 17)}')]`;
    expect(Buffer.byteLength(fits)).toBe(MAX_EXPRESSION_BYTES);
    expect(compileJsonPath(fits).ok).toBe(true);
    const tooLong = `$.a[?(@.b == '${'x'.repeat(MAX_EXPRESSION_BYTES - 16)}')]`;
    expect(refused(tooLong)).toBe(
      `the expression is ${MAX_EXPRESSION_BYTES + 1} bytes long; at most ${MAX_EXPRESSION_BYTES} bytes are allowed`,
    );
  });

  it('counts bytes, not characters', () => {
    const e = `$.${'ä'.repeat(2100)}`; // 2102 characters, 4202 bytes
    expect(refused(e)).toContain('4202 bytes long');
  });

  it('does not keep oversized values in the cache', () => {
    clearJsonPathCache();
    refused(`$.${'a'.repeat(MAX_EXPRESSION_BYTES)}`);
    expect(jsonPathCacheStats().size).toBe(0);
  });

  it.each([
    ['', 'the expression is empty'],
    [' $.a', 'starts with whitespace (nothing is trimmed)'],
    ['$.a ', 'ends with whitespace (nothing is trimmed)'],
    [
      '$.a\n',
      'ends with a line break (nothing is trimmed; a YAML | block adds one — use |- or a quoted string)',
    ],
    ['$.a\r\n', 'ends with a line break'],
    ['$.a\tb', 'character U+0009 at character 4 is not allowed (only printable ASCII)'],
    ['$.ä', 'character U+00E4 at character 3'],
    ['$.a\u202eb', 'character U+202E'],
    ['status.podIP', 'it must start with $ (the pod), as in $.status.podIP (at character 1)'],
  ])('refuses %j: %s', (expression, expected) => {
    expect(refused(expression)).toContain(expected);
  });

  it('refuses what jsonpath-plus would split differently from the strict parser', () => {
    // No accepted expression is known to split differently (a property test in
    // jsonpath-syntax.test.ts checks the agreement), so a different split is simulated.
    clearJsonPathCache();
    const original = JSONPath.toPathArray;
    JSONPath.toPathArray = (e: string) => [...original(e), '?(@.hook())'];
    try {
      expect(refused('$.spec.containers')).toBe(
        'jsonpath-plus would read this expression differently from what was checked; write it more plainly',
      );
    } finally {
      JSONPath.toPathArray = original;
      clearJsonPathCache();
    }
    expect(compileJsonPath('$.spec.containers').ok).toBe(true);
  });
});

describe('compileJsonPath: bounded cache', () => {
  beforeEach(() => clearJsonPathCache());

  it('parses an expression once for many pods', () => {
    for (let k = 0; k < 10_000; k++) compileJsonPath(SEED_HOST_EXPRESSION);
    expect(jsonPathCacheStats()).toEqual({
      size: 1,
      capacity: COMPILE_CACHE_CAPACITY,
      hits: 9_999,
      misses: 1,
    });
  });

  it('returns the same compilation from the cache', () => {
    expect(compileJsonPath('$.a')).toBe(compileJsonPath('$.a'));
  });

  it('remembers refusals too', () => {
    const first = compileJsonPath('$.a[?(@.hook())]');
    expect(compileJsonPath('$.a[?(@.hook())]')).toBe(first);
    expect(jsonPathCacheStats().hits).toBe(1);
  });

  it("bounds jsonpath-plus's own caches by clearing them after twice the capacity in misses", () => {
    const original = JSONPath.clearCache;
    let clears = 0;
    JSONPath.clearCache = () => {
      clears++;
      original();
    };
    try {
      clearJsonPathCache(); // counts as one clear, and resets the miss count
      for (let k = 0; k < 2 * COMPILE_CACHE_CAPACITY; k++) compileJsonPath(`$.b${k}`);
      expect(clears).toBe(1);
      compileJsonPath('$.one-more');
      expect(clears).toBe(2);
      // Refusals never reach jsonpath-plus, so they do not count.
      for (let k = 0; k < 3 * COMPILE_CACHE_CAPACITY; k++) compileJsonPath(`$.c${k}^`);
      expect(clears).toBe(2);
    } finally {
      JSONPath.clearCache = original;
    }
  });

  it('never holds more than its capacity', () => {
    for (let k = 0; k < COMPILE_CACHE_CAPACITY * 3; k++) compileJsonPath(`$.a${k}`);
    expect(jsonPathCacheStats().size).toBe(COMPILE_CACHE_CAPACITY);
    // Evicted entries compile again, with the same outcome.
    expect(compileJsonPath('$.a0').ok).toBe(true);
    expect(compileJsonPath(SEED_HOST_EXPRESSION).ok).toBe(true);
  });
});

describe('selectValue: match semantics', () => {
  const seedPod = pod({ env: { EXTERNAL_DNS: 'myname-web.netzlive.svc.cluster.local' } });

  it('selects the seed EXTERNAL_DNS value', () => {
    expect(select(SEED_HOST_EXPRESSION, seedPod)).toEqual({
      kind: 'Match',
      value: 'myname-web.netzlive.svc.cluster.local',
    });
  });

  it('counts equal matches as one', () => {
    const p = pod({
      containers: [
        { name: 'app', env: [{ name: 'EXTERNAL_DNS', value: 'a.example' }] },
        { name: 'sidecar', env: [{ name: 'EXTERNAL_DNS', value: 'a.example' }] },
      ],
    });
    expect(select(SEED_HOST_EXPRESSION, p)).toEqual({ kind: 'Match', value: 'a.example' });
  });

  it('reports distinct matches as ambiguous, with a sample and the count', () => {
    const p = pod({
      containers: ['a', 'b', 'c', 'd', 'a'].map((v, k) => ({
        name: `c${k}`,
        env: [{ name: 'EXTERNAL_DNS', value: `${v}.example` }],
      })),
    });
    expect(select(SEED_HOST_EXPRESSION, p)).toEqual({
      kind: 'AmbiguousMatch',
      distinct: ['a.example', 'b.example', 'c.example'],
      count: 4,
    });
  });

  it('reports no match', () => {
    expect(select(SEED_HOST_EXPRESSION, pod({ env: { OTHER: 'x' } }))).toEqual({ kind: 'NoMatch' });
    expect(select('$.status.nothing', seedPod)).toEqual({ kind: 'NoMatch' });
  });

  it.each([
    ['a number', { v: 3 }, 3],
    ['an object', { v: { a: 1 } }, { a: 1 }],
    ['an array', { v: [1] }, [1]],
    ['null', { v: null }, null],
    ['a boolean', { v: false }, false],
  ])('reports %s as NotAString', (_, json, value) => {
    expect(select('$.v', json)).toEqual({ kind: 'NotAString', value });
  });

  it('selects the whole pod for $, which is not a string', () => {
    expect(select('$', seedPod).kind).toBe('NotAString');
  });

  it('treats a filter reading a missing field as false for that item', () => {
    const p = { items: [{ name: 'a' }, { other: { name: 'b' } }, { other: 1 }] };
    expect(select("$.items[?(@.other.name == 'b')].other.name", p)).toEqual({ kind: 'Match', value: 'b' });
  });

  it('supports the usual steps', () => {
    const p = {
      metadata: {
        name: 'web-0',
        labels: { 'app.kubernetes.io/name': 'web', 'statefulset.kubernetes.io/pod-name': 'web-0' },
      },
      spec: { hostname: 'web-0', subdomain: 'web', containers: [{ name: 'a' }, { name: 'b' }] },
      status: { podIPs: [{ ip: '10.0.0.1' }, { ip: 'fd00::1' }] },
    };
    expect(select("$.metadata.labels['app.kubernetes.io/name']", p)).toEqual({ kind: 'Match', value: 'web' });
    expect(select('$.spec.containers[-1:].name', p)).toEqual({ kind: 'Match', value: 'b' });
    expect(select('$.spec.containers[0].name', p)).toEqual({ kind: 'Match', value: 'a' });
    expect(select('$.status.podIPs[1].ip', p)).toEqual({ kind: 'Match', value: 'fd00::1' });
    expect(select("$..[?(@.ip == 'fd00::1')].ip", p)).toEqual({ kind: 'Match', value: 'fd00::1' });
    expect(select("$.spec.containers[?(@root.spec.hostname == 'web-0' && @.name == 'b')].name", p)).toEqual({
      kind: 'Match',
      value: 'b',
    });
    expect(select('$.spec.containers[*].name', p).kind).toBe('AmbiguousMatch');
  });

  it('refuses a compilation it did not issue', () => {
    const forged = { expression: '$.a', hasFilters: false, steps: [] } as unknown as CompiledJsonPath;
    expect(selectValue(forged, { a: 'x' })).toEqual({
      kind: 'Failed',
      problem: 'internal error: the expression was not compiled by compileJsonPath',
    });
  });
});

describe('selectValue: bounded work', () => {
  it('stops an expression whose filters would run too often on this pod', () => {
    // A filter near the size limit evaluated under .. on a pod with many items.
    const clause = "@.name == 'never-there'";
    const body = Array.from({ length: 150 }, () => clause).join(' || ');
    const c = compiled(`$..[?(${body})].name`);
    const big = { items: Array.from({ length: 5000 }, (_, k) => ({ name: `item-${k}` })) };
    expect(selectValue(c, big)).toEqual({ kind: 'OverBudget', budget: STEP_BUDGET });
    // The same expression on a pod of ordinary size is fine.
    expect(selectValue(c, { items: [{ name: 'a' }] })).toEqual({ kind: 'NoMatch' });
  });

  it('gives the seed expression room on a pod with thousands of env entries', () => {
    const env = Array.from({ length: 5000 }, (_, k) => ({ name: `E${k}`, value: `v${k}` }));
    env.push({ name: 'EXTERNAL_DNS', value: 'x.example' });
    const p = { spec: { containers: [{ name: 'app', env }] } };
    expect(selectValue(compiled(SEED_HOST_EXPRESSION), p)).toEqual({ kind: 'Match', value: 'x.example' });
    expect(compiled('$.a').hasFilters).toBe(false);
  });
});

describe('classifyMatches', () => {
  it('follows the match rules', () => {
    expect(classifyMatches([])).toEqual({ kind: 'NoMatch' });
    expect(classifyMatches(['a'])).toEqual({ kind: 'Match', value: 'a' });
    expect(classifyMatches(['a', 'a', 'a'])).toEqual({ kind: 'Match', value: 'a' });
    expect(classifyMatches([{ a: 1 }, { a: 1 }])).toEqual({ kind: 'NotAString', value: { a: 1 } });
    expect(classifyMatches(['1', 1])).toEqual({ kind: 'AmbiguousMatch', distinct: ['1', 1], count: 2 });
    expect(classifyMatches(['a', 'b', 'a'])).toEqual({
      kind: 'AmbiguousMatch',
      distinct: ['a', 'b'],
      count: 2,
    });
    expect(classifyMatches([null, 'null'])).toEqual({
      kind: 'AmbiguousMatch',
      distinct: [null, 'null'],
      count: 2,
    });
  });
});
