import { describe, expect, it } from '@jest/globals';
import { counterDelta, matches, parsePrometheusText, sumBy, sumWhere } from '../../../bench/prometheus.js';

const scrape = (lists: number, watches: number, bytes: number) => `
# HELP apiserver_request_total [STABLE] Counter of apiserver requests
# TYPE apiserver_request_total counter
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="pods",scope="namespace",subresource="",verb="LIST",version="v1"} ${lists}
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="pods",scope="namespace",subresource="",verb="WATCH",version="v1"} ${watches}
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="pods",scope="resource",subresource="status",verb="PATCH",version="v1"} 40
apiserver_request_total{code="201",component="apiserver",dry_run="",group="",resource="pods",scope="resource",subresource="",verb="POST",version="v1"} 100
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="",scope="",subresource="/metrics",verb="GET",version=""} 7
apiserver_response_sizes_sum{component="apiserver",group="",resource="pods",scope="namespace",subresource="",verb="LIST",version="v1"} ${bytes}
apiserver_response_sizes_bucket{component="apiserver",group="",resource="pods",le="+Inf",scope="namespace",subresource="",verb="LIST",version="v1"} ${lists}
`;

describe('parsePrometheusText', () => {
  it('reads names, labels and values and skips comments', () => {
    const s = parsePrometheusText(scrape(3, 1, 1e6));
    expect(s).toHaveLength(7);
    expect(s[0]).toEqual({
      name: 'apiserver_request_total',
      labels: {
        code: '200',
        component: 'apiserver',
        dry_run: '',
        group: '',
        resource: 'pods',
        scope: 'namespace',
        subresource: '',
        verb: 'LIST',
        version: 'v1',
      },
      value: 3,
    });
    expect(s[6]!.labels.le).toBe('+Inf');
  });

  it('reads unlabelled samples, timestamps, special values and exponents', () => {
    const s = parsePrometheusText('up 1\nx_total 2.5e3 1700000000000\ny NaN\nz +Inf\nw -Inf\n');
    expect(s.map((x) => [x.name, x.value])).toEqual([
      ['up', 1],
      ['x_total', 2500],
      ['y', NaN],
      ['z', Infinity],
      ['w', -Infinity],
    ]);
    expect(s[0]!.labels).toEqual({});
  });

  it('unescapes label values and allows spaces and a trailing comma', () => {
    const [s] = parsePrometheusText('m{a="x\\"y",b="back\\\\slash", c="line\\nbreak",d="}{,=",} 4\n');
    expect(s!.labels).toEqual({ a: 'x"y', b: 'back\\slash', c: 'line\nbreak', d: '}{,=' });
    expect(s!.value).toBe(4);
  });

  it('throws on malformed lines', () => {
    expect(() => parsePrometheusText('m{a="x} 1')).toThrow();
    expect(() => parsePrometheusText('m{a=x} 1')).toThrow();
    expect(() => parsePrometheusText('m not-a-number')).toThrow();
    expect(() => parsePrometheusText('m')).toThrow();
    expect(() => parsePrometheusText('9m 1')).toThrow();
  });
});

describe('filters and sums', () => {
  const s = parsePrometheusText(scrape(3, 1, 1e6));

  it('matches exact values and predicates (absent labels are undefined)', () => {
    expect(matches({ a: 'x' }, { a: 'x' })).toBe(true);
    expect(matches({ a: 'x' }, { a: 'y' })).toBe(false);
    expect(matches({ a: '' }, { a: (v) => !v })).toBe(true);
    expect(matches({}, { a: (v) => v === undefined })).toBe(true);
  });

  it('sums a metric over a filter', () => {
    expect(sumWhere(s, 'apiserver_request_total', { resource: 'pods' })).toBe(3 + 1 + 40 + 100);
    expect(sumWhere(s, 'apiserver_request_total', { resource: 'pods', subresource: '' })).toBe(104);
    expect(sumWhere(s, 'nope')).toBe(0);
  });

  it('sums per label value', () => {
    expect(sumBy(s, 'apiserver_request_total', 'verb', { resource: 'pods' })).toEqual(
      new Map([
        ['LIST', 3],
        ['WATCH', 1],
        ['PATCH', 40],
        ['POST', 100],
      ]),
    );
  });
});

describe('counterDelta', () => {
  it('is how much each group grew between two scrapes', () => {
    const before = parsePrometheusText(scrape(3, 1, 1e6));
    const after = parsePrometheusText(scrape(9, 2, 4e6));
    const pods = { resource: 'pods', subresource: '' };
    expect(counterDelta(before, after, 'apiserver_request_total', 'verb', pods)).toEqual(
      new Map([
        ['LIST', 6],
        ['WATCH', 1],
        ['POST', 0],
      ]),
    );
    expect(counterDelta(before, after, 'apiserver_response_sizes_sum', 'verb', pods).get('LIST')).toBe(3e6);
  });

  it('counts a group that appears only after from zero', () => {
    const before = parsePrometheusText('m{v="a"} 1\n');
    const after = parsePrometheusText('m{v="a"} 1\nm{v="b"} 5\n');
    expect(counterDelta(before, after, 'm', 'v')).toEqual(
      new Map([
        ['a', 0],
        ['b', 5],
      ]),
    );
  });

  it('refuses a counter that went down or vanished (the process restarted)', () => {
    expect(() => counterDelta(parsePrometheusText('m 5'), parsePrometheusText('m 2'), 'm', 'v')).toThrow(
      /went down/,
    );
    expect(() =>
      counterDelta(parsePrometheusText('m{v="a"} 5'), parsePrometheusText('m{v="b"} 6'), 'm', 'v'),
    ).toThrow(/disappeared/);
  });
});
