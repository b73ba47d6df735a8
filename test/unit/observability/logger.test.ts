// The log lines against winston's JSON format, which the project's logs followed before: the same
// line for the same call, whatever the fields hold.
import { describe, expect, it } from '@jest/globals';
import { Writable } from 'node:stream';
import fc from 'fast-check';
import winston from 'winston';
import { createLogger, type LogLevel } from '../../../operator/observability/logger.js';

function winstonLines(level: LogLevel, component: string) {
  const lines: string[] = [];
  const logger = winston.createLogger({
    level,
    defaultMeta: { component },
    format: winston.format.combine(winston.format.timestamp(), winston.format.json()),
    transports: [
      new winston.transports.Stream({
        stream: new Writable({
          write(chunk: Buffer, _enc, done) {
            lines.push(chunk.toString());
            done();
          },
        }),
      }),
    ],
  });
  return { lines, log: (l: LogLevel, m: string, meta?: Record<string, unknown>) => logger.log(l, m, meta) };
}

/** The time aside: both stamp the moment of the call. */
const untimed = (line: string) => line.replace(/"timestamp":"[^"]*"/, '"timestamp":"T"');

const level = fc.constantFrom<LogLevel>('error', 'warn', 'info', 'debug');
const value = fc.letrec((tie) => ({
  leaf: fc.oneof(
    fc.string({ maxLength: 6 }),
    fc.integer(),
    fc.double({ noNaN: false }),
    fc.boolean(),
    fc.constant(null),
    fc.constant(undefined),
    fc.date({ noInvalidDate: true }),
  ),
  node: fc.oneof(
    { depthSize: 'small' },
    tie('leaf'),
    fc.array(tie('node'), { maxLength: 3 }),
    fc.dictionary(fc.string({ maxLength: 4 }), tie('node'), { maxKeys: 3, noNullPrototype: true }),
  ),
})).node;
// Without `%`: winston read a message with a `%` token as a format string and then left the
// meta's fields out of the line; these lines keep them.
const message = fc.string({ maxLength: 8 }).filter((m) => !m.includes('%'));
const meta = fc.option(
  fc.dictionary(
    fc.oneof(fc.string({ maxLength: 5 }), fc.constantFrom('component', 'error', 'node', 'message', 'level')),
    value,
    {
      maxKeys: 4,
      noNullPrototype: true,
    },
  ),
  { nil: undefined },
);

describe('createLogger', () => {
  it('writes what winston wrote: one JSON object a line, keys sorted, at the configured level', async () => {
    await fc.assert(
      fc.asyncProperty(level, level, message, meta, async (max, l, message, m) => {
        const ours: string[] = [];
        createLogger(max, 'agent', (line) => ours.push(line))(l, message, m);
        const theirs = winstonLines(max, 'agent');
        theirs.log(l, message, m);
        await new Promise((r) => setImmediate(r));
        expect(ours.map(untimed)).toEqual(theirs.lines.map(untimed));
      }),
      { numRuns: 300 },
    );
  });

  it('stamps the time as ISO 8601 and writes a value met inside itself as "[Circular]"', () => {
    const lines: string[] = [];
    const o: Record<string, unknown> = { a: 1 };
    o.self = o;
    createLogger('info', 'operator', (line) => lines.push(line))('info', 'loop', o);
    const parsed = JSON.parse(lines[0]!) as Record<string, unknown>;
    expect(parsed).toMatchObject({
      component: 'operator',
      level: 'info',
      message: 'loop',
      self: { a: 1, self: '[Circular]' },
    });
    expect(new Date(parsed.timestamp as string).toISOString()).toBe(parsed.timestamp);
  });
});
