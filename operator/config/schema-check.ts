import { isRecord } from '../api/json.js';

/**
 * Checks a value against the small part of JSON Schema that the processes' own configurations
 * use (the agent's and the operator's flags, the connectors' settings), with Ajv's error objects
 * and messages. The agent needs nothing else from a validator, and Ajv (its module graph and
 * compiled code) would be a third of its memory beyond Node.js itself. A keyword outside this
 * subset is refused, so a schema can not silently go unchecked; ClusterTopology specs and
 * layouts stay with Ajv (api/validate.ts).
 */

export interface SchemaError {
  /** JSON Pointer of the offending value, e.g. `/args/0`. */
  instancePath: string;
  keyword: string;
  params: Record<string, unknown>;
  message: string;
}

export type CheckedSchema = {
  type?: 'object' | 'string' | 'integer' | 'boolean' | 'array';
  description?: string;
  required?: readonly string[];
  properties?: Record<string, CheckedSchema>;
  additionalProperties?: false;
  items?: CheckedSchema;
  const?: unknown;
  enum?: readonly unknown[];
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  minimum?: number;
  maximum?: number;
};

const KNOWN = new Set([
  'type',
  'description',
  'required',
  'properties',
  'additionalProperties',
  'items',
  'const',
  'enum',
  'minLength',
  'maxLength',
  'pattern',
  'minimum',
  'maximum',
]);

function hasType(type: NonNullable<CheckedSchema['type']>, v: unknown): boolean {
  switch (type) {
    case 'object':
      return isRecord(v);
    case 'array':
      return Array.isArray(v);
    case 'integer':
      return typeof v === 'number' && Number.isInteger(v);
    default:
      return typeof v === type;
  }
}

const same = (a: unknown, b: unknown) => a === b || JSON.stringify(a) === JSON.stringify(b);
const pointer = (k: string) => '/' + k.replace(/~/g, '~0').replace(/\//g, '~1');
/** Code points, as Ajv counts a string's length. */
const length = (s: string) => [...s].length;

/** Every problem of `value` against `schema` (Ajv's allErrors), in Ajv's order; empty when it conforms. */
export function checkSchema(schema: CheckedSchema, value: unknown, path = ''): SchemaError[] {
  const errors: SchemaError[] = [];
  const fail = (keyword: string, params: Record<string, unknown>, message: string, at = path) =>
    errors.push({ instancePath: at, keyword, params, message });
  for (const k of Object.keys(schema))
    if (!KNOWN.has(k)) throw new Error(`schema keyword "${k}" is not supported by the configuration check`);
  if (schema.additionalProperties !== undefined && schema.additionalProperties !== false)
    throw new Error('additionalProperties other than false is not supported by the configuration check');

  if (schema.type !== undefined && !hasType(schema.type, value))
    fail('type', { type: schema.type }, `must be ${schema.type}`);
  // As in Ajv, each keyword applies by what the value is, whatever the declared type: 1.5 for
  // an integer with a minimum fails both.
  if (typeof value === 'number') {
    if (schema.maximum !== undefined && !(value <= schema.maximum))
      fail('maximum', { comparison: '<=', limit: schema.maximum }, `must be <= ${schema.maximum}`);
    if (schema.minimum !== undefined && !(value >= schema.minimum))
      fail('minimum', { comparison: '>=', limit: schema.minimum }, `must be >= ${schema.minimum}`);
  }
  if (typeof value === 'string') {
    if (schema.maxLength !== undefined && length(value) > schema.maxLength)
      fail(
        'maxLength',
        { limit: schema.maxLength },
        `must NOT have more than ${schema.maxLength} characters`,
      );
    if (schema.minLength !== undefined && length(value) < schema.minLength)
      fail(
        'minLength',
        { limit: schema.minLength },
        `must NOT have fewer than ${schema.minLength} characters`,
      );
    if (schema.pattern !== undefined && !new RegExp(schema.pattern, 'u').test(value))
      fail('pattern', { pattern: schema.pattern }, `must match pattern "${schema.pattern}"`);
  }
  if (Array.isArray(value) && schema.items)
    value.forEach((item, i) => errors.push(...checkSchema(schema.items!, item, `${path}/${i}`)));
  if (isRecord(value)) {
    const obj = value;
    for (const r of schema.required ?? [])
      if (obj[r] === undefined)
        fail('required', { missingProperty: r }, `must have required property '${r}'`);
    if (schema.additionalProperties === false)
      for (const k of Object.keys(obj))
        if (!(k in (schema.properties ?? {})))
          fail('additionalProperties', { additionalProperty: k }, 'must NOT have additional properties');
    for (const [k, s] of Object.entries(schema.properties ?? {}))
      if (obj[k] !== undefined) errors.push(...checkSchema(s, obj[k], path + pointer(k)));
  }
  if ('const' in schema && !same(value, schema.const))
    fail('const', { allowedValue: schema.const }, 'must be equal to constant');
  if (schema.enum && !schema.enum.some((e) => same(value, e)))
    fail('enum', { allowedValues: schema.enum }, 'must be equal to one of the allowed values');
  return errors;
}
