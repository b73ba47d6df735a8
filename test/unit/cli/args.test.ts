import { describe, expect, it } from '@jest/globals';
import { UsageError } from '../../../operator/cli/command.js';
import { outputFormat, positionalsExactly, stringFlag } from '../../../operator/cli/args.js';

describe('outputFormat', () => {
  it('defaults to table and accepts table and json', () => {
    expect(outputFormat('x', {})).toBe('table');
    expect(outputFormat('x', { output: 'table' })).toBe('table');
    expect(outputFormat('x', { output: 'json' })).toBe('json');
  });
  it.each(['yaml', 'wide', 'JSON', ''])('refuses %j, naming the flag and the value', (v) => {
    expect(() => outputFormat('analyze', { output: v })).toThrow(UsageError);
    expect(() => outputFormat('analyze', { output: v })).toThrow(
      `analyze: -o/--output must be table or json, not ${JSON.stringify(v)}`,
    );
  });
});

describe('stringFlag', () => {
  it('returns the value, or undefined when absent', () => {
    expect(stringFlag('x', { f: 'a.json' }, 'f')).toBe('a.json');
    expect(stringFlag('x', {}, 'f')).toBeUndefined();
  });
  it('refuses an empty value', () => {
    expect(() => stringFlag('resolve', { topology: '' }, 'topology')).toThrow(
      'resolve: --topology needs a value',
    );
  });
});

describe('positionalsExactly', () => {
  it('returns the positionals when they are exactly the named ones', () => {
    expect(positionalsExactly('explain', ['web', 'web-0'], ['NAME', 'POD'])).toEqual(['web', 'web-0']);
  });
  it('names what is missing', () => {
    expect(() => positionalsExactly('explain', [], ['NAME', 'POD'])).toThrow('explain: missing NAME and POD');
    expect(() => positionalsExactly('explain', ['web'], ['NAME', 'POD'])).toThrow('explain: missing POD');
  });
  it('quotes the first extra argument', () => {
    expect(() => positionalsExactly('analyze', ['web', 'more'], ['NAME'])).toThrow(
      'analyze: unexpected argument "more"',
    );
  });
  it('refuses an empty positional', () => {
    expect(() => positionalsExactly('explain', ['web', ''], ['NAME', 'POD'])).toThrow(
      'explain: POD must not be empty',
    );
  });
});
