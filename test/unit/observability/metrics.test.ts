// The agent's exposition against prom-client's, which it replaces: the same text for the same
// metrics and the same updates, and the process figures under prom-client's names.
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import * as prom from 'prom-client';
import { Counter, Gauge, Registry, collectProcessMetrics } from '../../../operator/observability/metrics.js';
import { agentMetrics } from '../../../operator/agent/metrics.js';
import { sumMetric } from '../../support/operator-process.js';

const labelValue = fc.constantFrom('ok', 'failed', 'a"b', 'back\\slash', 'new\nline', '');
type Op = { metric: 'c' | 'cl' | 'g' | 'gl'; value: number; label: string };
const op: fc.Arbitrary<Op> = fc.record({
  metric: fc.constantFrom('c', 'cl', 'g', 'gl'),
  value: fc.oneof(fc.nat(1000), fc.double({ min: 0, max: 1e9, noNaN: true }), fc.constant(0.1)),
  label: labelValue,
});

function apply(
  ops: Op[],
  m: {
    c: { inc(n?: number): void };
    cl: { inc(l: Record<string, string>, n?: number): void };
    g: { set(v: number): void };
    gl: { set(l: Record<string, string>, v: number): void };
  },
) {
  for (const o of ops) {
    if (o.metric === 'c') m.c.inc(o.value);
    else if (o.metric === 'cl') m.cl.inc({ result: o.label }, o.value);
    else if (o.metric === 'g') m.g.set(o.value);
    else m.gl.set({ state: o.label }, o.value);
  }
}

describe('metrics exposition', () => {
  it('reads as prom-client wrote it for the same counters, gauges and updates', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 12 }), async (ops) => {
        const ours = new Registry();
        const theirs = new prom.Registry();
        const defs = (
          C: typeof Counter | typeof prom.Counter,
          G: typeof Gauge | typeof prom.Gauge,
          r: never,
        ) => ({
          c: new C({ name: 'x_rounds_total', help: 'Rounds run.', registers: [r] }),
          cl: new C({
            name: 'x_connects_total',
            help: 'Connects\nby "result" \\ here.',
            labelNames: ['result'],
            registers: [r],
          }),
          g: new G({ name: 'x_peers', help: 'Peers.', registers: [r] }),
          gl: new G({ name: 'x_liveness', help: 'Liveness.', labelNames: ['state'], registers: [r] }),
        });
        apply(ops, defs(Counter, Gauge, ours as never) as never);
        apply(ops, defs(prom.Counter, prom.Gauge, theirs as never) as never);
        expect(await ours.metrics()).toBe(await theirs.metrics());
      }),
      { numRuns: 200 },
    );
  });

  it('serves every agent metric with its type, and the process figures the bench and docs name', async () => {
    const m = agentMetrics();
    m.rounds.inc();
    m.connects.inc({ result: 'ok' }, 3);
    m.trouble.set({ cause: 'Forbidden' }, 1);
    const text = await m.registry.metrics();
    expect(sumMetric(text, 'ctopo_agent_rounds_total')).toBe(1);
    expect(sumMetric(text, 'ctopo_agent_connects_total', { result: 'ok' })).toBe(3);
    expect(sumMetric(text, 'ctopo_agent_trouble', { cause: 'Forbidden' })).toBe(1);
    expect(sumMetric(text, 'ctopo_agent_process_resident_memory_bytes')).toBeGreaterThan(1e6);
    expect(sumMetric(text, 'ctopo_agent_nodejs_heap_size_used_bytes')).toBeGreaterThan(1e5);
    expect(sumMetric(text, 'ctopo_agent_process_cpu_seconds_total')).toBeGreaterThan(0);
    expect(text).toMatch(/^# TYPE ctopo_agent_connects_total counter$/m);
    expect(text).toMatch(/^# TYPE ctopo_agent_trouble gauge$/m);
  });

  it('names the process figures as prom-client does', async () => {
    const ours = new Registry();
    collectProcessMetrics(ours, 'p_');
    const theirs = new prom.Registry();
    prom.collectDefaultMetrics({ register: theirs, prefix: 'p_' });
    const names = (all: { name: string; type: unknown }[]) => all.map((x) => `${x.name} ${String(x.type)}`);
    const theirNames = names(await theirs.getMetricsAsJSON());
    for (const n of names(await ours.getMetricsAsJSON())) expect(theirNames).toContain(n);
  });

  it('refuses a counter going down and a label it does not have', () => {
    const r = new Registry();
    const c = new Counter({ name: 'c_total', help: 'c', labelNames: ['a'], registers: [r] });
    expect(() => c.inc({ a: 'x' }, -1)).toThrow(/only goes up/);
    expect(() => c.inc({ b: 'x' })).toThrow(/unknown label "b"/);
    expect(() => new Counter({ name: 'c_total', help: 'c', registers: [r] })).toThrow(/already registered/);
  });
});
