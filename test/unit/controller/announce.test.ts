import { describe, expect, it } from '@jest/globals';
import { peerChanges } from '../../../operator/controller/announce.js';

describe('peerChanges', () => {
  it('names who joined and who left', () => {
    const p = (n: string) => ({
      nodeName: n,
      pod: n,
      uid: n,
      podIP: '1.1.1.1',
      node: '',
      hostSource: 'PodIP' as const,
      nameSource: 'PodName' as const,
      terminating: false,
    });
    expect(peerChanges([p('a'), p('b')], [p('b'), p('c')])).toEqual({ joined: ['c'], left: ['a'] });
  });
});
