import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFile } from 'node:fs/promises';
import { REPORT_STALE_AFTER_MS } from '../../../operator/protocol/report-plan.js';
import { BeamMembers } from '../../support/beam-members.js';
import { waitFor } from '../../support/wait.js';

/**
 * A member whose VM is frozen (SIGSTOP) stops reporting; past the staleness limit (the 5 minute
 * renewal plus 60 s) its report is stale and the status says so, while the members that run on
 * keep theirs current by renewing them. Resumed, it reports again. Real API server, real
 * operator, real BEAM nodes running the OTP library. Slow by nature (the limit is the protocol's,
 * six minutes), so it runs once, not once per BEAM cell (test/e2e/beam-client/ does).
 */

const STALE_WAIT = REPORT_STALE_AFTER_MS + 120_000;

describe('a frozen member’s report goes stale (real API server, real nodes)', () => {
  let m: BeamMembers;

  beforeAll(async () => {
    m = await BeamMembers.start();
    for (const p of ['a', 'b', 'c']) await m.addPod(p);
    // A tick time past the test's length: a and b keep c's connection while it is frozen, so their
    // views do not change and only the renewal keeps their reports current.
    for (const p of ['a', 'b', 'c']) await m.startMember(p, { erlArgs: ['-kernel', 'net_ticktime', '900'] });
    await waitFor('MESH 3/3', async () => (await m.status())?.mesh?.summary === '3/3', 90_000);
  }, 180_000);
  afterAll(async () => {
    const c = m?.nodes.get('c');
    if (c?.alive) c.child.kill('SIGCONT');
    await m?.stop();
  });

  it(
    'c frozen: its report goes stale and the status says so; a and b, renewing, stay current; resumed, it reports again',
    async () => {
      const c = m.nodes.get('c')!;
      const pid = c.child.pid!;
      // The process signalled is the VM itself (erl execs it), not a wrapper around it.
      expect((await readFile(`/proc/${pid}/comm`, 'utf8')).trim()).toMatch(/^beam/);
      process.kill(pid, 'SIGSTOP');
      const st = await waitFor(
        'c’s report stale in the status',
        async () => {
          const x = await m.status();
          return x?.mesh?.stale?.some((r) => r.pod === 'c') ? x : undefined;
        },
        STALE_WAIT,
        2_000,
      );
      // Only c: a and b renewed theirs, unchanged (their last write is younger than the limit).
      expect(st.mesh!.stale!.map((r) => r.pod)).toEqual(['c']);
      expect(st.mesh!.reporting).toBe(2);
      const reports = await m.reports();
      for (const p of ['a', 'b'])
        expect(Date.now() - Date.parse(reports.get(p)!.status.reportedAt)).toBeLessThan(
          REPORT_STALE_AFTER_MS,
        );
      process.kill(pid, 'SIGCONT');
      await waitFor(
        'c current again, MESH 3/3',
        async () => {
          const x = await m.status();
          return x?.mesh?.summary === '3/3' && !x.mesh.stale;
        },
        120_000,
        1_000,
      );
    },
    STALE_WAIT + 180_000,
  );
});
