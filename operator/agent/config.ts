import { processOptions, type OptionsSpec, type ProcessConfig } from '../config/load.js';
import { UsageError } from '../config/usage-error.js';
import {
  CONNECTORS,
  CONNECTOR_KINDS,
  ConnectorConfigError,
  connectorDefinition,
  validateConnectorConfig,
  type ConnectorConfig,
} from './connectors/index.js';

/** Every registered connector's own keys, in registry order. */
const connectorOptions: OptionsSpec = Object.assign({}, ...CONNECTORS.map((d) => d.options)) as OptionsSpec;

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
  connector: { type: 'string', description: 'how peers are connected', enum: CONNECTOR_KINDS },
  podName: {
    type: 'string',
    description: "this pod's name, for the self check (default: $POD_NAME, else $HOSTNAME)",
  },
  nodeName: {
    type: 'string',
    description:
      "the local node's real name, e.g. web-0@10.1.2.3 (default: $RELEASE_NODE; erlang: asked from the node)",
  },
  stateFile: {
    type: 'string',
    description:
      'file where the agent keeps the nodes it connected, so that after its own restart it still disconnects a peer removed meanwhile (put it on a volume that outlives the container, e.g. an emptyDir)',
  },
  resyncInterval: {
    type: 'duration',
    description:
      'every this long, one round connects every listed peer again even when it is believed connected (0: never); for an exec program without --exec-list, so a restarted application is told the whole list',
    default: '0s',
  },
  report: {
    type: 'boolean',
    description:
      "write this member's report (ClusterTopologyMember: what it is connected to, for the topology's MESH); needs create/patch on clustertopologymembers, and a refusal is said once and changes nothing else",
    default: true,
  },
  ...connectorOptions,
  callTimeout: { type: 'duration', description: 'time limit of one connect or disconnect', default: '10s' },
  ...processOptions(8081),
} satisfies OptionsSpec;

export interface AgentConfig extends ProcessConfig {
  topology?: string;
  namespace?: string;
  kubeconfig?: string;
  connector?: string;
  podName?: string;
  nodeName?: string;
  stateFile?: string;
  resyncInterval: string;
  report: boolean;
  callTimeout: string;
  /** The connectors' own keys (see each connector's definition). */
  [connectorKey: string]: unknown;
}

const flag = (k: string) => `--${k.replace(/[A-Z]/g, (x) => '-' + x.toLowerCase())}`;

/** Whether a key holds something other than its default (an empty list counts as not given). */
function given(c: AgentConfig, key: string): boolean {
  const v = c[key];
  if (v === undefined || (Array.isArray(v) && v.length === 0)) return false;
  return JSON.stringify(v) !== JSON.stringify(connectorOptions[key]?.default);
}

/** The connector's own configuration from the agent's flat keys; a key of another connector is an error. */
export function connectorConfigFrom(c: AgentConfig, timeoutMs: number): ConnectorConfig {
  if (!c.topology) throw new UsageError('agent: --topology NAME is required');
  if (!c.connector) throw new UsageError(`agent: --connector ${CONNECTOR_KINDS.join('|')} is required`);
  const def = connectorDefinition(c.connector);
  if (!def) throw new UsageError(`agent: --connector must be one of ${CONNECTOR_KINDS.join(', ')}`);
  const wrong = Object.keys(connectorOptions).filter((k) => !(k in def.options) && given(c, k));
  if (wrong.length)
    throw new UsageError(`agent: ${wrong.map(flag).join(', ')} does not apply to --connector ${c.connector}`);
  const raw = def.fromOptions(c, { nodeName: c.nodeName, callTimeoutMs: timeoutMs });
  for (const k of Object.keys(raw)) if (raw[k] === undefined) delete raw[k];
  try {
    return validateConnectorConfig(raw);
  } catch (e) {
    if (e instanceof ConnectorConfigError) throw new UsageError(`agent: ${e.message}`);
    throw e;
  }
}
