import type { CommandContext } from './command.js';
import { commands } from './commands/index.js';
import { runProgram, type Program } from './program.js';
import { PACKAGE_VERSION } from '../config/version.js';

const ctopo: Program = {
  name: 'ctopo',
  invoke: 'ctopo',
  title:
    'ctopo — forms clusters of distributed nodes from Kubernetes pods, and analyses their failure domains.',
  commands,
  version: PACKAGE_VERSION,
};

/** Runs one `ctopo` command line; returns the exit code (also set on the process). */
export function main(argv: string[], ctx?: Partial<CommandContext>): Promise<number> {
  return runProgram(ctopo, argv, ctx);
}
