import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LINK_REASONS } from '../../../operator/api/schema.js';
import { memberView, type MemberView } from '../../../operator/protocol/member-report.js';
import {
  planReport,
  recordAttempt,
  type ReportHistory,
  type ReportPlan,
  type WriteOutcome,
} from '../../../operator/protocol/report-plan.js';
import { buildClient, repoRoot } from '../../support/beam-client.js';
import { run } from '../../support/erlang.js';

/**
 * One member report whoever writes it: the OTP library's view (cluster_topology_member:view/1)
 * and its budget (plan/3, record_attempt/4) give the same answers as the TypeScript every other
 * writer uses (operator/protocol/member-report.ts, report-plan.ts), on generated cases — lists
 * with and without its own pod, more than 20 peers not connected (the cap), invalid names,
 * connections to unlisted nodes, trouble — and on generated runs of the budget.
 */

let dir: string;
let ebin: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ctopo-member-'));
  ebin = await buildClient(dir);
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir, LANG: 'C' };
  const fixture = join(repoRoot, 'test', 'fixtures', 'beam-client', 'ct_member_cases.erl');
  const r = await run('erlc', ['-pa', ebin, '-o', ebin, fixture], env, 60_000);
  if (r.code !== 0) throw new Error(`erlc failed: ${r.stdout}${r.stderr}`);
}, 120_000);
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

interface ViewCase {
  node: string;
  pod: string;
  peers: { nodeName: string; pod: string }[] | null;
  topologyResourceVersion: string | null;
  connected: string[];
  reasons: Record<string, string>;
  invalid: string[];
  trouble: { cause: string; message: string; since: string } | null;
}
interface PlanCase {
  views: MemberView[];
  steps: { view: number; now: number; outcome: WriteOutcome }[];
}

/** Erlang's answers to every case, in one VM. */
async function inErlang(views: ViewCase[], plans: PlanCase[]) {
  const input = join(dir, `cases-${Date.now()}.json`);
  await writeFile(input, JSON.stringify({ views, plans }));
  const r = await run(
    'erl',
    ['-noshell', '-pa', ebin, '-eval', 'ct_member_cases:main()'],
    {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: dir,
      CT_CASES_IN: input,
      CT_CASES_OUT: `${input}.out`,
    },
    120_000,
  );
  if (r.code !== 0) throw new Error(`erl failed: ${r.stdout}${r.stderr}`);
  return JSON.parse(await readFile(`${input}.out`, 'utf8')) as {
    views: MemberView[];
    plans: ReportPlan[][];
  };
}

const typescriptView = (c: ViewCase): MemberView =>
  memberView({
    node: c.node,
    pod: c.pod,
    ...(c.peers ? { peers: c.peers } : {}),
    ...(c.topologyResourceVersion !== null ? { topologyResourceVersion: c.topologyResourceVersion } : {}),
    connected: c.connected,
    reasons: new Map(Object.entries(c.reasons) as [string, (typeof LINK_REASONS)[number]][]),
    invalid: c.invalid,
    ...(c.trouble ? { trouble: c.trouble } : {}),
  });

function typescriptPlans(p: PlanCase): ReportPlan[] {
  let h: ReportHistory = {};
  return p.steps.map((s) => {
    const view = p.views[s.view]!;
    const plan = planReport(h, view, s.now);
    if (plan.action === 'write') h = recordAttempt(h, view, s.now, s.outcome);
    return plan;
  });
}

/** Node names from a pool small enough to collide; upper case and '_' sort apart in byte order. */
const NAMES = [...Array.from({ length: 30 }, (_, i) => `n${i}@h`), 'Z@h', '_@h', 'a@10.0.0.1', 'b@h'];
const PODS = Array.from({ length: 40 }, (_, i) => `p${i}`);
const name = fc.constantFrom(...NAMES);

