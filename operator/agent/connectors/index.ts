import { Ajv, type ErrorObject } from 'ajv';
import { createErlangConnector, type ErlangConnectorConfig, type ErlangConnectorDeps } from './erlang.js';
import { createExecConnector, type ExecConnectorConfig, type ExecConnectorDeps } from './exec.js';
import { createFileConnector, type FileConnectorConfig, type FileConnectorDeps } from './file.js';
import type { Connector } from './types.js';

export type * from './types.js';
export { invalidNameResult } from './types.js';
export type { ErlangConnector, ErlangConnectorConfig, LocalNode } from './erlang.js';
export { ErlangConfigError, createErlangConnector } from './erlang.js';
export type { ExecConnectorConfig } from './exec.js';
export { ExecConfigError, createExecConnector } from './exec.js';
export type { FileConnector, FileConnectorConfig } from './file.js';
export { FileConfigError, createFileConnector } from './file.js';

export type ConnectorConfig = ErlangConnectorConfig | ExecConnectorConfig | FileConnectorConfig;

/**
 * The JSON Schema of a connector's configuration, for the agent's own configuration schema.
 * Secrets never appear in it: the cookie is named by environment variable or file.
 */
export const connectorConfigSchema = {
  oneOf: [
    {
      type: 'object',
      additionalProperties: false,
      required: ['kind'],
      properties: {
        kind: { const: 'erlang' },
        nodeName: { type: 'string', minLength: 3, maxLength: 255 },
        distribution: { enum: ['name', 'sname'] },
        cookieFile: { type: 'string', minLength: 1 },
        cookieEnv: { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_]*$' },
        erlCall: { type: 'string', minLength: 1 },
        timeoutMs: { type: 'integer', minimum: 1000, maximum: 600000 },
        epmdPort: { type: 'integer', minimum: 1, maximum: 65535 },
        concurrency: { type: 'integer', minimum: 1, maximum: 64 },
        workDir: { type: 'string', minLength: 1 },
      },
    },
    {
      type: 'object',
      additionalProperties: false,
      required: ['kind', 'program'],
      properties: {
        kind: { const: 'exec' },
        program: { type: 'string', pattern: '^/' },
        args: { type: 'array', items: { type: 'string' } },
        timeoutMs: { type: 'integer', minimum: 1, maximum: 600000 },
      },
    },
    {
      type: 'object',
      additionalProperties: false,
      required: ['kind', 'path', 'format'],
      properties: {
        kind: { const: 'file' },
        path: { type: 'string', pattern: '^/' },
        format: { enum: ['lines', 'json'] },
        mode: { type: 'integer', minimum: 0, maximum: 0o777 },
      },
    },
  ],
} as const;

const ajv = new Ajv({ allErrors: true, strict: true });
const validate = ajv.compile(connectorConfigSchema);

export class ConnectorConfigError extends Error {}

function describeErrors(value: unknown, errors: readonly ErrorObject[]): string {
  // Report against the branch the `kind` selects, so the message names the real problem.
  const kind = (value as { kind?: unknown } | null)?.kind;
  const branch = ['erlang', 'exec', 'file'].indexOf(typeof kind === 'string' ? kind : '');
  if (branch < 0) return `connector.kind must be one of erlang, exec, file (got ${JSON.stringify(kind)})`;
  const mine = errors.filter((e) => e.schemaPath.startsWith(`#/oneOf/${branch}/`));
  return mine
    .map((e) => {
      const where = `connector${e.instancePath.replace(/\//g, '.')}`;
      if (e.keyword === 'additionalProperties')
        return `${where}: unknown key ${JSON.stringify((e.params as { additionalProperty: string }).additionalProperty)}`;
      return `${where} ${e.message ?? 'is invalid'}`;
    })
    .join('; ');
}

/** Checks a connector configuration; throws ConnectorConfigError naming every problem. */
export function validateConnectorConfig(value: unknown): ConnectorConfig {
  if (!validate(value)) throw new ConnectorConfigError(describeErrors(value, validate.errors ?? []));
  return value as ConnectorConfig;
}

export type ConnectorDeps = ErlangConnectorDeps & ExecConnectorDeps & FileConnectorDeps;

/** Builds the connector a validated configuration asks for. */
export async function createConnector(config: ConnectorConfig, deps: ConnectorDeps = {}): Promise<Connector> {
  switch (config.kind) {
    case 'erlang':
      return createErlangConnector(config, deps);
    case 'exec':
      return createExecConnector(config, deps);
    case 'file':
      return createFileConnector(config, deps);
  }
}
