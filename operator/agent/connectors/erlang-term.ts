import { checkNodeName } from '../../naming/node-name.js';

/**
 * The little Erlang term syntax the erlang connector writes and reads.
 *
 * Writing: a node name becomes a quoted atom. Only names that pass the node-name grammar are
 * accepted, and on top of that only the characters that grammar can ever produce (letters,
 * digits, `_ - @ . : %`): none of them is special inside a quoted atom, so no escaping is needed
 * and nothing can end the atom early. Anything else throws — callers validate first.
 *
 * Reading: erl_call prints its result with `ei_print_term`: atoms (bare or quoted), lists, tuples,
 * separated by `,` and optional blanks/newlines. We parse atoms, non-negative integers (a duration),
 * and lists and tuples of those; any other output is reported as unexpected, with the text.
 */

const ATOM_SAFE = /^[A-Za-z0-9_@.:%-]+$/;

export function quoteNodeAtom(node: string): string {
  const check = checkNodeName(node);
  if (!check.ok) throw new Error(`not a valid node name ${JSON.stringify(node)}: ${check.problem}`);
  if (!ATOM_SAFE.test(node))
    throw new Error(`node name ${JSON.stringify(node)} holds characters not allowed in an atom here`);
  return `'${node}'`;
}

export type Term =
  | { readonly atom: string }
  | { readonly int: number }
  | { readonly list: readonly Term[] }
  | { readonly tuple: readonly Term[] };

class ParseError extends Error {}

/** Parses atoms, non-negative integers, lists and tuples of those; throws on anything else (floats, strings, binaries…). */
export function parseTerm(text: string): Term {
  let i = 0;
  const s = text;
  const blank = (): void => {
    while (i < s.length && /\s/.test(s[i]!)) i++;
  };
  const term = (): Term => {
    blank();
    const c = s[i];
    if (c === undefined) throw new ParseError('unexpected end of output');
    if (c === '[') return { list: seq(']') };
    if (c === '{') return { tuple: seq('}') };
    if (c === "'") {
      i++;
      let atom = '';
      for (;;) {
        const d = s[i++];
        if (d === undefined) throw new ParseError('unterminated quoted atom');
        if (d === "'") break;
        if (d === '\\') {
          const e = s[i++];
          if (e === undefined) throw new ParseError('unterminated escape');
          atom += e === 'n' ? '\n' : e === 't' ? '\t' : e;
        } else atom += d;
      }
      return { atom };
    }
    const m = /^[a-z][A-Za-z0-9_@]*/.exec(s.slice(i));
    if (m) {
      i += m[0].length;
      return { atom: m[0] };
    }
    const n = /^[0-9]{1,15}(?![0-9.])/.exec(s.slice(i));
    if (n) {
      i += n[0].length;
      return { int: Number(n[0]) };
    }
    throw new ParseError(`unexpected ${JSON.stringify(c)} at offset ${i}`);
  };
  const seq = (close: string): Term[] => {
    i++; // the opening bracket
    const items: Term[] = [];
    blank();
    if (s[i] === close) {
      i++;
      return items;
    }
    for (;;) {
      items.push(term());
      blank();
      const c = s[i++];
      if (c === close) return items;
      if (c !== ',') throw new ParseError(`expected , or ${close} at offset ${i - 1}`);
    }
  };
  const t = term();
  blank();
  if (i !== s.length) throw new ParseError(`trailing output at offset ${i}`);
  return t;
}

export function tryParseTerm(text: string): Term | undefined {
  try {
    return parseTerm(text);
  } catch {
    return undefined;
  }
}

export function asAtom(t: Term | undefined): string | undefined {
  return t !== undefined && 'atom' in t ? t.atom : undefined;
}

export function asInt(t: Term | undefined): number | undefined {
  return t !== undefined && 'int' in t ? t.int : undefined;
}

export function asAtomList(t: Term | undefined): string[] | undefined {
  if (t === undefined || !('list' in t)) return undefined;
  const out: string[] = [];
  for (const x of t.list) {
    const a = asAtom(x);
    if (a === undefined) return undefined;
    out.push(a);
  }
  return out;
}
