import { checkSchema, type CheckedSchema, type SchemaError } from '../../config/schema-check.js';
import { erlangConnector } from './erlang.js';
import { execConnector } from './exec.js';
import { fileConnector } from './file.js';
import type { Connector, ConnectorDefinition, ConnectorDeps } from './types.js';

export type * from './types.js';
export { invalidNameResult } from './types.js';
export type { ErlangConnector, ErlangConnectorConfig, LocalNode } from './erlang.js';
export { ErlangConfigError, createErlangConnector } from './erlang.js';
export type { ExecConnectorConfig } from './exec.js';
export { ExecConfigError, createExecConnector } from './exec.js';
export type { FileConnector, FileConnectorConfig } from './file.js';
export { FileConfigError, createFileConnector } from './file.js';

/**
 * The registry: every connector the agent knows. A new connector is one file exporting its
 * ConnectorDefinition (options, schema with its limits, help text, create) and one line here.
 */
export const CONNECTORS = [erlangConnector, execConnector, fileConnector] as const;

type ConfigOf<D> = D extends ConnectorDefinition<infer C> ? C : never;
/** Any registered connector's configuration. */
export type ConnectorConfig = ConfigOf<(typeof CONNECTORS)[number]>;

const byKind = new Map<string, ConnectorDefinition<ConnectorConfig>>(
  CONNECTORS.map((d) => [d.kind, d as unknown as ConnectorDefinition<ConnectorConfig>]),
);

/** The known connector kinds, in registry order. */
export const CONNECTOR_KINDS: readonly string[] = CONNECTORS.map((d) => d.kind);

export function connectorDefinition(kind: string): ConnectorDefinition<ConnectorConfig> | undefined {
  return byKind.get(kind);
}

/**
 * The JSON Schema of a connector's configuration, one branch per registered connector.
 * Secrets never appear in it: the cookie is named by environment variable or file.
 */
export const connectorConfigSchema = {
  oneOf: CONNECTORS.map((d) => ({ ...d.schema, additionalProperties: false })),
};

export class ConnectorConfigError extends Error {}

function describeErrors(errors: readonly SchemaError[]): string {
  return errors
    .map((e) => {
      const where = `connector${e.instancePath.replace(/\//g, '.')}`;
      if (e.keyword === 'additionalProperties')
        return `${where}: unknown key ${JSON.stringify((e.params as { additionalProperty: string }).additionalProperty)}`;
      return `${where} ${e.message}`;
    })
    .join('; ');
}

/** Checks a connector configuration; throws ConnectorConfigError naming every problem. */
export function validateConnectorConfig(value: unknown): ConnectorConfig {
  // Checked against the branch its `kind` selects, so the message names the real problem.
  const kind = (value as { kind?: unknown } | null)?.kind;
  const branch = CONNECTOR_KINDS.indexOf(typeof kind === 'string' ? kind : '');
  if (branch < 0)
    throw new ConnectorConfigError(
      `connector.kind must be one of ${CONNECTOR_KINDS.join(', ')} (got ${JSON.stringify(kind)})`,
    );
  const errors = checkSchema(connectorConfigSchema.oneOf[branch] as CheckedSchema, value);
  if (errors.length) throw new ConnectorConfigError(describeErrors(errors));
  return value as unknown as ConnectorConfig;
}

/** Builds the connector a configuration asks for, after checking it against its schema. */
export async function createConnector(config: ConnectorConfig, deps: ConnectorDeps = {}): Promise<Connector> {
  const checked = validateConnectorConfig(config);
  return byKind.get(checked.kind)!.create(checked, deps);
}
