// The configuration check against Ajv, the validator it stands in for: the same errors, the same
// messages, on the schemas it really checks and on values built to break them.
import { describe, expect, it } from '@jest/globals';
import { Ajv, type ValidateFunction } from 'ajv';
import fc from 'fast-check';
import { checkSchema, type CheckedSchema } from '../../../operator/config/schema-check.js';
import { formatSchemaErrors } from '../../../operator/api/schema-errors.js';
import { connectorConfigSchema } from '../../../operator/agent/connectors/index.js';
import { agentOptions } from '../../../operator/agent/config.js';
import { loadConfig } from '../../../operator/config/load.js';

const compiled = new Map<CheckedSchema, ValidateFunction>();
const ajvErrors = (schema: CheckedSchema, value: unknown) => {
  let validate = compiled.get(schema);
  if (!validate)
    compiled.set(schema, (validate = new Ajv({ allErrors: true, strict: true }).compile(schema)));
  validate(value);
  return (validate.errors ?? []).map((e) => ({
    instancePath: e.instancePath,
    keyword: e.keyword,
    message: e.message,
  }));
};
const ours = (schema: CheckedSchema, value: unknown) =>
  checkSchema(schema, value).map(({ instancePath, keyword, message }) => ({
    instancePath,
    keyword,
    message,
  }));

const connectorBranches = connectorConfigSchema.oneOf as unknown as CheckedSchema[];

/** Values near a schema: its keys with values of every type, edge numbers and strings, extra keys. */
function near(schema: CheckedSchema): fc.Arbitrary<unknown> {
  const keys = Object.keys(schema.properties ?? {});
  const leaf = fc.oneof(
    fc.constantFrom(0, -1, 1, 999, 1000, 65535, 65536, 600000, 600001, 1.5, 'erlang', 'exec', 'file'),
    fc.constantFrom('', 'a', '/abs', 'rel', 'name', 'sname', 'lines', 'json', 'yaml', 'A_1', '1x', 'é'),
    fc.string({ maxLength: 4 }),
    fc.integer({ min: -10, max: 1000 }),
    fc.boolean(),
    fc.constant(null),
    fc.array(fc.oneof(fc.string({ maxLength: 3 }), fc.integer()), { maxLength: 3 }),
  );
  return fc.oneof(
    { weight: 1, arbitrary: leaf },
    {
      weight: 6,
      arbitrary: fc.dictionary(fc.oneof(fc.constantFrom(...keys), fc.constantFrom('extra', 'cookie')), leaf, {
        maxKeys: 5,
      }),
    },
  );
}

describe('checkSchema', () => {
  it('gives the errors Ajv gives, in its order, for every connector schema', () => {
    for (const schema of connectorBranches)
      fc.assert(
        fc.property(near(schema), (value) => {
          expect(ours(schema, value)).toEqual(ajvErrors(schema, value));
        }),
        { numRuns: 400 },
      );
  });

  it('gives the errors Ajv gives for a configuration schema: integers with a minimum, enums, durations, lists', () => {
    const schema: CheckedSchema = {
      type: 'object',
      additionalProperties: false,
      properties: {
        httpPort: { type: 'integer', minimum: 0 },
        logLevel: { type: 'string', enum: ['error', 'warn', 'info', 'debug'] },
        callTimeout: { type: 'string', pattern: '^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$' },
        execArgs: { type: 'array', items: { type: 'string', minLength: 1 } },
        execList: { type: 'boolean' },
      },
    };
    const value = fc.dictionary(
      fc.constantFrom('httpPort', 'logLevel', 'callTimeout', 'execArgs', 'execList', 'other'),
      fc.oneof(
        fc.integer({ min: -3, max: 3 }),
        fc.constantFrom('info', 'loud', '10s', '1m30s', 'forever', '', 1.5, true),
        fc.array(fc.constantFrom('', 'a', 3), { maxLength: 3 }),
      ),
      { maxKeys: 4 },
    );
    fc.assert(
      fc.property(value, (v) => {
        expect(ours(schema, v)).toEqual(ajvErrors(schema, v));
      }),
      { numRuns: 500 },
    );
  });

  it('refuses a schema keyword it does not check, instead of passing every value', () => {
    expect(() => checkSchema({ oneOf: [] } as unknown as CheckedSchema, {})).toThrow(
      /"oneOf" is not supported/,
    );
  });

  it('formats errors as the configuration messages read', () => {
    const errors = checkSchema(
      {
        type: 'object',
        additionalProperties: false,
        properties: { a: { type: 'array', items: { enum: ['x'] } } },
      },
      { a: ['y'], b: 1 },
    );
    expect(formatSchemaErrors(errors, 'config')).toEqual([
      'config: unknown field "b"',
      'config.a[0]: must be one of "x"',
    ]);
  });

  it("refuses the agent's bad flags with Ajv's words", () => {
    const load = (flags: Record<string, unknown>) => loadConfig(agentOptions, flags, {});
    expect(() => load({ 'call-timeout': 'forever', 'http-port': '-1' })).toThrow(
      'invalid configuration: config.callTimeout: must match pattern "^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$"; config.httpPort: must be >= 0',
    );
  });
});
