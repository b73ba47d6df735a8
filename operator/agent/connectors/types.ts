/**
 * A connector applies the agent's decisions to the application: it connects or disconnects one
 * peer by node name. Connectors never throw from these methods: every outcome, including a
 * refused name or a timeout, comes back as a result that carries a message for logs and a
 * `failure` class suitable as a metrics label.
 */

import type { OptionsSpec } from '../../config/load.js';
import type { SpawnInfo } from './process.js';

/** A connector's name, as `--connector` takes it; the registry (index.ts) lists the known ones. */
export type ConnectorKind = string;
export type ConnectorAction = 'connect' | 'disconnect';

export type FailureClass =
  /** The node name failed the grammar; nothing was run. */
  | 'InvalidNodeName'
  /** The runtime answered and said no (erlang: `false`; exec: non-zero exit). */
  | 'Refused'
  /**
   * No answer in time: the time limit ran out and the process was killed, or (erlang) the node's
   * connect_node failed only after its whole setup time (net_setuptime).
   */
  | 'Timeout'
  /** The local node could not be reached (erlang: erl_call could not connect to it). */
  | 'LocalNodeUnreachable'
  /** Output that could not be understood, a crash by signal, a failed write, a failed spawn. */
  | 'Error';

export type ConnectResult =
  | {
      readonly ok: true;
      readonly action: ConnectorAction;
      readonly node: string;
      /** Wall time spent, milliseconds. */
      readonly ms: number;
      /** e.g. erlang `disconnect_node` answering `false`: the node was not connected. */
      readonly note?: string;
    }
  | {
      readonly ok: false;
      readonly action: ConnectorAction;
      readonly node: string;
      readonly ms: number;
      readonly failure: FailureClass;
      /** Human-readable, for logs: what was attempted and what came back. Never holds a secret. */
      readonly error: string;
    };

export type ListResult =
  | { readonly ok: true; readonly nodes: readonly string[] }
  | { readonly ok: false; readonly failure: FailureClass; readonly error: string };

export type NameResult =
  | { readonly ok: true; readonly name: string }
  | { readonly ok: false; readonly failure: FailureClass; readonly error: string };

export interface BatchResults {
  readonly disconnect: readonly ConnectResult[];
  readonly connect: readonly ConnectResult[];
  /**
   * The local node's connections as the round asked them (`connected()`), when nothing was called
   * after that question: still what the node holds, so the member report need not ask again.
   */
  readonly observed?: readonly string[];
}

export interface Connector {
  readonly kind: ConnectorKind;
  connect(node: string): Promise<ConnectResult>;
  disconnect(node: string): Promise<ConnectResult>;
  /**
   * Applies a whole round at once, when the connector can do better than one call per node
   * (file: one atomic write per round, so a reader never sees a half-applied round). Returns one
   * result per node given.
   */
  applyRound?(ops: { disconnect: readonly string[]; connect: readonly string[] }): Promise<BatchResults>;
  /** The nodes the application is connected to now, as far as the connector can tell. */
  connected?(): Promise<ListResult>;
  /**
   * True when `connected()` is what the runtime itself sees (erlang: the node's nodes()), so the
   * member report says `observed: true`; else the report holds what the connector called or wrote.
   */
  readonly observesConnections?: boolean;
  /**
   * True when a connect that succeeded stays in effect until this agent disconnects the node
   * and the connector cannot ask the application (exec without a `list` answer: a hook called
   * per change). Rounds then skip the nodes already held, instead of connecting them again —
   * except a full re-sync round (the agent's `--resync-interval`).
   */
  readonly connectsStick?: boolean;
  /** The local node's own name, asked of the running node itself (for the self-name check). */
  selfName?(): Promise<NameResult>;
  /** Releases what the connector holds (temporary files). Idempotent. */
  close(): Promise<void>;
}

/** Helper for connectors: a refused node name, reported before any I/O. */
export function invalidNameResult(action: ConnectorAction, node: string, problem: string): ConnectResult {
  return {
    ok: false,
    action,
    node,
    ms: 0,
    failure: 'InvalidNodeName',
    error: `refused node name ${JSON.stringify(node)}: ${problem}`,
  };
}

/** What the agent hands every connector besides its configuration (tests observe through it). */
export interface ConnectorDeps {
  /** The environment the connector reads and gives its programs. Default: process.env. */
  readonly env?: NodeJS.ProcessEnv;
  /** Observes every program started (pid and argv), for logs and tests. */
  readonly onSpawn?: (info: SpawnInfo) => void;
  /** Observes each atomic write of a file (file connector). */
  readonly onWrite?: (info: { tempPath: string; path: string; peers: readonly string[] }) => void;
}

/** The agent's settings every connector may read, beside its own keys. */
export interface CommonConnectorOptions {
  /** `--node-name`: the local node's name as configured (may be undefined). */
  readonly nodeName?: string;
  /** `--call-timeout`, in milliseconds. */
  readonly callTimeoutMs: number;
}

/**
 * Everything about one connector, in its own file: adding a connector is that file plus one line
 * in the registry (index.ts). The agent's flags, environment variables, `--help` text and the
 * configuration schema are all built from these definitions.
 */
export interface ConnectorDefinition<Config extends { readonly kind: string } = { readonly kind: string }> {
  readonly kind: Config['kind'];
  /** One paragraph for `ctopo agent --help` (lines after the first are indented by the caller). */
  readonly help: string;
  /**
   * The agent configuration keys this connector owns (flag `--kebab-case`, env
   * `CTOPO_UPPER_SNAKE`); giving one of them with another connector is an error.
   */
  readonly options: OptionsSpec;
  /** JSON Schema (draft 7) of its configuration object, `kind` included: its limits live here. */
  readonly schema: {
    readonly type: 'object';
    readonly required: readonly string[];
    readonly properties: Readonly<Record<string, unknown>>;
  };
  /** Its configuration object from the agent's flat keys (undefined values are dropped after). */
  fromOptions(
    options: Readonly<Record<string, unknown>>,
    common: CommonConnectorOptions,
  ): Record<string, unknown>;
  /** Builds the connector from a configuration the schema accepted. */
  create(config: Config, deps: ConnectorDeps): Promise<Connector>;
}
