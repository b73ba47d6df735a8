import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import {
  listedDigest,
  memberReport,
  memberReportName,
  memberView,
  nameDigest,
} from '../../../operator/protocol/member-report.js';

const peers = (names: string[]) => names.map((n) => ({ nodeName: `${n}@h`, pod: n }));

describe('a member report: what a writer sends', () => {
  it('digests a list as zlib and erlang:crc32/1 do (values computed by both), in any order', () => {
    // python3 -c 'import zlib; print(format(zlib.crc32(b"a@h\nb@h\nc@h\n"), "08x"))' → 255eab48;
    // erl: io:format("~8.16.0b", [erlang:crc32(<<"a@h\nb@h\nc@h\n">>)]) → 255eab48.
    expect(listedDigest(['c@h', 'a@h', 'b@h'])).toBe('255eab48');
    expect(listedDigest(['web-1@10.0.0.2', 'web-0@10.0.0.1'])).toBe('2793dcc9');
    expect(listedDigest([])).toBe('00000000');
    expect(nameDigest(['a@h'])).not.toBe(nameDigest(['b@h']));
  });

  it('counts the listed peers other than itself; a name it refuses is invalid and not connected', () => {
    const v = memberView({
      node: 'a@h',
      pod: 'a',
      peers: peers(['a', 'b', 'c', 'd']),
      connected: ['b@h', 'x@elsewhere'],
      reasons: new Map([['c@h', 'Refused' as const]]),
      invalid: ['d@h'],
      topologyResourceVersion: '42',
    });
    expect(v).toMatchObject({
      node: 'a@h',
      observed: true,
      topologyResourceVersion: '42',
      listed: 3,
      connected: 1,
      invalid: 1,
      connectedOfListed: '1/3',
      notConnected: [
        { node: 'c@h', reason: 'Refused' },
        { node: 'd@h', reason: 'Invalid' },
      ],
      notConnectedOmitted: 0,
      selfCheck: { result: 'Match', expected: 'a@h', actual: 'a@h' },
      listedDigest: listedDigest(['a@h', 'b@h', 'c@h', 'd@h']),
      connectedDigest: nameDigest(['a@h', 'b@h']),
    });
    expect(v.trouble).toBeUndefined();
  });

  it('self check: Mismatch names both, NotListed without a listed name, Unknown without a list', () => {
    const base = { node: 'a@other', pod: 'a', connected: [] };
    expect(memberView({ ...base, peers: peers(['a', 'b']) }).selfCheck).toEqual({
      result: 'Mismatch',
      expected: 'a@h',
      actual: 'a@other',
    });
    expect(memberView({ ...base, peers: peers(['b']) }).selfCheck).toEqual({
      result: 'NotListed',
      actual: 'a@other',
    });
    const none = memberView(base);
    expect(none.selfCheck).toEqual({ result: 'Unknown', actual: 'a@other' });
    expect(none).toMatchObject({ listed: 0, connected: 0, connectedOfListed: '0/0', notConnected: [] });
    expect(none.listedDigest).toBeUndefined();
  });

  it('keeps the first 20 not-connected peers in byte order and counts the rest', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.stringMatching(/^[A-Za-z0-9_-]{1,6}$/), { minLength: 1, maxLength: 60 }),
        fc.func(fc.boolean()),
        (names, isConnected) => {
          const list = names.map((n) => `${n}@h`);
          const connected = list.filter((n) => isConnected(n));
          const v = memberView({ node: list[0]!, pod: names[0]!, peers: peers(names), connected });
          const others = list.slice(1);
          const notConnected = others.filter((n) => !connected.includes(n));
          // byte order: code-unit comparison of ASCII names, as Erlang compares binaries
          const expected = [...notConnected].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
          expect(v.notConnected.map((e) => e.node)).toEqual(expected.slice(0, 20));
          expect(v.notConnectedOmitted).toBe(Math.max(0, notConnected.length - 20));
          expect(v.connected + v.notConnected.length + v.notConnectedOmitted!).toBe(v.listed);
          expect(v.listed).toBe(others.length);
          expect(v.connectedOfListed).toBe(`${v.connected}/${v.listed}`);
        },
      ),
    );
  });

  it('is one object: named <pod>.<topology>, labelled, owned by the pod', () => {
    const view = memberView({ node: 'a@h', pod: 'web-0', peers: peers(['web-0']), connected: [] });
    const r = memberReport(
      { namespace: 'ns', topology: 'web', pod: { name: 'web-0', uid: 'u-0' } },
      view,
      new Date('2026-12-04T10:00:00.123Z'),
    );
    expect(memberReportName('web-0', 'web')).toBe('web-0.web');
    expect(r).toMatchObject({
      apiVersion: 'cluster.netzlive.io/v1alpha1',
      kind: 'ClusterTopologyMember',
      metadata: {
        name: 'web-0.web',
        namespace: 'ns',
        labels: { 'cluster.netzlive.io/topology': 'web' },
        ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: 'web-0', uid: 'u-0' }],
      },
      spec: { topology: 'web', pod: { name: 'web-0', uid: 'u-0' } },
      status: { reportedAt: '2026-12-04T10:00:00Z', node: 'a@h' },
    });
  });
});
