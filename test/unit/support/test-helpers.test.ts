// The integration tests' own helpers: a check built on them must not pass for the wrong reason.
import { describe, expect, it } from '@jest/globals';
import { canIAnswer } from '../../support/objects.js';
import { sumMetric } from '../../support/operator-process.js';
import { operatorMetrics } from '../../../operator/observability/operator-metrics.js';

describe('sumMetric', () => {
  const body = [
    '# HELP ctopo_api_responses_total API responses.',
    '# TYPE ctopo_api_responses_total counter',
    'ctopo_api_responses_total{verb="GET",code="200"} 5',
    'ctopo_api_responses_total{verb="LIST",code="200"} 2',
    'ctopo_api_responses_total{verb="GET",code="403"} 1',
    '# HELP ctopo_status_writes_total Status patches.',
    '# TYPE ctopo_status_writes_total counter',
    '',
  ].join('\n');

  it('sums the matching series', () => {
    expect(sumMetric(body, 'ctopo_api_responses_total')).toBe(8);
    expect(sumMetric(body, 'ctopo_api_responses_total', { code: '200' })).toBe(7);
    expect(sumMetric(body, 'ctopo_api_responses_total', { code: '403', verb: 'GET' })).toBe(1);
  });

  it('reads a declared counter without series as 0', () => {
    expect(sumMetric(body, 'ctopo_status_writes_total')).toBe(0);
    expect(sumMetric(body, 'ctopo_api_responses_total', { code: '401' })).toBe(0);
  });

  it('throws for a metric that is not exported, instead of reading 0', () => {
    expect(() => sumMetric(body, 'ctopo_api_response_total')).toThrow('is not exported');
    expect(() => sumMetric(body, 'ctopo_api')).toThrow('is not exported');
  });

  it("finds the operator's event-loop lag metrics in its real exposition (declared, with a sample)", async () => {
    const m = operatorMetrics();
    const text = await m.registry.metrics();
    for (const name of [
      'ctopo_operator_nodejs_eventloop_lag_max_seconds',
      'ctopo_operator_nodejs_eventloop_lag_p99_seconds',
    ]) {
      expect(Number.isFinite(sumMetric(text, name))).toBe(true);
      expect(text).toMatch(new RegExp(`^${name} \\S+$`, 'm'));
    }
  });
});

describe('canIAnswer', () => {
  const args = ['list', 'pods', '-n', 'x'];
  it('reads yes and no', () => {
    expect(canIAnswer(args, { code: 0, stdout: 'yes\n', stderr: '' })).toBe(true);
    expect(canIAnswer(args, { code: 1, stdout: 'no\n', stderr: '' })).toBe(false);
  });

  it('throws on any other outcome, instead of reading "no"', () => {
    expect(() =>
      canIAnswer(args, {
        code: 1,
        stdout: '',
        stderr: 'error: You must be logged in to the server (Unauthorized)',
      }),
    ).toThrow('Unauthorized');
    expect(() =>
      canIAnswer(args, {
        code: 1,
        stdout: '',
        stderr: 'The connection to the server 127.0.0.1:6443 was refused',
      }),
    ).toThrow('gave no answer');
    expect(() => canIAnswer(args, { code: 0, stdout: 'no', stderr: '' })).toThrow('gave no answer');
  });
});
