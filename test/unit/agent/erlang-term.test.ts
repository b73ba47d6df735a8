import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { isValidNodeName } from '../../../operator/naming/node-name.js';
import {
  asAtom,
  asAtomList,
  asInt,
  parseTerm,
  quoteNodeAtom,
  tryParseTerm,
} from '../../../operator/agent/connectors/erlang-term.js';
import { checkCookie, connectFailure, inferDistribution } from '../../../operator/agent/connectors/erlang.js';

describe('quoteNodeAtom', () => {
  it('quotes valid names', () => {
    expect(quoteNodeAtom('web-0@10.1.2.3')).toBe("'web-0@10.1.2.3'");
    expect(quoteNodeAtom('web_0@web-0.svc.cluster.local')).toBe("'web_0@web-0.svc.cluster.local'");
    expect(quoteNodeAtom('a@::1')).toBe("'a@::1'");
  });

  it.each([
    ["a'@h"],
    ['a@h\'] ; os:cmd("id") ; [\''],
    ['a@h\\'],
    ['a@h\n'],
    ['$(id)@h'],
    ['a b@h'],
    [''],
    ['noat'],
  ])('refuses %j', (name) => {
    expect(() => quoteNodeAtom(name)).toThrow();
  });

  it('property: whatever passes the grammar reads back as one atom equal to the name', () => {
    const chars = fc.constantFrom(...'abcXYZ019_-.@:%\'"\\ $`;()[]{},\n'.split(''));
    fc.assert(
      fc.property(fc.string({ unit: chars, maxLength: 30 }), (s) => {
        if (!isValidNodeName(s)) {
          expect(() => quoteNodeAtom(s)).toThrow();
          return;
        }
        const quoted = quoteNodeAtom(s);
        expect(parseTerm(quoted)).toEqual({ atom: s });
      }),
      { numRuns: 2000 },
    );
  });
});

describe('parseTerm: erl_call output', () => {
  it('reads the answers erl_call prints', () => {
    expect(asAtom(parseTerm('true'))).toBe('true');
    expect(asAtom(parseTerm('false'))).toBe('false');
    expect(asAtom(parseTerm("'a@127.0.0.1'"))).toBe('a@127.0.0.1');
    expect(asAtomList(parseTerm('[]'))).toEqual([]);
    expect(asAtomList(parseTerm("['b@127.0.0.1']"))).toEqual(['b@127.0.0.1']);
    expect(asAtomList(parseTerm("[c17@vm, 'b@127.0.0.1']"))).toEqual(['c17@vm', 'b@127.0.0.1']);
    expect(asAtomList(parseTerm("['a@h1',\n 'b@h2' ,'c@h3']\n"))).toEqual(['a@h1', 'b@h2', 'c@h3']);
    expect(asAtom(parseTerm("'it\\'s'"))).toBe("it's");
  });

  it('parses a badrpc tuple but does not take it for an atom', () => {
    const t = parseTerm("{badrpc, {'EXIT', {boom, [{erlang, error, [boom], []}]}}}");
    expect(asAtom(t)).toBeUndefined();
    expect(asAtomList(t)).toBeUndefined();
  });

  it('reads a timed answer: {Microseconds, Result}', () => {
    const t = parseTerm('{7003456,false}');
    expect(t).toEqual({ tuple: [{ int: 7003456 }, { atom: 'false' }] });
    expect(asInt(parseTerm('0'))).toBe(0);
    expect(asAtom(t)).toBeUndefined();
  });

  it.each([
    [''],
    ['tru e'],
    ['[a,'],
    ["'open"],
    ['4.2'],
    ['-1'],
    ['1e3'],
    ['1234567890123456'],
    ['"str"'],
    ['[a] b'],
    ['<<>>'],
    ['[a,,b]'],
  ])('rejects %j', (text) => {
    expect(tryParseTerm(text)).toBeUndefined();
  });

  it('rejects a list holding something other than atoms', () => {
    expect(asAtomList(parseTerm('[a, {b}]'))).toBeUndefined();
  });
});

describe('erlang connector helpers', () => {
  it('infers long names from a dotted or IPv6 host, short names otherwise', () => {
    expect(inferDistribution('web-0@10.1.2.3')).toBe('name');
    expect(inferDistribution('web-0@web.ns.svc')).toBe('name');
    expect(inferDistribution('web-0@::1')).toBe('name');
    expect(inferDistribution('web-0@web-0')).toBe('sname');
  });

  it('calls a failed connect a Timeout only when it took the whole setup time', () => {
    expect(connectFailure(7_000_000, 7000)).toBe('Timeout');
    expect(connectFailure(7_004_213, 7000)).toBe('Timeout');
    expect(connectFailure(6_999_999, 7000)).toBe('Refused');
    expect(connectFailure(1_200, 7000)).toBe('Refused');
    expect(connectFailure(2_000_100, 2000)).toBe('Timeout');
  });

  it('accepts printable cookies only', () => {
    expect(checkCookie('ABCDEF123_xyz').ok).toBe(true);
    expect(checkCookie('').ok).toBe(false);
    expect(checkCookie('with space').ok).toBe(false);
    expect(checkCookie('line\nbreak').ok).toBe(false);
    expect(checkCookie('x'.repeat(256)).ok).toBe(false);
  });
});
