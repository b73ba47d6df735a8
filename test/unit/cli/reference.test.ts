import { describe, expect, it } from '@jest/globals';
import { readFile } from 'node:fs/promises';
import { REFERENCE_PATH, flagsInHelp, renderReference } from '../../../operator/cli/reference.js';
import { commands } from '../../../operator/cli/commands/index.js';
import type { Command } from '../../../operator/cli/command.js';

// Commands load their code on demand; the help and options are the loaded command's. One at a
// time: jest's module linker does not take concurrent dynamic imports of one graph.
const loaded: Command[] = [];
for (const c of commands) loaded.push(await c.load());

describe('docs/reference.md', () => {
  it('holds exactly what the schema, the CLI and the metrics generate (run `npm run generate`)', async () => {
    expect(await readFile(REFERENCE_PATH, 'utf8')).toBe(await renderReference());
  });

  it.each(loaded.map((c) => [c.name, c] as const))(
    '`ctopo %s --help` names every flag the command takes, and takes every flag it names',
    (_name, cmd) => {
      const taken = new Set([...Object.keys(cmd.options), 'help']);
      const named = flagsInHelp(cmd.help);
      expect([...taken].filter((f) => f !== 'help' && !named.has(f)).sort()).toEqual([]);
      expect([...named].filter((f) => !taken.has(f)).sort()).toEqual([]);
    },
  );
});
