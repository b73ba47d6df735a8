import { describe, expect, it } from '@jest/globals';
import { resolvePeers, type ResolveResult } from '../../../operator/naming/index.js';
import { formatResolveJson, formatResolveTable } from '../../../operator/cli/resolve-format.js';
import { pod, seedSingleReplica } from '../naming/fixtures.js';

const result: ResolveResult = {
  peers: [
    {
      nodeName: 'web-0@10.0.0.1',
      pod: 'web-0',
      uid: 'u-0',
      podIP: '10.0.0.1',
      node: 'node-a',
      hostSource: 'PodIP',
      nameSource: 'PodName',
      terminating: false,
      ready: true,
      serving: true,
    },
    {
      nodeName: 'web-1@web.example',
      pod: 'web-1',
      uid: 'u-1',
      podIP: '10.0.0.2',
      node: '',
      hostSource: 'Annotation',
      nameSource: 'PodName',
      terminating: true,
      ready: false,
      serving: true,
    },
  ],
  excluded: [{ pod: 'web-2', reason: 'NoPodIP', message: 'the pod has no IP yet.' }],
};

describe('formatResolveTable', () => {
  it('prints peers and exclusions as aligned columns', () => {
    expect(formatResolveTable(result)).toBe(
      [
        'PEERS (2)',
        'NODE NAME           POD     IP         HOST FROM    NAME FROM   READY   SERVING   TERMINATING',
        'web-0@10.0.0.1      web-0   10.0.0.1   PodIP        PodName     yes     yes       no',
        'web-1@web.example   web-1   10.0.0.2   Annotation   PodName     no      yes       yes',
        '',
        'EXCLUDED (1)',
        'POD     REASON    MESSAGE',
        'web-2   NoPodIP   the pod has no IP yet.',
        '',
      ].join('\n'),
    );
  });

  it('prints - for a member state a status written before it existed does not carry', () => {
    const { ready: _r, serving: _s, ...old } = result.peers[0]!;
    const text = formatResolveTable({ peers: [old], excluded: [] });
    expect(text).toContain(
      'web-0@10.0.0.1   web-0   10.0.0.1   PodIP       PodName     -       -         no',
    );
  });

  it('says when a section is empty', () => {
    expect(formatResolveTable({ peers: [], excluded: [] })).toBe(
      'PEERS (0)\nno peers\n\nEXCLUDED (0)\nno excluded pods\n',
    );
  });

  it('never prints control characters from the input', () => {
    const evil = '\u001b[31mred\u001b[0m\nsecond line\u202e';
    const text = formatResolveTable({
      peers: [{ ...result.peers[0]!, pod: evil }],
      excluded: [{ pod: evil, reason: 'NoPodIP', message: 'm' }],
    });
    // eslint-disable-next-line no-control-regex -- control characters are what it looks for
    expect(text).not.toMatch(/[\u001b\u202e]/);
    expect(text.split('\n')).toHaveLength(8);
    expect(text).toContain('\\u001b[31mred\\u001b[0m\\u000asecond line\\u202e');
  });

  it('formats a real result', () => {
    const text = formatResolveTable(
      resolvePeers([seedSingleReplica('web-0', 'web.example', '10.0.0.9'), pod({ name: 'web-1', ip: '' })]),
    );
    expect(text).toContain(
      'web-0@web.example   web-0   10.0.0.9   Annotation   PodName     no      no        no',
    );
    expect(text).toMatch(/^web-1 {3}NoPodIP {3}the pod has no IP yet/m);
  });
});

describe('formatResolveJson', () => {
  it('prints exactly {"peers":[…],"excluded":[…]} with the documented fields in order', () => {
    expect(formatResolveJson(result)).toBe(
      '{"peers":[' +
        '{"nodeName":"web-0@10.0.0.1","pod":"web-0","uid":"u-0","podIP":"10.0.0.1","node":"node-a","hostSource":"PodIP","nameSource":"PodName","terminating":false,"ready":true,"serving":true},' +
        '{"nodeName":"web-1@web.example","pod":"web-1","uid":"u-1","podIP":"10.0.0.2","node":"","hostSource":"Annotation","nameSource":"PodName","terminating":true,"ready":false,"serving":true}' +
        '],"excluded":[{"pod":"web-2","reason":"NoPodIP","message":"the pod has no IP yet."}]}',
    );
  });

  it('drops fields that are not part of the output', () => {
    const extra = {
      peers: [{ ...result.peers[0]!, secret: 'x' }],
      excluded: [{ ...result.excluded[0]!, debug: 1 }],
    } as unknown as ResolveResult;
    const parsed = JSON.parse(formatResolveJson(extra)) as { peers: object[]; excluded: object[] };
    expect(Object.keys(parsed.peers[0]!)).toEqual([
      'nodeName',
      'pod',
      'uid',
      'podIP',
      'node',
      'hostSource',
      'nameSource',
      'terminating',
      'ready',
      'serving',
    ]);
    expect(Object.keys(parsed.excluded[0]!)).toEqual(['pod', 'reason', 'message']);
  });

  it('prints empty results', () => {
    expect(formatResolveJson({ peers: [], excluded: [] })).toBe('{"peers":[],"excluded":[]}');
  });
});
