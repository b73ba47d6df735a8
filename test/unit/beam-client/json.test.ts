import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildClient } from '../../support/beam-client.js';
import { run } from '../../support/erlang.js';

/**
 * The BEAM client's JSON decoder across the language boundary: documents generated in
 * JavaScript and encoded with JSON.stringify must decode in Erlang to the same values, and text
 * that is not JSON must be refused. One Erlang VM decodes a whole batch (base64 lines in, one
 * answer a line out: `ok <the value, encoded again by the test probe>` or `error <why>`).
 */

let dir: string;
let ebin: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ctopo-json-'));
  ebin = await buildClient(dir);
}, 120_000);
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const DECODE_ALL =
  '{ok, In} = file:read_file(os:getenv("CT_JSON_IN")),' +
  'Out = [begin <<"d:", B64/binary>> = L, Doc = base64:decode(B64),' +
  '  R1 = cluster_topology_json:decode(Doc), R2 = cluster_topology_json:decode_builtin(Doc),' +
  '  case {R1, R2} of' +
  '    {{ok, V}, {ok, V}} -> [<<"ok ">>, ct_probe:encode(V), $\\n];' +
  '    {{error, _}, {error, E}} -> [<<"error ">>, io_lib:format("~0p", [E]), $\\n];' +
  '    _ -> [<<"differ ">>, io_lib:format("~0p", [{R1, R2}]), $\\n]' +
  '  end end || L <- binary:split(In, <<"\\n">>, [global, trim_all])],' +
  'ok = file:write_file(os:getenv("CT_JSON_OUT"), Out), halt(0).';

/** Decodes every text in Erlang; returns one answer per text. */
async function decodeInErlang(
  texts: readonly string[],
): Promise<{ ok: boolean; value?: unknown; raw: string }[]> {
  const input = join(dir, `in-${Date.now()}`);
  const output = `${input}.out`;
  await writeFile(
    input,
    texts.map((t) => 'd:' + Buffer.from(t, 'utf8').toString('base64')).join('\n') + '\n',
  );
  const r = await run(
    'erl',
    ['-noshell', '-pa', ebin, '-eval', DECODE_ALL],
    { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir, CT_JSON_IN: input, CT_JSON_OUT: output },
    120_000,
  );
  if (r.code !== 0) throw new Error(`erl failed: ${r.stdout}${r.stderr}`);
  const lines = (await import('node:fs/promises').then((f) => f.readFile(output, 'utf8'))).split('\n');
  lines.pop();
  expect(lines).toHaveLength(texts.length);
  return lines.map((l) => {
    if (l.startsWith('ok ')) return { ok: true, value: JSON.parse(l.slice(3)) as unknown, raw: l };
    if (l.startsWith('error ')) return { ok: false, raw: l };
    throw new Error(`the two decoders disagree: ${l}`);
  });
}

const finite = (v: unknown): boolean =>
  typeof v === 'number'
    ? Number.isFinite(v)
    : v !== null && typeof v === 'object'
      ? Object.values(v).every(finite)
      : true;

const seed = Number(process.env.CT_JSON_SEED ?? Date.now() % 100000);

describe('the BEAM client’s JSON decoder (seed ' + String(seed) + ')', () => {
  it('decodes what JSON.stringify writes to the same values', async () => {
    const docs = fc.sample(
      fc.oneof(
        fc.jsonValue({ stringUnit: 'binary', maxDepth: 6 }),
        fc.jsonValue({ stringUnit: 'grapheme', maxDepth: 3 }),
        fc.dictionary(fc.string({ unit: 'binary' }), fc.jsonValue({ maxDepth: 2 })),
      ),
      { numRuns: 400, seed },
    );
    const texts = docs.map((d) => JSON.stringify(d));
    const answers = await decodeInErlang(texts);
    texts.forEach((t, i) => {
      const a = answers[i]!;
      expect({ text: t, ok: a.ok }).toEqual({ text: t, ok: true });
      // What the text means to JavaScript (JSON.stringify writes -0 as 0, for instance).
      expect(a.value).toEqual(JSON.parse(t));
    });
  });

  it('refuses what JSON.parse refuses, and agrees on what it accepts', async () => {
    const mutated = fc.sample(
      fc
        .tuple(
          fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)),
          fc.nat(),
          fc.constantFrom('delete', 'insert', 'truncate', 'replace'),
          fc.constantFrom(...'{}[]",:\\ 0123456789-+.eEtrufalsn\t\x01x'.split('')),
        )
        .map(([t, n, op, c]) => {
          const i = t.length === 0 ? 0 : n % t.length;
          if (op === 'delete') return t.slice(0, i) + t.slice(i + 1);
          if (op === 'insert') return t.slice(0, i) + c + t.slice(i);
          if (op === 'replace') return t.slice(0, i) + c + t.slice(i + 1);
          return t.slice(0, i);
        }),
      { numRuns: 400, seed: seed + 1 },
    );
    const fixed = [
      '1e400',
      '-1e400',
      '1e-400',
      '',
      ' ',
      '{',
      '[1,]',
      '{"a":1,}',
      '01',
      '1.',
      '.5',
      '+1',
      '"\\x"',
      'NaN',
      'Infinity',
      '[1] [2]',
      '"\t"',
    ];
    const texts = [...fixed, ...mutated];
    const answers = await decodeInErlang(texts);
    let refused = 0;
    texts.forEach((t, i) => {
      let js: { ok: true; value: unknown } | { ok: false };
      try {
        js = { ok: true, value: JSON.parse(t) as unknown };
        // A number beyond a double's range is Infinity to JavaScript; Erlang has no such float,
        // and JSON.stringify never writes one (it writes null): the decoder refuses it.
        if (!finite(js.value)) js = { ok: false };
      } catch {
        js = { ok: false };
      }
      const a = answers[i]!;
      expect({ text: t, ok: a.ok }).toEqual({ text: t, ok: js.ok });
      // -0 is 0 to Erlang (an integer): compare what JSON.stringify writes of both.
      const plain = (v: unknown): unknown => JSON.parse(JSON.stringify(v));
      if (js.ok) expect(plain(a.value)).toEqual(plain(js.value));
      else refused++;
    });
    expect(refused).toBeGreaterThan(100);
  });

  it('keeps the sign of a negative zero, underflowed or written out, as OTP 27+ json does', async () => {
    // decodeInErlang checks both decoders give the same term; OTP 27 and later tell 0.0 from -0.0
    // there, so a decoder that drops the sign fails in those cells (a mutated text found it).
    const texts = ['-0.0', '-1e-500', '-1.5e-400', '[-0.0e3]'];
    const answers = await decodeInErlang(texts);
    expect(answers.map((a) => a.raw)).toEqual(['ok -0.0', 'ok -0.0', 'ok -0.0', 'ok [-0.0]']);
  });

  it('refuses lone surrogates (JSON.stringify escapes them; they are no UTF-8) and invalid UTF-8', async () => {
    const texts = [JSON.stringify('a\ud800b'), JSON.stringify({ k: '\udfff' }), '"\\ud83d\\u0041"'];
    const answers = await decodeInErlang(texts);
    expect(answers.map((a) => a.raw)).toEqual(
      texts.map(() => expect.stringMatching(/^error .*lone_surrogate/)),
    );
    expect((await decodeInErlang([JSON.stringify('a\ud83d\ude00b')]))[0]!.value).toBe('a\ud83d\ude00b');
  });
});
