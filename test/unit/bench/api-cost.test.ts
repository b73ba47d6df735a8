import { describe, expect, it } from '@jest/globals';
import {
  listBytesPerMinute,
  listsPerMinute,
  meanBetween,
  ratios,
  windowCost,
} from '../../../bench/api-cost.js';
import { parsePrometheusText } from '../../../bench/prometheus.js';

const line = (name: string, labels: Record<string, string>, v: number) =>
  `${name}{${Object.entries(labels)
    .map(([k, x]) => `${k}="${x}"`)
    .join(',')}} ${v}`;

function scrape(o: {
  list: number;
  watch: number;
  bytes: number;
  statusPatch: number;
  podStatusPatch: number;
  metricsGets: number;
}) {
  const req = 'apiserver_request_total';
  const pods = { group: '', resource: 'pods', scope: 'namespace', subresource: '', version: 'v1' };
  return parsePrometheusText(
    [
      line(req, { ...pods, code: '200', verb: 'LIST' }, o.list),
      line(req, { ...pods, code: '500', verb: 'LIST' }, 1), // other codes count too
      line(req, { ...pods, code: '200', verb: 'WATCH' }, o.watch),
      line(req, { ...pods, subresource: 'status', code: '200', verb: 'PATCH' }, o.podStatusPatch),
      line(
        req,
        {
          group: 'cluster.netzlive.io',
          resource: 'clustertopologies',
          subresource: 'status',
          code: '200',
          verb: 'PATCH',
        },
        o.statusPatch,
      ),
      line(
        req,
        { group: '', resource: '', subresource: '/metrics', code: '200', verb: 'GET' },
        o.metricsGets,
      ),
      line('apiserver_response_sizes_sum', { ...pods, verb: 'LIST' }, o.bytes),
    ].join('\n'),
  );
}

describe('windowCost', () => {
  const before = scrape({
    list: 10,
    watch: 2,
    bytes: 1000,
    statusPatch: 3,
    podStatusPatch: 50,
    metricsGets: 4,
  });
  const after = scrape({
    list: 16,
    watch: 8,
    bytes: 7000,
    statusPatch: 4,
    podStatusPatch: 50,
    metricsGets: 9,
  });
  const w = windowCost(before, after, 60_000);

  it('counts pod requests and bytes per verb, status writes apart', () => {
    expect(w.podRequests).toEqual({ LIST: 6, WATCH: 6 });
    expect(w.podBytes).toEqual({ LIST: 6000 });
    expect(w.statusWrites).toBe(1);
  });

  it('totals requests on resources, not on non-resource URLs such as /metrics', () => {
    expect(w.allResourceRequests).toBe(6 + 6 + 1);
  });

  it('gives per-minute rates whatever the window length', () => {
    expect(listsPerMinute(w)).toBe(6);
    expect(listBytesPerMinute(w)).toBe(6000);
    const half = windowCost(before, after, 30_000);
    expect(listsPerMinute(half)).toBe(12);
    expect(listBytesPerMinute(half)).toBe(12_000);
  });

  it('is zero when nothing happened', () => {
    const idle = windowCost(before, before, 10_000);
    expect(idle.podRequests).toEqual({});
    expect(listsPerMinute(idle)).toBe(0);
  });
});

describe('ratios', () => {
  it('pairs windows by position', () => {
    expect(ratios([600, 1200], [6, 12])).toEqual([100, 100]);
    expect(ratios([600, 1200, 5], [6])).toEqual([100]);
    expect(ratios([6], [0])).toEqual([Infinity]);
  });
});

describe('meanBetween', () => {
  const at = (count: number, sum: number, other = 0) =>
    parsePrometheusText(
      [
        `d_seconds_count{verb="PATCH",resource="x"} ${count}`,
        `d_seconds_sum{verb="PATCH",resource="x"} ${sum}`,
        `d_seconds_bucket{verb="PATCH",resource="x",le="1"} ${count}`,
        `d_seconds_count{verb="GET",resource="x"} ${other}`,
        `d_seconds_sum{verb="GET",resource="x"} ${other * 100}`,
      ].join('\n'),
    );
  it('is the mean of what was observed between the scrapes', () => {
    expect(meanBetween(at(10, 1), at(14, 3), 'd_seconds', { verb: 'PATCH' })).toEqual({
      count: 4,
      mean: 0.5,
    });
  });
  it('is NaN when nothing was observed', () => {
    expect(meanBetween(at(10, 1), at(10, 1), 'd_seconds', { verb: 'PATCH' }).mean).toBeNaN();
  });
  it('mixes every series that passes the filter', () => {
    expect(meanBetween(at(0, 0, 0), at(1, 1, 1), 'd_seconds').mean).toBe(50.5);
  });
});
