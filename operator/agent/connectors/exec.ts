import { isAbsolute } from 'node:path';
import { checkNodeName } from '../../naming/node-name.js';
import { describeRun, isExecutableFile, runProcess, type SpawnInfo } from './process.js';
import { invalidNameResult, type ConnectResult, type Connector, type ConnectorAction } from './types.js';

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
 */

export interface ExecConnectorConfig {
  readonly kind: 'exec';
  /** Absolute path of the program. */
  readonly program: string;
  /** Arguments placed before the action and the node. */
  readonly args?: readonly string[];
  /** Per call. Default 10000. */
  readonly timeoutMs?: number;
}

export interface ExecConnectorDeps {
  /** The environment given to the program (plus CTOPO_ACTION, CTOPO_NODE). Default: process.env. */
  readonly env?: NodeJS.ProcessEnv;
  readonly onSpawn?: (info: SpawnInfo) => void;
}

export class ExecConfigError extends Error {}

export async function createExecConnector(
  config: ExecConnectorConfig,
  deps: ExecConnectorDeps = {},
): Promise<Connector> {
  if (!isAbsolute(config.program))
    throw new ExecConfigError(`program ${JSON.stringify(config.program)} must be an absolute path`);
  if (!(await isExecutableFile(config.program)))
    throw new ExecConfigError(`program ${JSON.stringify(config.program)} is not an executable file`);
  const timeoutMs = config.timeoutMs ?? 10_000;
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1)
    throw new ExecConfigError('timeoutMs must be a positive integer');
  const baseArgs = [...(config.args ?? [])];
  const env = deps.env ?? process.env;

  async function run(action: ConnectorAction, node: string): Promise<ConnectResult> {
    const check = checkNodeName(node);
    if (!check.ok) return invalidNameResult(action, node, check.problem);
    const r = await runProcess(config.program, [...baseArgs, action, node], {
      env: { ...env, CTOPO_ACTION: action, CTOPO_NODE: node },
      timeoutMs,
      ...(deps.onSpawn ? { onSpawn: deps.onSpawn } : {}),
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

  return {
    kind: 'exec',
    connectsStick: true,
    connect: (node) => run('connect', node),
    disconnect: (node) => run('disconnect', node),
    close: async () => {},
  };
}
