import { describe, expect, it } from '@jest/globals';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './paths.js';

/**
 * docs/guarantees.md, checked so it cannot drift: every row cites where the docs make the
 * guarantee (the phrase must still be there) and what proves it — tests that must exist in their
 * files (a jest test by its title, an eunit test by its function) or a benchmark module.
 */

interface Row {
  n: string;
  guarantee: string;
  docs: { file: string; phrase: string }[];
  tests: { file: string; title: string }[];
  benches: string[];
}

const CITATION = /`([^`]+)` « ([^»]+) »/g;
const collapse = (s: string) => s.replace(/\s+/g, ' ').trim();
const unescapeCell = (s: string) => s.replace(/\\\|/g, '|');

function rows(): Row[] {
  const text = readFileSync(join(repoRoot, 'docs', 'guarantees.md'), 'utf8');
  const table = text.split('\n').filter((l) => /^\|\s*\d+\s*\|/.test(l));
  return table.map((line) => {
    const cells = line
      .slice(1, -1)
      .split(/(?<!\\)\|/)
      .map((c) => unescapeCell(c.trim()));
    const [n, guarantee, docs, proofs] = cells as [string, string, string, string];
    return {
      n,
      guarantee,
      docs: [...docs.matchAll(CITATION)].map((m) => ({ file: m[1]!, phrase: m[2]! })),
      tests: [...proofs.matchAll(CITATION)].map((m) => ({ file: m[1]!, title: m[2]! })),
      benches: [...proofs.matchAll(/bench: `([^`]+)`/g)].map((m) => m[1]!),
    };
  });
}

/** The titles of every `it(…)` and `it.each(…)(…)` in a test file (string literals only). */
export function testTitles(source: string): string[] {
  const titles: string[] = [];
  const re = /\bit(\.each)?\(/g;
  for (let m = re.exec(source); m; m = re.exec(source)) {
    let i = m.index + m[0].length;
    if (m[1]) {
      // Skip the each table: balanced parentheses, string literals skipped whole.
      let depth = 1;
      while (i < source.length && depth > 0) {
        const c = source[i]!;
        if (c === "'" || c === '"' || c === '`') i = endOfString(source, i);
        else {
          if (c === '(') depth++;
          if (c === ')') depth--;
          i++;
        }
      }
      while (/\s/.test(source[i] ?? '')) i++;
      if (source[i] !== '(') continue;
      i++;
    }
    while (/\s/.test(source[i] ?? '')) i++;
    const q = source[i];
    if (q !== "'" && q !== '"' && q !== '`') continue;
    const end = endOfString(source, i);
    titles.push(source.slice(i + 1, end - 1).replace(/\\(.)/g, '$1'));
  }
  return titles;
}

/** The index just past the string literal that starts at `start`. */
function endOfString(s: string, start: number): number {
  const q = s[start];
  let i = start + 1;
  while (i < s.length && s[i] !== q) i += s[i] === '\\' ? 2 : 1;
  return i + 1;
}

describe('docs/guarantees.md', () => {
  const all = rows();

  it('has rows', () => {
    expect(all.length).toBeGreaterThan(40);
  });

  it.each(all.map((r) => [r.n, r.guarantee, r] as const))(
    'row %s (%s): the phrases are in the docs, the tests exist',
    (_n, _g, row) => {
      expect(row.docs.length).toBeGreaterThan(0);
      for (const { file, phrase } of row.docs) {
        const path = join(repoRoot, file);
        expect({ file, exists: existsSync(path) }).toEqual({ file, exists: true });
        expect({
          file,
          phrase,
          found: collapse(readFileSync(path, 'utf8')).includes(collapse(phrase)),
        }).toEqual({
          file,
          phrase,
          found: true,
        });
      }
      // Proven by tests or a benchmark: never nothing.
      expect(row.tests.length + row.benches.length).toBeGreaterThan(0);
      for (const { file, title } of row.tests) {
        const path = join(repoRoot, file);
        // Only where CI runs tests: a jest project's folder, or the library's eunit modules.
        const runs =
          /^(test\/(unit|integration|e2e|node)\/.+\.test\.ts|clients\/cluster_topology\/test\/[a-z0-9_]+_tests\.erl)$/;
        expect({ file, exists: existsSync(path) && runs.test(file) }).toEqual({
          file,
          exists: true,
        });
        const source = readFileSync(path, 'utf8');
        const found = file.endsWith('.erl')
          ? // An eunit test is a function of the module: `name_test()`, or a generator `name_test_()`.
            /^[a-z][a-z0-9_]*_test_?$/.test(title) && new RegExp(`^${title}\\(\\) ->`, 'm').test(source)
          : testTitles(source).includes(title);
        expect({ file, title, found }).toEqual({
          file,
          title,
          found: true,
        });
      }
      for (const file of row.benches)
        expect({ file, exists: existsSync(join(repoRoot, file)) }).toEqual({ file, exists: true });
    },
  );

  it('finds titles as jest reads them (it, it.each with a table holding parentheses and strings)', () => {
    const source = [
      "it('plain', () => {});",
      'it.each([["a (b)", \')\'], [1, 2]])(\n  "each %s: it\'s", () => {});',
      'it(`template`, () => {});',
      "it('escaped \\'quote\\'', () => {});",
    ].join('\n');
    expect(testTitles(source)).toEqual(['plain', "each %s: it's", 'template', "escaped 'quote'"]);
  });
});
