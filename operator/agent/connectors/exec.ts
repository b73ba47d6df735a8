import { isAbsolute } from 'node:path';
import { checkNodeName } from '../../naming/node-name.js';
import { describeRun, isExecutableFile, runProcess, type SpawnInfo } from './process.js';
import {
  invalidNameResult,
  type ConnectResult,
  type Connector,
  type ConnectorAction,
  type ConnectorDefinition,
  type ListResult,
} from './types.js';

/**
 * The exec connector runs a configured program once per change:
 *
 *     <program> [...args] connect <node>
 *     <program> [...args] disconnect <node>
 *
 * from an argument array (no shell), with the agent's environment plus CTOPO_ACTION and
 * CTOPO_NODE. Exit code 0 is success; anything else, a signal, or the time limit (the program's
 * whole process group is killed) is a failure. The node name has passed the node-name grammar,
 * but it may begin with `-`: a program that parses options should stop option parsing before it.
 *
 * With `list: true` the program also answers `<program> [...args] list` (CTOPO_ACTION=list) by
 * printing the nodes the application is connected to now, one per line, and exiting 0. Each round
 * then asks it and connects what is missing — so an application that restarted and forgot its
 * peers is told them again within one polling interval. Without it, a connect is taken to hold
 * until this agent disconnects the node (`connectsStick`): the program is called per change only,
 * and only the agent's `--resync-interval` tells a restarted application the whole list again.
 */

export interface ExecConnectorConfig {
  readonly kind: 'exec';
  /** Absolute path of the program. */
  readonly program: string;
  /** Arguments placed before the action and the node. */
  readonly args?: readonly string[];
  /** Per call. Default 10000. */
  readonly timeoutMs?: number;
  /** The program answers `list` with the connected nodes, one per line. Default false. */
  readonly list?: boolean;
}

export interface ExecConnectorDeps {
  /** The environment given to the program (plus CTOPO_ACTION, CTOPO_NODE). Default: process.env. */
  readonly env?: NodeJS.ProcessEnv;
  readonly onSpawn?: (info: SpawnInfo) => void;
}

export class ExecConfigError extends Error {}

/** The nodes a `list` answer names: one per non-blank line, surrounding blanks ignored. */
export function parseListOutput(
  stdout: string,
): { ok: true; nodes: string[] } | { ok: false; problem: string } {
  const nodes: string[] = [];
  for (const raw of stdout.split('\n')) {
    const line = raw.trim();
    if (line === '') continue;
    const check = checkNodeName(line);
    if (!check.ok)
      return { ok: false, problem: `line ${JSON.stringify(line.slice(0, 80))}: ${check.problem}` };
    nodes.push(line);
  }
  return { ok: true, nodes };
}

export async function createExecConnector(
  config: ExecConnectorConfig,
  deps: ExecConnectorDeps = {},
): Promise<Connector> {
  if (!isAbsolute(config.program))
    throw new ExecConfigError(`program ${JSON.stringify(config.program)} must be an absolute path`);
  if (!(await isExecutableFile(config.program)))
    throw new ExecConfigError(`program ${JSON.stringify(config.program)} is not an executable file`);
  const timeoutMs = config.timeoutMs ?? 10_000;
  const baseArgs = [...(config.args ?? [])];
  const env = deps.env ?? process.env;
  const spawnHook = deps.onSpawn ? { onSpawn: deps.onSpawn } : {};

  async function run(action: ConnectorAction, node: string): Promise<ConnectResult> {
    const check = checkNodeName(node);
    if (!check.ok) return invalidNameResult(action, node, check.problem);
    const r = await runProcess(config.program, [...baseArgs, action, node], {
      env: { ...env, CTOPO_ACTION: action, CTOPO_NODE: node },
      timeoutMs,
      ...spawnHook,
    });
    if (r.code === 0 && !r.timedOut) return { ok: true, action, node, ms: r.ms };
    return {
      ok: false,
      action,
      node,
      ms: r.ms,
      failure: r.timedOut ? 'Timeout' : r.code !== null ? 'Refused' : 'Error',
      error: `${config.program} ${action} ${node}: ${describeRun(r)}`,
    };
  }

  async function list(): Promise<ListResult> {
    const r = await runProcess(config.program, [...baseArgs, 'list'], {
      env: { ...env, CTOPO_ACTION: 'list' },
      timeoutMs,
      ...spawnHook,
    });
    if (r.code !== 0 || r.timedOut)
      return {
        ok: false,
        failure: r.timedOut ? 'Timeout' : r.code !== null ? 'Refused' : 'Error',
        error: `${config.program} list: ${describeRun(r)}`,
      };
    const parsed = parseListOutput(r.stdout);
    if (!parsed.ok)
      return { ok: false, failure: 'Error', error: `${config.program} list: ${parsed.problem}` };
    return parsed;
  }

  return {
    kind: 'exec',
    ...(config.list ? { connected: list } : { connectsStick: true }),
    connect: (node) => run('connect', node),
    disconnect: (node) => run('disconnect', node),
    close: async () => {},
  };
}

export const execConnector: ConnectorDefinition<ExecConnectorConfig> = {
  kind: 'exec',
  help: `runs --exec-program [--exec-args…] connect|disconnect NODE per change (no shell).
With --exec-list the program also answers "list" with the nodes the application holds, one
per line; every round then re-connects what the application lost (e.g. after it restarted).`,
  options: {
    execProgram: {
      type: 'string',
      description:
        'exec: absolute path of the program run per change as PROGRAM [ARGS…] connect|disconnect NODE',
    },
    execArgs: { type: 'list', description: 'exec: extra leading arguments, comma-separated', default: [] },
    execList: {
      type: 'boolean',
      description:
        'exec: the program answers PROGRAM [ARGS…] list with the connected nodes, one per line; asked every round',
      default: false,
    },
  },
  schema: {
    type: 'object',
    required: ['kind', 'program'],
    properties: {
      kind: { const: 'exec' },
      program: { type: 'string', pattern: '^/' },
      args: { type: 'array', items: { type: 'string' } },
      timeoutMs: { type: 'integer', minimum: 1, maximum: 600000 },
      list: { type: 'boolean' },
    },
  },
  fromOptions: (o, common) => ({
    kind: 'exec',
    program: o.execProgram,
    args: o.execArgs,
    timeoutMs: common.callTimeoutMs,
    ...(o.execList === true ? { list: true } : {}),
  }),
  create: (config, deps) => createExecConnector(config, deps),
};
