import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { ParseArgsOptionsConfig } from 'node:util';
import { formatSchemaErrors } from '../api/schema-errors.js';
import { checkSchema, type CheckedSchema } from './schema-check.js';
import { UsageError } from './usage-error.js';

/** `yaml` only when a --config file is read: the agent in a pod is configured by flags and env. */
const parseYaml = (text: string): unknown =>
  (createRequire(import.meta.url)('yaml') as { parse(t: string): unknown }).parse(text);

/**
 * A process's own configuration, from (lowest first) defaults, an optional file (`--config`,
 * YAML or JSON), environment variables (`CTOPO_<KEY>`) and flags (`--kebab-key`). All three
 * sources are checked against one JSON schema: an unknown key in the file, an unknown flag or
 * a bad value anywhere stops the process with a message naming it (exit 64). Everything is read
 * at start, at run time — nothing is baked in at build time.
 */

export type OptionType = 'string' | 'integer' | 'boolean' | 'duration' | 'list';

export interface OptionSpec {
  type: OptionType;
  description: string;
  default?: unknown;
  enum?: readonly string[];
  minimum?: number;
  short?: string;
}

export type OptionsSpec = Record<string, OptionSpec>;

/** The keys every long-running ctopo process has: its health/metrics server and its log level. */
export function processOptions(defaultPort: number) {
  return {
    httpHost: {
      type: 'string',
      description: 'address of /healthz, /readyz and /metrics',
      default: '0.0.0.0',
    },
    httpPort: {
      type: 'integer',
      description: 'their port (0: any free port)',
      default: defaultPort,
      minimum: 0,
    },
    logLevel: {
      type: 'string',
      description: 'log level',
      default: 'info',
      enum: ['error', 'warn', 'info', 'debug'],
    },
  } satisfies OptionsSpec;
}

export interface ProcessConfig {
  httpHost: string;
  httpPort: number;
  logLevel: 'error' | 'warn' | 'info' | 'debug';
}

const kebab = (k: string) => k.replace(/[A-Z]/g, (c) => '-' + c.toLowerCase());
const envName = (k: string) => 'CTOPO_' + k.replace(/[A-Z]/g, (c) => '_' + c).toUpperCase();

/** Flags for node:util parseArgs: every key as `--kebab-case`, plus `--config`. */
export function flagsFor(spec: OptionsSpec): ParseArgsOptionsConfig {
  const flags: ParseArgsOptionsConfig = { config: { type: 'string' } };
  for (const [k, o] of Object.entries(spec))
    flags[kebab(k)] = {
      type: o.type === 'boolean' ? 'boolean' : 'string',
      ...(o.short ? { short: o.short } : {}),
    };
  return flags;
}

export function helpFor(spec: OptionsSpec): string {
  const rows = Object.entries(spec).map(([k, o]) => {
    const def =
      o.default === undefined
        ? ''
        : ` (default ${Array.isArray(o.default) ? o.default.join(',') || 'none' : String(o.default)})`;
    return `  --${o.type === 'boolean' ? '[no-]' : ''}${kebab(k)}${o.type === 'boolean' ? '' : ' VALUE'}\n      ${o.description}${def}  [env ${envName(k)}]`;
  });
  return ['  --config FILE\n      YAML or JSON file with any of the keys below in camelCase', ...rows].join(
    '\n',
  );
}

function schemaFor(spec: OptionsSpec): CheckedSchema {
  const properties: Record<string, CheckedSchema> = {};
  for (const [k, o] of Object.entries(spec)) {
    const base: CheckedSchema = { description: o.description };
    if (o.type === 'integer')
      Object.assign(base, { type: 'integer', ...(o.minimum !== undefined ? { minimum: o.minimum } : {}) });
    else if (o.type === 'boolean') base.type = 'boolean';
    else if (o.type === 'list')
      Object.assign(base, { type: 'array', items: { type: 'string', minLength: 1 } });
    else if (o.type === 'duration')
      Object.assign(base, { type: 'string', pattern: '^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$' });
    else Object.assign(base, { type: 'string', ...(o.enum ? { enum: o.enum } : {}) });
    properties[k] = base;
  }
  return { type: 'object', additionalProperties: false, properties };
}

function coerce(key: string, o: OptionSpec, raw: unknown, source: string): unknown {
  if (typeof raw !== 'string') return raw;
  switch (o.type) {
    case 'integer': {
      if (!/^-?\d+$/.test(raw.trim()))
        throw new UsageError(`${source} ${key}: "${raw}" is not a whole number`);
      return Number(raw);
    }
    case 'boolean':
      if (/^(true|1|yes)$/i.test(raw)) return true;
      if (/^(false|0|no)$/i.test(raw)) return false;
      throw new UsageError(`${source} ${key}: "${raw}" is not true or false`);
    case 'list':
      return raw
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
    default:
      return raw;
  }
}

export function loadConfig<T>(
  spec: OptionsSpec,
  flags: Record<string, unknown>,
  env: NodeJS.ProcessEnv = process.env,
): T {
  const merged: Record<string, unknown> = {};
  for (const [k, o] of Object.entries(spec))
    if (o.default !== undefined) merged[k] = structuredClone(o.default);

  const file = flags.config as string | undefined;
  if (file) {
    let doc: unknown;
    try {
      doc = parseYaml(readFileSync(file, 'utf8'));
    } catch (e) {
      throw new UsageError(`--config ${file}: ${(e as Error).message.split('\n')[0]}`);
    }
    if (doc !== null && doc !== undefined) {
      if (typeof doc !== 'object' || Array.isArray(doc))
        throw new UsageError(`--config ${file}: must be a mapping of keys to values`);
      for (const [k, v] of Object.entries(doc)) {
        if (!(k in spec))
          throw new UsageError(
            `--config ${file}: unknown key "${k}" (known: ${Object.keys(spec).join(', ')})`,
          );
        merged[k] = coerce(k, spec[k]!, v, `--config ${file}:`);
      }
    }
  }
  for (const [k, o] of Object.entries(spec)) {
    const v = env[envName(k)];
    if (v !== undefined && v !== '') merged[k] = coerce(k, o, v, `environment ${envName(k)}:`);
  }
  for (const [k, o] of Object.entries(spec)) {
    const v = flags[kebab(k)];
    if (v !== undefined) merged[k] = coerce(k, o, v, `--${kebab(k)}:`);
  }
  const errors = checkSchema(schemaFor(spec), merged);
  if (errors.length)
    throw new UsageError(`invalid configuration: ${formatSchemaErrors(errors, 'config').join('; ')}`);
  return merged as T;
}
