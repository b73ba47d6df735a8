import { describe, expect, it } from '@jest/globals';

describe('toolchain', () => {
  it('runs on node 24', () => {
    expect(Number(process.versions.node.split('.')[0])).toBe(24);
  });
});
