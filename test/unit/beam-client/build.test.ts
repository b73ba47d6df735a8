import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { cp, mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { clientDir } from '../../support/beam-client.js';
import { CELL, cellHas, ok, readmeErlcBuild } from '../../support/beam-cell.js';

/**
 * The library built without a build tool, by the README's plain-erlc lines run as printed in
 * this cell: every module compiles under `+warnings_as_errors` (so a construct the cell's OTP
 * deprecates fails here), and the `.app` file is written with every module, so the application
 * loads and starts.
 */

let dir: string;
const env = () => ({ PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir, LANG: 'C.UTF-8' });

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ctopo-erlc-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

it(`builds with the README's plain erlc lines (+warnings_as_errors) and writes the .app (${CELL})`, async () => {
  const checkout = join(dir, 'checkout');
  await mkdir(join(checkout, 'clients', 'cluster_topology'), { recursive: true });
  await cp(join(clientDir, 'src'), join(checkout, 'clients', 'cluster_topology', 'src'), { recursive: true });
  const block = await readmeErlcBuild();
  await ok('/bin/sh', ['-ec', block], checkout, env(), 300_000, { anyProgram: true });

  const ebin = join(checkout, 'clients', 'cluster_topology', 'ebin');
  const modules = (await readdir(join(checkout, 'clients', 'cluster_topology', 'src')))
    .filter((f) => f.endsWith('.erl'))
    .map((f) => f.slice(0, -4))
    .sort();
  const out = await ok(
    'erl',
    [
      '-noshell',
      '-pa',
      ebin,
      '-eval',
      'ok = application:load(cluster_topology), {ok, Ms} = application:get_key(cluster_topology, modules), ' +
        '{ok, Started} = application:ensure_all_started(cluster_topology), ' +
        'io:format("otp ~s~nmodules ~s~nstarted ~p~n", [erlang:system_info(otp_release), lists:join(",", [atom_to_list(M) || M <- lists:sort(Ms)]), lists:member(cluster_topology, Started)]), halt().',
    ],
    checkout,
    env(),
    120_000,
  );
  // The cell's own OTP built and ran it.
  expect(out).toContain(`otp ${CELL.slice(3)}\n`);
  expect(out).toContain(`modules ${modules.join(',')}\n`);
  expect(out).toContain('started true');
}, 400_000);

it(`the README's support matrix names this cell's OTP, Elixir and rebar3 (${CELL})`, async () => {
  const otp = (
    await ok(
      'erl',
      [
        '-noshell',
        '-eval',
        '{ok, V} = file:read_file(filename:join([code:root_dir(), "releases", erlang:system_info(otp_release), "OTP_VERSION"])), io:format("~s", [string:trim(V)]), halt().',
      ],
      dir,
      env(),
      60_000,
    )
  ).trim();
  const elixir = /Elixir (\d+\.\d+\.\d+)/.exec(await ok('elixir', ['--version'], dir, env(), 60_000))![1]!;
  const rebar3 = cellHas('rebar3')
    ? /rebar (\d+\.\d+\.\d+)/.exec(await ok('rebar3', ['version'], dir, env(), 60_000))![1]!
    : '—';
  const readme = await readFile(join(clientDir, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Tested where'));
  const row = section.split('\n').find((l) => l.startsWith(`| ${otp} `));
  if (!row) throw new Error(`no row for OTP ${otp} in the README's support matrix`);
  const cells = row.split('|').map((c) => c.trim());
  expect({ elixir: cells[2], rebar3: cells[3] }).toEqual({ elixir, rebar3 });
}, 180_000);
