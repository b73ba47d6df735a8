import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkNodeName } from '../../../operator/naming/node-name.js';
import { buildClient } from '../../support/beam-client.js';
import { run } from '../../support/erlang.js';

/**
 * One node-name grammar on both sides: the operator publishes only names its TypeScript check
 * passes, and the OTP library turns into atoms only names its Erlang check passes
 * (cluster_topology_name). Names generated here — IPv6 forms above all, with zone IDs, IPv4
 * tails, brackets and near misses — get the same verdict, and the same problem, from both.
 */

let dir: string;
let ebin: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ctopo-names-'));
  ebin = await buildClient(dir);
}, 120_000);
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const CHECK_ALL =
  '{ok, In} = file:read_file(os:getenv("CT_NAMES_IN")),' +
  'Out = [case cluster_topology_name:check(base64:decode(L)) of ok -> <<"ok\\n">>;' +
  '  {error, P} -> [P, $\\n] end || L <- binary:split(In, <<"\\n">>, [global, trim_all])],' +
  'ok = file:write_file(os:getenv("CT_NAMES_OUT"), Out), halt(0).';

/** Erlang's verdict on each name: "ok" or the problem. */
async function checkInErlang(names: readonly string[]): Promise<string[]> {
  const input = join(dir, `in-${Date.now()}`);
  await writeFile(input, names.map((n) => Buffer.from(n, 'latin1').toString('base64')).join('\n') + '\n');
  const r = await run(
    'erl',
    ['-noshell', '-pa', ebin, '-eval', CHECK_ALL],
    {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: dir,
      CT_NAMES_IN: input,
      CT_NAMES_OUT: `${input}.out`,
    },
    120_000,
  );
  if (r.code !== 0) throw new Error(`erl failed: ${r.stdout}${r.stderr}`);
  const lines = (await readFile(`${input}.out`, 'utf8')).split('\n');
  lines.pop();
  return lines;
}

const typescript = (name: string) => {
  const c = checkNodeName(name);
  return c.ok ? 'ok' : c.problem;
};

/** Names written out: each kind of IPv6 address and the near misses of each. */
const WRITTEN = [
  'a@::1',
  'a@::',
  'a@fd00::1',
  'a@FD00::A',
  'a@1:2:3:4:5:6:7:8',
  'a@1:2:3:4:5:6:7::',
  'a@::1:2:3:4:5:6:7',
  'a@0001::1',
  'a@::ffff:1.2.3.4',
  'a@1:2:3:4:5:6:1.2.3.4',
  'a@fd00--1',
  'a@0--1',
  'a@fe80::1%eth0',
  'a@fe80::1%1',
  'a@fe80::1%',
  'a@fe80::1%eth0%x',
  'a@fe80::1%a_b',
  'a@::1%lo',
  'a@1.2.3.4%eth0',
  'a@00001::1',
  'a@1:2:3:4:5:6:7:8:9',
  'a@1:2:3:4:5:6:7:1.2.3.4',
  'a@1::2::3',
  'a@[::1]',
  'a@:1',
  'a@1:',
  'a@g::1',
  'a@::ffff:1.2.3.04',
  'a@::ffff:256.1.1.1',
  'a@::ffff:1.2.3',
  'a@1.2.3.4',
  'a@01.2.3.4',
  'a@256.1.1.1',
  'a@1.2.3',
  'a@-1',
  '@::1',
  'a@',
  'a',
];

const HEX = '0123456789abcdefABCDEF';
/** Strings that look like IPv6 addresses, most of them nearly. */
const ipv6ish = fc.oneof(
  fc.ipV6(),
  fc.ipV6().map((ip) => ip.toUpperCase()),
  fc.tuple(fc.ipV6(), fc.stringMatching(/^%[A-Za-z0-9_.:%-]{0,6}$/)).map(([ip, zone]) => ip + zone),
  fc.tuple(fc.ipV6(), fc.ipV4()).map(([ip, v4]) => `${ip.replace(/:[^:]*$/, '')}:${v4}`),
  fc
    .tuple(fc.ipV6(), fc.nat(60), fc.constantFrom(':', '::', '.', '-', '%', 'g', '0', '[', ']'))
    .map(([ip, at, ch]) => ip.slice(0, at % (ip.length + 1)) + ch + ip.slice(at % (ip.length + 1))),
  fc
    .array(fc.constantFrom(...HEX, ':', ':', '::', '.', '%'), { minLength: 1, maxLength: 40 })
    .map((a) => a.join('')),
);
const host = fc.oneof(ipv6ish, ipv6ish, fc.ipV4(), fc.ipV4Extended(), fc.domain());
const name = fc.oneof(fc.constantFrom('a', 'web_1', 'x-y'), fc.stringMatching(/^[A-Za-z0-9_@.-]{0,8}$/));

const seed = Number(process.env.CT_NAMES_SEED ?? Date.now() % 100000);

describe(`the node-name grammar, TypeScript and Erlang (seed ${seed})`, () => {
  it('gives the same verdict and problem for each IPv6 form written out', async () => {
    const erl = await checkInErlang(WRITTEN);
    expect(WRITTEN.map((n, i) => ({ n, erl: erl[i] }))).toEqual(
      WRITTEN.map((n) => ({ n, erl: typescript(n) })),
    );
    // The written list holds both kinds (no vacuous agreement).
    expect(erl.filter((v) => v === 'ok').length).toBeGreaterThan(5);
    expect(erl.filter((v) => v !== 'ok').length).toBeGreaterThan(5);
  }, 120_000);

  it('gives the same verdict and problem for generated names', async () => {
    const names = fc.sample(
      fc.tuple(name, host).map(([n, h]) => `${n}@${h}`),
      { numRuns: 3000, seed },
    );
    const erl = await checkInErlang(names);
    const differ = names.flatMap((n, i) =>
      erl[i] === typescript(n) ? [] : [{ n, erlang: erl[i], typescript: typescript(n) }],
    );
    expect(differ.slice(0, 10)).toEqual([]);
    expect(erl.filter((v) => v === 'ok').length).toBeGreaterThan(300);
  }, 120_000);
});
