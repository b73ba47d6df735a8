import { describe, expect, it } from '@jest/globals';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { InputReadError, readInput } from '../../../operator/cli/read-input.js';

const none = Readable.from([]);

describe('readInput', () => {
  it('reads a file as UTF-8', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ctopo-read-'));
    writeFileSync(join(dir, 'p.json'), '{"kind":"Pod","metadata":{"name":"wéb"}}');
    await expect(readInput(join(dir, 'p.json'), none, '-f')).resolves.toContain('wéb');
  });
  it('reads standard input for -, across chunks', async () => {
    const stdin = Readable.from([Buffer.from('{"a":'), Buffer.from('"é"}')]);
    await expect(readInput('-', stdin, '-f')).resolves.toBe('{"a":"é"}');
  });
  it('says which file and why in words', async () => {
    await expect(readInput('/nonexistent/pods.json', none, '-f')).rejects.toThrow(
      new InputReadError('cannot read -f /nonexistent/pods.json: no such file'),
    );
    const dir = mkdtempSync(join(tmpdir(), 'ctopo-read-'));
    await expect(readInput(dir, none, '--layout')).rejects.toThrow(
      `cannot read --layout ${dir}: it is a directory`,
    );
  });
  it('reports a failing standard input', async () => {
    const broken = new Readable({
      read() {
        this.destroy(new Error('boom'));
      },
    });
    await expect(readInput('-', broken, '-f')).rejects.toThrow('cannot read -f - (standard input): boom');
  });
});
