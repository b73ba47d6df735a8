import { describe, expect, it } from '@jest/globals';
import { setCondition } from '../../../operator/controller/conditions.js';

const t = (s: number) => new Date(Date.UTC(2026, 11, 2, 12, 0, s));

describe('conditions', () => {
  it('move lastTransitionTime only when the status flips', () => {
    let c = setCondition([], { type: 'Ready', status: 'True', reason: 'A', message: 'm' }, t(0), 1);
    c = setCondition(c, { type: 'Ready', status: 'True', reason: 'B', message: 'n' }, t(5), 2);
    expect(c).toEqual([
      {
        type: 'Ready',
        status: 'True',
        reason: 'B',
        message: 'n',
        observedGeneration: 2,
        lastTransitionTime: t(0).toISOString(),
      },
    ]);
    c = setCondition(c, { type: 'Ready', status: 'False', reason: 'C', message: 'o' }, t(9), 2);
    expect(c[0]!.lastTransitionTime).toBe(t(9).toISOString());
  });
});