const viewCase: fc.Arbitrary<ViewCase> = fc.record({
  node: name,
  pod: fc.constantFrom('p0', 'p1'),
  peers: fc.option(
    fc.oneof(
      ...[0, 22].map((minLength) =>
        fc.uniqueArray(fc.record({ nodeName: name, pod: fc.constantFrom(...PODS) }), {
          minLength,
          maxLength: minLength + 8,
          selector: (p) => p.nodeName,
        }),
      ),
    ),
    { nil: null, freq: 6 },
  ),
  topologyResourceVersion: fc.option(fc.stringMatching(/^[0-9]{1,6}$/), { nil: null }),
  connected: fc.uniqueArray(name, { maxLength: 30 }),
  reasons: fc.dictionary(name, fc.constantFrom(...LINK_REASONS.filter((r) => r !== 'Invalid'))),
  invalid: fc.uniqueArray(name, { maxLength: 3 }),
  trouble: fc.option(
    fc.record({
      cause: fc.constantFrom('NoStatusYet', 'ApiUnreachable', 'Forbidden'),
      message: fc.string({ maxLength: 40 }),
      since: fc.constant('2026-12-04T21:00:00Z'),
    }),
    { nil: null },
  ),
});

/** A few views, two of them differing only in the resourceVersion (the same for the budget). */
const BASE: ViewCase = {
  node: 'n0@h',
  pod: 'p0',
  peers: ['n0@h', 'n1@h', 'n2@h'].map((n, i) => ({ nodeName: n, pod: `p${i}` })),
  topologyResourceVersion: '10',
  connected: ['n1@h'],
  reasons: { 'n2@h': 'Refused' },
  invalid: [],
  trouble: null,
};
const POOL: MemberView[] = [
  typescriptView(BASE),
  typescriptView({ ...BASE, topologyResourceVersion: '11' }),
  typescriptView({ ...BASE, connected: ['n1@h', 'n2@h'] }),
  typescriptView({
    ...BASE,
    trouble: { cause: 'ApiUnreachable', message: 'x', since: '2026-12-04T21:00:00Z' },
  }),
];

const planCase: fc.Arbitrary<PlanCase> = fc
  .array(
    fc.record({
      view: fc.integer({ min: 0, max: POOL.length - 1 }),
      gap: fc.oneof(fc.integer({ min: 0, max: 12_000 }), fc.integer({ min: 0, max: 400_000 })),
      outcome: fc.constantFrom<WriteOutcome>('ok', 'ok', 'ok', 'forbidden', 'failed'),
    }),
    { minLength: 1, maxLength: 40 },
  )
  .map((steps) => {
    let now = 1_000_000;
    return {
      views: POOL,
      steps: steps.map((s) => ({ view: s.view, now: (now += s.gap), outcome: s.outcome })),
    };
  });

describe('the OTP library reports as the protocol says (the same answers as the TypeScript)', () => {
  it('the digest example of docs/status-protocol.md §8.2', async () => {
    const c: ViewCase = {
      ...BASE,
      peers: ['c@h', 'a@h', 'b@h'].map((n, i) => ({ nodeName: n, pod: `p${i}` })),
      node: 'c@h',
      connected: [],
    };
    const [erl, none] = (await inErlang([c, { ...c, peers: [] }], [])).views;
    expect(erl!.listedDigest).toBe('255eab48');
    expect(none!.listedDigest).toBe('00000000');
  });

  it('views: generated cases', async () => {
    const cases = fc.sample(viewCase, { numRuns: 400, seed: Number(process.env.CT_SEED ?? 0x6f7470) });
    const erl = await inErlang(cases, []);
    cases.forEach((c, i) =>
      expect({ case: c, view: erl.views[i] }).toEqual({ case: c, view: typescriptView(c) }),
    );
    // The cases reach what they are for: the cap, each self-check result, invalid names.
    const ts = cases.map(typescriptView);
    expect(ts.some((v) => (v.notConnectedOmitted ?? 0) > 0)).toBe(true);
    for (const r of ['Match', 'Mismatch', 'NotListed', 'Unknown'])
      expect(ts.some((v) => v.selfCheck.result === r)).toBe(true);
    expect(ts.some((v) => (v.invalid ?? 0) > 0)).toBe(true);
  });

  it('the budget: generated runs of changes, waits and outcomes', async () => {
    const cases = fc.sample(planCase, { numRuns: 300, seed: Number(process.env.CT_SEED ?? 0x6f7470) });
    const erl = await inErlang([], cases);
    cases.forEach((c, i) =>
      expect({ case: i, plans: erl.plans[i] }).toEqual({ case: i, plans: typescriptPlans(c) }),
    );
    const all = cases.flatMap(typescriptPlans).map((p) => p.action);
    for (const a of ['write', 'wait', 'idle']) expect(all).toContain(a);
  });
});
