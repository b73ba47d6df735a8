import { EXIT_USAGE, UsageError, parseCommandLine, type Command, type CommandContext } from './command.js';

/**
 * A program of subcommands: the overview, the dispatch and the error and exit-code conventions.
 * `ctopo` is one (`main.ts`); the repository's dev tools are another (`dev/main.ts`).
 */

export interface CommandEntry {
  name: string;
  /** One line for the overview. */
  summary: string;
  load: () => Promise<Command>;
}

export interface Program {
  /** The program's name, first in its error messages. */
  name: string;
  /** What a user types before a command's name, for the help hint (`ctopo`, `npm run ctopo-dev --`). */
  invoke: string;
  /** The overview's first line. */
  title: string;
  commands: readonly CommandEntry[];
  /** What `--version` prints after the name; without it there is no `--version`. */
  version?: string;
}

function overview(p: Program): string {
  const width = Math.max(...p.commands.map((c) => c.name.length));
  return [
    p.title,
    '',
    `Usage: ${p.invoke} <command> [flags]`,
    '',
    'Commands:',
    ...p.commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    `Run '${p.invoke} <command> --help' for a command's flags${p.version ? `; '${p.invoke} --version' prints the version` : ''}.`,
  ].join('\n');
}

/** Runs one command line of `program`; returns the exit code (also set on the process). */
export async function runProgram(
  program: Program,
  argv: string[],
  ctx?: Partial<CommandContext>,
): Promise<number> {
  const io: CommandContext = {
    out: ctx?.out ?? ((t) => process.stdout.write(t.endsWith('\n') ? t : t + '\n')),
    err: ctx?.err ?? ((t) => process.stderr.write(t.endsWith('\n') ? t : t + '\n')),
    stdin: ctx?.stdin ?? process.stdin,
  };
  const code = await dispatch(program, argv, io);
  process.exitCode = code;
  return code;
}

async function dispatch(p: Program, argv: string[], io: CommandContext): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    io.out(overview(p));
    return name === undefined ? EXIT_USAGE : 0;
  }
  if (name === '--version' && p.version !== undefined) {
    io.out(`${p.name} ${p.version}`);
    return 0;
  }
  const entry = p.commands.find((c) => c.name === name);
  if (!entry) {
    io.err(`${p.name}: unknown command '${name}'. Commands: ${p.commands.map((c) => c.name).join(', ')}.`);
    return EXIT_USAGE;
  }
  let cmd: Command;
  try {
    cmd = await entry.load();
  } catch (e) {
    io.err(`${p.name} ${name}: ${(e as Error).message}`);
    return 1;
  }
  try {
    const parsed = parseCommandLine(cmd, rest);
    if (parsed.help) {
      io.out(cmd.help);
      return 0;
    }
    return await cmd.run(parsed.values, parsed.positionals, io);
  } catch (e) {
    if (e instanceof UsageError) {
      io.err(`${p.name} ${e.message}`);
      io.err(`Run '${p.invoke} ${cmd.name} --help' for usage.`);
      return EXIT_USAGE;
    }
    io.err(`${p.name} ${cmd.name}: ${(e as Error).message}`);
    return 1;
  }
}
