import { processOptions, type OptionsSpec, type ProcessConfig } from '../config/load.js';
import { UsageError } from '../config/usage-error.js';
import { ConnectorConfigError, validateConnectorConfig, type ConnectorConfig } from './connectors/index.js';

/** The agent's configuration keys: flags `--kebab-case`, env `CTOPO_UPPER_SNAKE`, or `--config FILE`. */
export const agentOptions = {
  topology: { type: 'string', description: 'name of the ClusterTopology to follow (required)' },
  namespace: {
    type: 'string',
    description: "its namespace (default: $POD_NAMESPACE, else the kubeconfig context's)",
  },
  kubeconfig: {
    type: 'string',
    description: 'kubeconfig file (default: $KUBECONFIG, ~/.kube/config, or the in-cluster service account)',
  },
  connector: { type: 'string', description: 'how peers are connected', enum: ['erlang', 'exec', 'file'] },
  podName: {
    type: 'string',
    description: "this pod's name, for the self check (default: $POD_NAME, else $HOSTNAME)",
  },
  nodeName: {
    type: 'string',
    description:
      "the local node's real name, e.g. web-0@10.1.2.3 (default: $RELEASE_NODE; erlang: asked from the node)",
  },
  cookieFile: {
    type: 'string',
    description: 'erlang: file holding the cookie (default: the variable named by --cookie-env)',
  },
  cookieEnv: {
    type: 'string',
    description: 'erlang: environment variable holding the cookie',
    default: 'RELEASE_COOKIE',
  },
  erlCall: {
    type: 'string',
    description: 'erlang: path of erl_call (default: on PATH, else under /usr/lib/erlang)',
  },
  distribution: {
    type: 'string',
    description:
      'erlang: long (name) or short (sname) node names (default: $RELEASE_DISTRIBUTION, else by the host)',
    enum: ['name', 'sname'],
  },
  execProgram: {
    type: 'string',
    description:
      'exec: absolute path of the program run per change as PROGRAM [ARGS…] connect|disconnect NODE',
  },
  execArgs: { type: 'list', description: 'exec: extra leading arguments, comma-separated', default: [] },
  filePath: { type: 'string', description: 'file: absolute path of the peer list, rewritten atomically' },
  fileFormat: {
    type: 'string',
    description: 'file: one node per line, or JSON {"peers":[…]}',
    enum: ['lines', 'json'],
    default: 'lines',
  },
  callTimeout: { type: 'duration', description: 'time limit of one connect or disconnect', default: '10s' },
  ...processOptions(8081),
} satisfies OptionsSpec;

export interface AgentConfig extends ProcessConfig {
  topology?: string;
  namespace?: string;
  kubeconfig?: string;
  connector?: 'erlang' | 'exec' | 'file';
  podName?: string;
  nodeName?: string;
  cookieFile?: string;
  cookieEnv: string;
  erlCall?: string;
  distribution?: 'name' | 'sname';
  execProgram?: string;
  execArgs: string[];
  filePath?: string;
  fileFormat: 'lines' | 'json';
  callTimeout: string;
}

/** The connector's own configuration from the agent's flat keys; a key of another connector is an error. */
export function connectorConfigFrom(c: AgentConfig, timeoutMs: number): ConnectorConfig {
  if (!c.topology) throw new UsageError('agent: --topology NAME is required');
  if (!c.connector) throw new UsageError('agent: --connector erlang|exec|file is required');
  const given = (keys: (keyof AgentConfig)[]) =>
    keys.filter((k) => c[k] !== undefined && !(Array.isArray(c[k]) && (c[k] as unknown[]).length === 0));
  const foreign: Record<string, (keyof AgentConfig)[]> = {
    erlang: given(['execProgram', 'filePath']),
    exec: given(['cookieFile', 'erlCall', 'distribution', 'filePath']),
    file: given(['cookieFile', 'erlCall', 'distribution', 'execProgram']),
  };
  const wrong = foreign[c.connector]!;
  if (wrong.length)
    throw new UsageError(
      `agent: ${wrong.map((k) => `--${k.replace(/[A-Z]/g, (x) => '-' + x.toLowerCase())}`).join(', ')} does not apply to --connector ${c.connector}`,
    );
  let raw: Record<string, unknown>;
  switch (c.connector) {
    case 'erlang':
      raw = {
        kind: 'erlang',
        nodeName: c.nodeName,
        distribution: c.distribution,
        cookieFile: c.cookieFile,
        cookieEnv: c.cookieEnv,
        erlCall: c.erlCall,
        timeoutMs: Math.max(1000, timeoutMs),
      };
      break;
    case 'exec':
      raw = { kind: 'exec', program: c.execProgram, args: c.execArgs, timeoutMs };
      break;
    case 'file':
      raw = { kind: 'file', path: c.filePath, format: c.fileFormat };
      break;
  }
  for (const k of Object.keys(raw)) if (raw[k] === undefined) delete raw[k];
  try {
    return validateConnectorConfig(raw);
  } catch (e) {
    if (e instanceof ConnectorConfigError) throw new UsageError(`agent: ${e.message}`);
    throw e;
  }
}
