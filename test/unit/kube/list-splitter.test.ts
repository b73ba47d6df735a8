import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { ListSplitter } from '../../../operator/kube/list-splitter.js';

/** Feeds `text` cut at `cuts` and returns what came out: the items, and the rest. */
function split(text: string, cuts: number[] = []): { items: unknown[]; rest: unknown } {
  const items: unknown[] = [];
  const s = new ListSplitter((o) => items.push(o));
  let at = 0;
  for (const c of [...new Set(cuts)].filter((c) => c > 0 && c < text.length).sort((a, b) => a - b)) {
    s.push(text.slice(at, c));
    at = c;
  }
  s.push(text.slice(at));
  return { items, rest: s.end() };
}

/** What the splitter must give: JSON.parse's items, and the document with `items: []`. */
function expected(doc: Record<string, unknown>): { items: unknown[]; rest: unknown } {
  const copy = JSON.parse(JSON.stringify(doc)) as Record<string, unknown>;
  const items = Array.isArray(copy.items) ? (copy.items as unknown[]) : [];
  if (Array.isArray(copy.items)) copy.items = [];
  return { items, rest: copy };
}

// Strings full of what a scanner could trip on: quotes, backslashes, brackets, commas, colons,
// the word "items", and characters outside the BMP (split across chunks as surrogate pairs).
const nasty = fc.string({
  unit: fc.constantFrom(
    '"',
    '\\',
    '{',
    '}',
    '[',
    ']',
    ',',
    ':',
    ' ',
    '\n',
    'items',
    'a',
    'é',
    '😀',
    '\u0000',
  ),
  maxLength: 12,
});
const value = fc.letrec((tie) => ({
  v: fc.oneof(
    { depthSize: 'small' },
    nasty,
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('v'), { maxLength: 3 }),
    fc.dictionary(fc.oneof(nasty, fc.constant('items')), tie('v'), { maxKeys: 3 }),
  ),
})).v;
const list = fc.record(
  {
    apiVersion: fc.constant('v1'),
    kind: fc.oneof(fc.constant('PodList'), nasty),
    metadata: fc.record(
      { resourceVersion: fc.string(), continue: nasty, items: value },
      { requiredKeys: [] },
    ),
    items: fc.array(value, { maxLength: 6 }),
  },
  { requiredKeys: ['items'] },
);

describe('ListSplitter', () => {
  it('gives what JSON.parse gives, item by item, however the text is cut and spaced', () => {
    fc.assert(
      fc.property(
        list,
        fc.array(fc.nat(), { maxLength: 20 }),
        fc.constantFrom(undefined, 1, '\t'),
        (doc, cuts, space) => {
          const text = JSON.stringify(doc, null, space);
          const got = split(
            text,
            cuts.map((c) => c % (text.length + 1)),
          );
          expect(got).toEqual(expected(doc));
        },
      ),
      { numRuns: 400 },
    );
  });

  it('cuts a real page one character at a time', () => {
    const doc = {
      kind: 'PodList',
      apiVersion: 'v1',
      metadata: { resourceVersion: '42', continue: 'abc' },
      items: [
        { metadata: { name: 'web-0', annotations: { a: '$.spec.containers[?(@.name == "x,]}")]' } } },
        { metadata: { name: 'web-1', items: ['not', 'the', 'list'] } },
      ],
    };
    const text = JSON.stringify(doc);
    expect(
      split(
        text,
        [...text].map((_, i) => i),
      ),
    ).toEqual(expected(doc));
  });

  it('hands items over as they complete, before the page has ended', () => {
    const seen: unknown[] = [];
    const s = new ListSplitter((o) => seen.push(o));
    s.push('{"kind":"PodList","metadata":{"resourceVersion":"7"},"items":[{"n":1},{"n":');
    expect(seen).toEqual([{ n: 1 }]);
    s.push('2}]}');
    expect(seen).toEqual([{ n: 1 }, { n: 2 }]);
    expect(s.end()).toEqual({ kind: 'PodList', metadata: { resourceVersion: '7' }, items: [] });
  });

  it('passes a body without items through whole: a Status from a refusal, items null or nested', () => {
    const status = {
      kind: 'Status',
      status: 'Failure',
      reason: 'Forbidden',
      code: 403,
      details: { items: [1] },
    };
    expect(split(JSON.stringify(status))).toEqual({ items: [], rest: status });
    expect(split('{"items":null,"metadata":{}}')).toEqual({ items: [], rest: { items: null, metadata: {} } });
    expect(split('{"kind":"items","items":[]}')).toEqual({ items: [], rest: { kind: 'items', items: [] } });
  });

  it('refuses what is not JSON, or ends early, with a SyntaxError', () => {
    for (const bad of [
      '{"items":[{"a":1}',
      '{"items":[{"a":1}]',
      '{"items":[{"a":"open',
      '{"items":[,{"a":1}]}',
      '{"items":[{"a":1}}',
      '{"items":[{"a":1]}',
      '{"items":[{a:1}]}',
      '{"metadata":}',
      '}',
      '<html>Bad Gateway</html>',
    ])
      expect(() => split(bad)).toThrow(SyntaxError);
  });
});
