// The small helpers of the naming engine: the bounded cache, quoting, and reading pod fields.
import { describe, expect, it } from '@jest/globals';
import { BoundedCache } from '../../../operator/naming/bounded-cache.js';
import { describeKind, quoteString, quoteValue, sanitizeCell } from '../../../operator/naming/quote.js';
import { annotation, readPod } from '../../../operator/naming/pod-fields.js';

describe('BoundedCache', () => {
  it('evicts the least recently used entry', () => {
    const c = new BoundedCache<string, number>(2);
    c.set('a', 1);
    c.set('b', 2);
    expect(c.get('a')).toBe(1); // a is now the most recent
    c.set('c', 3);
    expect(c.has('b')).toBe(false);
    expect(c.has('a')).toBe(true);
    expect(c.has('c')).toBe(true);
    expect(c.size).toBe(2);
  });

  it('counts hits and misses, and clears', () => {
    const c = new BoundedCache<string, number>(3);
    c.set('a', 1);
    c.get('a');
    c.get('b');
    expect([c.hits, c.misses]).toEqual([1, 1]);
    c.clear();
    expect([c.size, c.hits, c.misses]).toEqual([0, 0, 0]);
  });

  it('replaces a value without growing', () => {
    const c = new BoundedCache<string, number>(2);
    c.set('a', 1);
    c.set('a', 2);
    expect([c.size, c.get('a')]).toEqual([1, 2]);
  });

  it('stores undefined-like values faithfully', () => {
    const c = new BoundedCache<string, number | null>(2);
    c.set('n', null);
    expect(c.get('n')).toBeNull();
    expect(c.hits).toBe(1);
  });

  it('refuses a capacity below one', () => {
    expect(() => new BoundedCache(0)).toThrow(RangeError);
    expect(() => new BoundedCache(1.5)).toThrow(RangeError);
  });
});

describe('quoting', () => {
  it('quotes strings as escaped literals', () => {
    expect(quoteString('a"b\\c\n')).toBe('"a\\"b\\\\c\\n"');
    expect(quoteString('\u007f\u0085\u2028\u202e\u2066')).toBe('"\\u007f\\u0085\\u2028\\u202e\\u2066"');
  });

  it('shortens long values and counts the rest', () => {
    expect(quoteString('abcdef', 3)).toBe('"abc"… (3 more characters)');
    expect(quoteValue({ a: 'abcdef' }, 5)).toBe('{"a":… (9 more characters)');
  });

  it('does not split a surrogate pair', () => {
    expect(quoteString('a😀b', 2)).toBe('"a"… (3 more characters)');
  });

  it('quotes any JSON value', () => {
    expect(quoteValue(3)).toBe('3');
    expect(quoteValue(null)).toBe('null');
    expect(quoteValue([1, 'x'])).toBe('[1,"x"]');
    expect(quoteValue(undefined)).toBe('<undefined>');
    expect(quoteValue(10n)).toBe('<bigint>');
    expect(quoteValue({ k: '\u202e' })).toBe('{"k":"\\u202e"}');
  });

  it('names the kind of a value', () => {
    expect([null, [], 's', 1, true, {}, undefined, 1n].map(describeKind)).toEqual([
      'null',
      'an array',
      'a string',
      'a number',
      'a boolean',
      'an object',
      'undefined',
      'a bigint',
    ]);
  });

  it('sanitizes table cells', () => {
    expect(sanitizeCell('plain text')).toBe('plain text');
    expect(sanitizeCell('a\tb\u001bc')).toBe('a\\u0009b\\u001bc');
  });
});

describe('readPod', () => {
  it('reads the fields the engine uses', () => {
    const facts = readPod({
      metadata: { name: 'w', uid: 'u', deletionTimestamp: '2026-01-01T00:00:00Z', annotations: { a: 'b' } },
      spec: { nodeName: 'n' },
      status: { podIP: '10.0.0.1', phase: 'Running' },
    });
    expect(facts).toEqual({
      name: 'w',
      uid: 'u',
      namespace: '',
      hostname: '',
      subdomain: '',
      readyCondition: false,
      podIP: '10.0.0.1',
      node: 'n',
      phase: 'Running',
      terminating: true,
      annotations: { a: 'b' },
    });
    expect(annotation(facts, 'a')).toBe('b');
    expect(annotation(facts, 'missing')).toBeUndefined();
    expect(
      readPod({
        metadata: { name: 'w', namespace: 'ns' },
        spec: { hostname: 'h', subdomain: 'svc' },
        status: {
          conditions: [
            { type: 'PodScheduled', status: 'True' },
            { type: 'Ready', status: 'True' },
          ],
        },
      }),
    ).toMatchObject({ namespace: 'ns', hostname: 'h', subdomain: 'svc', readyCondition: true });
    expect(readPod({ status: { conditions: [{ type: 'Ready', status: 'Unknown' }] } }).readyCondition).toBe(
      false,
    );
    expect(readPod({ status: { conditions: [null, 'Ready', { type: 'Ready' }] } }).readyCondition).toBe(
      false,
    );
  });

  it('reads wrong types and missing fields as absent', () => {
    const empty = {
      name: '',
      uid: '',
      namespace: '',
      hostname: '',
      subdomain: '',
      readyCondition: false,
      podIP: '',
      node: '',
      phase: '',
      terminating: false,
      annotations: undefined,
    };
    expect(readPod(null)).toEqual(empty);
    expect(readPod([])).toEqual(empty);
    expect(readPod({ metadata: [], spec: 'x', status: 3 })).toEqual(empty);
    expect(readPod({ metadata: { name: 1, annotations: ['x'], deletionTimestamp: null } })).toEqual(empty);
    expect(readPod({ metadata: { deletionTimestamp: '' } }).terminating).toBe(false);
  });

  it('reads only own fields, never inherited ones', () => {
    const inherited = Object.create({ metadata: { name: 'proto' } }) as object;
    expect(readPod(inherited).name).toBe('');
    const facts = readPod({ metadata: { annotations: {} } });
    expect(annotation(facts, 'toString')).toBeUndefined();
    expect(annotation(facts, '__proto__')).toBeUndefined();
  });
});
