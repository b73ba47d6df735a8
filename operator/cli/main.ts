import { EXIT_USAGE, UsageError, parseCommandLine, type Command, type CommandContext } from './command.js';
import { commands } from './commands/index.js';
import { PACKAGE_VERSION } from '../version.js';

const program = 'ctopo';

function overview(): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  return [
    `${program} — forms clusters of distributed nodes from Kubernetes pods, and analyses their failure domains.`,
    '',
    `Usage: ${program} <command> [flags]`,
    '',
    'Commands:',
    ...commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    `Run '${program} <command> --help' for a command's flags; '${program} --version' prints the version.`,
  ].join('\n');
}

/** Runs one command line; returns the exit code (also set on the process). */
export async function main(argv: string[], ctx?: Partial<CommandContext>): Promise<number> {
  const io: CommandContext = {
    out: ctx?.out ?? ((t) => process.stdout.write(t.endsWith('\n') ? t : t + '\n')),
    err: ctx?.err ?? ((t) => process.stderr.write(t.endsWith('\n') ? t : t + '\n')),
    stdin: ctx?.stdin ?? process.stdin,
  };
  const code = await dispatch(argv, io);
  process.exitCode = code;
  return code;
}

async function dispatch(argv: string[], io: CommandContext): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    io.out(overview());
    return name === undefined ? EXIT_USAGE : 0;
  }
  if (name === '--version') {
    io.out(`${program} ${PACKAGE_VERSION}`);
    return 0;
  }
  const entry = commands.find((c) => c.name === name);
  if (!entry) {
    io.err(`${program}: unknown command '${name}'. Commands: ${commands.map((c) => c.name).join(', ')}.`);
    return EXIT_USAGE;
  }
  let cmd: Command;
  try {
    cmd = await entry.load();
  } catch (e) {
    io.err(`${program} ${name}: ${(e as Error).message}`);
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
      io.err(`${program} ${e.message}`);
      io.err(`Run '${program} ${cmd.name} --help' for usage.`);
      return EXIT_USAGE;
    }
    io.err(`${program} ${cmd.name}: ${(e as Error).message}`);
    return 1;
  }
}
