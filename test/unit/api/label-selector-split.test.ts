import { describe, expect, it } from '@jest/globals';
import { splitSelector } from '../../../operator/api/label-selector.js';

describe('splitSelector', () => {
  it('keeps a single requirement whole', () => {
    expect(splitSelector('netzlive/pod-type=cluster-service')).toEqual(['netzlive/pod-type=cluster-service']);
  });
  it('splits equality requirements at commas and trims them', () => {
    expect(splitSelector('app=web, tier!=cache ,!legacy')).toEqual(['app=web', 'tier!=cache', '!legacy']);
  });
  it('keeps the commas inside a set-based requirement', () => {
    expect(splitSelector('app in (web,api),tier notin (cache, db),has-key')).toEqual([
      'app in (web,api)',
      'tier notin (cache, db)',
      'has-key',
    ]);
  });
  it('drops empty pieces (the server judges the selector as a whole first)', () => {
    expect(splitSelector(' , a=b,,')).toEqual(['a=b']);
    expect(splitSelector('')).toEqual([]);
  });
  it('survives unbalanced parentheses without losing text', () => {
    expect(splitSelector('a in (x,y')).toEqual(['a in (x,y']);
    expect(splitSelector('a),b=c')).toEqual(['a)', 'b=c']);
  });
});
