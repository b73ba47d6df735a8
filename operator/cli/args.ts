import type { ParseArgsOptionsConfig } from 'node:util';
import { UsageError } from './command.js';

/**
 * Flags and argument checks shared by the read-only commands (resolve, analyze, explain), so
 * each spells `-o`, `-n` and `--kubeconfig` the way kubectl does and refuses the same mistakes
 * with the same words.
 */

export type OutputFormat = 'table' | 'json';

export const OUTPUT_FORMATS: readonly OutputFormat[] = ['table', 'json'];

export const outputOption: ParseArgsOptionsConfig = { output: { type: 'string', short: 'o' } };

/** The flags of a command that talks to the cluster, named as kubectl names them. */
export const clusterOptions: ParseArgsOptionsConfig = {
  namespace: { type: 'string', short: 'n' },
  kubeconfig: { type: 'string' },
};

/** `-o`'s value; table when absent. */
export function outputFormat(command: string, values: Record<string, unknown>): OutputFormat {
  const v = values.output;
  if (v === undefined) return 'table';
  if (typeof v === 'string' && (OUTPUT_FORMATS as readonly string[]).includes(v)) return v as OutputFormat;
  throw new UsageError(`${command}: -o/--output must be table or json, not ${JSON.stringify(v)}`);
}

/** A string flag's value, refusing an empty one (`-f ''` is a mistake, never a request). */
export function stringFlag(
  command: string,
  values: Record<string, unknown>,
  flag: string,
): string | undefined {
  const v = values[flag];
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || v === '') throw new UsageError(`${command}: --${flag} needs a value`);
  return v;
}

/**
 * Exactly the named positionals, in order: a missing one is named, an extra one is quoted.
 * Returns them in the order of `names`.
 */
export function positionalsExactly(
  command: string,
  positionals: readonly string[],
  names: readonly string[],
): string[] {
  if (positionals.length > names.length)
    throw new UsageError(`${command}: unexpected argument ${JSON.stringify(positionals[names.length])}`);
  if (positionals.length < names.length) {
    const missing = names.slice(positionals.length);
    throw new UsageError(`${command}: missing ${missing.join(' and ')}`);
  }
  for (const [i, p] of positionals.entries())
    if (p === '') throw new UsageError(`${command}: ${names[i]} must not be empty`);
  return [...positionals];
}
