import { describe, expect, it } from '@jest/globals';
import { readFile } from 'node:fs/promises';
import { REFERENCE_PATH, flagsInHelp, renderReference } from '../../../dev/generate/reference.js';
import { commands } from '../../../operator/cli/commands/index.js';
import { devCommands } from '../../../dev/commands/index.js';

describe('docs/reference.md', () => {
  it('holds exactly what the schema, the CLI and the metrics generate (run `npm run generate`)', async () => {
    expect(await readFile(REFERENCE_PATH, 'utf8')).toBe(await renderReference());
  });

  it.each([...commands, ...devCommands].map((c) => [c.name, c] as const))(
    '`%s --help` names every flag the command takes, and takes every flag it names',
    async (_name, entry) => {
      const cmd = await entry.load();
      const taken = new Set([...Object.keys(cmd.options), 'help']);
      const named = flagsInHelp(cmd.help);
      expect([...taken].filter((f) => f !== 'help' && !named.has(f)).sort()).toEqual([]);
      expect([...named].filter((f) => !taken.has(f)).sort()).toEqual([]);
    },
  );
});
