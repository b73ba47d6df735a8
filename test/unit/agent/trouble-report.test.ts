import { describe, expect, it } from '@jest/globals';
import { reportTrouble, type Trouble, type TroubleLog } from '../../../operator/agent/trouble-report.js';

/** Checks in a row on one clock, as the agent makes them. */
function reporter(now: () => number, remindMs: number) {
  let log: TroubleLog | undefined;
  return {
    update(trouble: Trouble | undefined) {
      const r = reportTrouble(log, trouble, now(), remindMs);
      log = r.log;
      return r.line;
    },
  };
}

describe('trouble is logged once per change, then reminded periodically', () => {
  it('on a fake clock', () => {
    let t = 0;
    const r = reporter(() => t, 300_000);
    const down = { cause: 'ApiUnreachable', message: 'keeping the current connections: no answer' };
    expect(r.update(undefined)).toBeUndefined();
    expect(r.update(down)).toMatchObject({
      level: 'warn',
      message: down.message,
      meta: { cause: 'ApiUnreachable' },
    });
    // Checked every second for almost five minutes: silence.
    for (t = 1000; t < 300_000; t += 1000)
      expect(r.update({ ...down, message: `${down.message} ${t}` })).toBeUndefined();
    t = 300_000;
    expect(r.update(down)).toMatchObject({
      level: 'warn',
      message: `still: ${down.message}`,
      meta: { forSeconds: 300 },
    });
    t += 1000;
    expect(r.update(down)).toBeUndefined();
    // A change of cause is a new line at once.
    expect(r.update({ cause: 'Forbidden', message: 'keeping: 403' })).toMatchObject({
      meta: { cause: 'Forbidden' },
    });
    t += 5000;
    expect(r.update(undefined)).toMatchObject({
      level: 'info',
      message: expect.stringContaining('after 5 s'),
    });
    expect(r.update(undefined)).toBeUndefined();
  });
});
