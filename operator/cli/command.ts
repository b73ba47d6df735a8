import { parseArgs, type ParseArgsOptionsConfig } from 'node:util';
import { UsageError } from '../config/usage-error.js';

export { UsageError };

/** sysexits' EX_USAGE: the command line or an input was wrong. */
export const EXIT_USAGE = 64;

export interface CommandContext {
  out: (text: string) => void;
  err: (text: string) => void;
  stdin: NodeJS.ReadableStream;
}

export interface Command {
  name: string;
  /** The full help text, printed by `ctopo <name> --help`. */
  help: string;
  options: ParseArgsOptionsConfig;
  allowPositionals?: boolean;
  run(values: Record<string, unknown>, positionals: string[], ctx: CommandContext): Promise<number>;
}

/** Parses `argv` strictly: an unknown flag or a missing value is a UsageError naming it. */
export function parseCommandLine(
  cmd: Command,
  argv: string[],
): { values: Record<string, unknown>; positionals: string[]; help: boolean } {
  try {
    const { values, positionals } = parseArgs({
      args: argv,
      options: { ...cmd.options, help: { type: 'boolean', short: 'h' } },
      allowPositionals: cmd.allowPositionals ?? false,
      allowNegative: true,
      strict: true,
    });
    const { help, ...rest } = values as Record<string, unknown>;
    return { values: rest, positionals, help: help === true };
  } catch (e) {
    const msg = (e as Error).message.replace(/\. To specify a positional argument.*$/s, '');
    throw new UsageError(`${cmd.name}: ${msg}`);
  }
}
