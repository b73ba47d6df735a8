import { beforeAll, describe, expect, it } from '@jest/globals';
import type { ControlPlaneState } from '../../dev/cluster/control-plane.js';
import { freshNamespace, installCrd, kubectl, kubectlOk, sharedCluster } from '../support/cluster.js';

const manifest = (ns: string, name: string, specLines: string[]) =>
  [
    'apiVersion: cluster.netzlive.io/v1alpha1',
    'kind: ClusterTopology',
    `metadata: {name: ${name}, namespace: ${ns}}`,
    'spec:',
    ...specLines.map((l) => `  ${l}`),
  ].join('\n') + '\n';

describe('the ClusterTopology API on a real kube-apiserver', () => {
  let s: ControlPlaneState;
  /** The API server's minor version (the suite runs on the version CI builds and on the oldest claimed). */
  const serverMinor = async () =>
    Number(
      (
        JSON.parse(await kubectlOk(s, ['version', '-o', 'json'])) as { serverVersion: { minor: string } }
      ).serverVersion.minor.replace(/\D.*$/, ''),
    );
  let ns: string;
  beforeAll(async () => {
    s = await sharedCluster();
    await installCrd(s);
    ns = await freshNamespace(s, 'api');
  });

  it('is applied with kubectl apply, defaulted, and read back with kubectl get clustertopology / ctopo / ct', async () => {
    const applied = await kubectlOk(s, ['apply', '-f', '-'], {
      input: manifest(ns, 'web', ['selector: "netzlive/pod-type=cluster-service"']),
    });
    expect(applied).toContain('clustertopology.cluster.netzlive.io/web created');
    const obj = JSON.parse(await kubectlOk(s, ['get', 'clustertopology', 'web', '-n', ns, '-o', 'json']));
    expect(obj.spec).toEqual({
      selector: 'netzlive/pod-type=cluster-service',
      pollingInterval: '10s',
      mode: 'auto',
      ipLookupMode: 'pods',
      onForbidden: 'Retain',
      naming: {
        hostnameAnnotation: 'netzlive/hostname-naming-jsonpath',
        nodenameAnnotation: 'netzlive/nodename-naming-jsonpath',
        hostFallback: 'PodIP',
        clusterDomain: 'cluster.local',
      },
      membership: { peers: 'Running', terminating: 'Keep' },
      failureDomains: {
        analysis: 'On',
        levels: [
          { key: 'topology.kubernetes.io/region' },
          { key: 'topology.kubernetes.io/zone' },
          { key: 'kubernetes.io/hostname' },
        ],
      },
    });
    for (const name of ['ctopo', 'ct']) {
      const table = await kubectlOk(s, ['get', name, '-n', ns]);
      expect(table.split('\n')[0]).toMatch(
        /^NAME\s+PEERS\s+EXCLUDED\s+API\s+READY\s+REASON\s+QUORUM\s+MESH\s+LAST POLL\s+AGE$/,
      );
      expect(table).toMatch(/\nweb\s/);
    }
  });

  it('has a status subresource: the status is written only through it', async () => {
    await kubectlOk(s, ['apply', '-f', '-'], { input: manifest(ns, 'st', ['selector: "a=b"']) });
    await kubectlOk(s, [
      'patch',
      'ctopo',
      'st',
      '-n',
      ns,
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify({
        status: {
          peerCount: 2,
          excludedCount: 1,
          lastResponse: { code: '200', reason: 'OK', since: new Date().toISOString() },
        },
      }),
    ]);
    const table = await kubectlOk(s, ['get', 'ctopo', 'st', '-n', ns]);
    expect(table).toMatch(/\nst\s+2\s+1\s+200\s/);
    // A plain patch of .status is ignored by the main resource.
    await kubectlOk(s, [
      'patch',
      'ctopo',
      'st',
      '-n',
      ns,
      '--type=merge',
      '-p',
      '{"status":{"peerCount":9}}',
    ]);
    const obj = JSON.parse(await kubectlOk(s, ['get', 'ctopo', 'st', '-n', ns, '-o', 'json']));
    expect(obj.status.peerCount).toBe(2);
  });

  /**
   * A CEL rule's refusal: Kubernetes 1.35 and later quote the value, 1.34 and earlier the field's
   * type ("string"): apiextensions-apiserver's cel/validation.go passes sts.Type there up to
   * v0.34 (seen on 1.31.14, the oldest version CI runs) and the value from v0.35.
   */
  const cel = (field: string, value: string, message: string) => (minor: number) =>
    new RegExp(`${field}: Invalid value: "${minor >= 35 ? value : 'string'}": ${message}`);
  const refusals: [string, string[], RegExp | ((minor: number) => RegExp)][] = [
    ['an unknown field', ['selector: "a=b"', 'selectr: "x"'], /unknown field "spec.selectr"/],
    ['a missing selector', ['pollingInterval: 10s'], /spec.selector: Required value/],
    [
      'an empty selector',
      ['selector: ""'],
      /spec.selector: Invalid value: "": spec.selector in body should be at least 1 chars long/,
    ],
    ['a blank selector', ['selector: "   "'], cel('spec.selector', ' {3}', 'selector must not be blank')],
    [
      'a polling interval under 1s',
      ['selector: "a=b"', 'pollingInterval: 500ms'],
      cel('spec.pollingInterval', '500ms', 'pollingInterval must be at least 1s'),
    ],
    [
      'a polling interval that is not a duration',
      ['selector: "a=b"', 'pollingInterval: "10"'],
      /spec.pollingInterval: Invalid value: "10": spec.pollingInterval in body should match/,
    ],
    [
      'an unknown onForbidden',
      ['selector: "a=b"', 'onForbidden: Ignore'],
      /spec.onForbidden: Unsupported value: "Ignore": supported values: "Retain", "Disconnect"/,
    ],
    [
      'a mode other than auto',
      ['selector: "a=b"', 'mode: manual'],
      /spec.mode: Unsupported value: "manual": supported values: "auto"/,
    ],
    [
      'an ipLookupMode other than pods',
      ['selector: "a=b"', 'ipLookupMode: dns'],
      /spec.ipLookupMode: Unsupported value: "dns": supported values: "pods"/,
    ],
    [
      'a failure-domain level within no other level',
      ['selector: "a=b"', 'failureDomains: {levels: [{key: rack, within: zone}]}'],
      /within must name the key of another level/,
    ],
    [
      'a level within a transport level',
      [
        'selector: "a=b"',
        'failureDomains: {levels: [{key: vpn, transport: true}, {key: site, within: vpn}]}',
      ],
      /a transport level stands alone/,
    ],
    [
      'an analysis other than On or Off',
      ['selector: "a=b"', 'failureDomains: {analysis: Maybe}'],
      /spec.failureDomains.analysis: Unsupported value: "Maybe": supported values: "On", "Off"/,
    ],
    [
      'an annotation name that is not a valid key',
      ['selector: "a=b"', 'naming: {hostnameAnnotation: "not a key"}'],
      /spec.naming.hostnameAnnotation: Invalid value: "not a key"/,
    ],
    [
      'a namespace that is not a DNS label',
      ['selector: "a=b"', 'namespace: Bad_NS'],
      /spec.namespace: Invalid value: "Bad_NS"/,
    ],
  ];
  it.each(refusals)('refuses %s at kubectl apply, naming the field', async (_what, lines, message) => {
    const r = await kubectl(s, ['apply', '-f', '-'], { input: manifest(ns, 'bad', lines) });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(typeof message === 'function' ? message(await serverMinor()) : message);
    const get = await kubectl(s, ['get', 'ctopo', 'bad', '-n', ns]);
    expect(get.stderr).toMatch(/NotFound/);
  });

  it('explains every spec field', async () => {
    const out = await kubectlOk(s, ['explain', 'clustertopology.spec', '--recursive=false']);
    for (const field of [
      'selector',
      'namespace',
      'pollingInterval',
      'mode',
      'ipLookupMode',
      'naming',
      'onForbidden',
      'failureDomains',
    ])
      expect(out).toMatch(new RegExp(`\\n  ${field}\\t<\\w+>(\\s+-required-)?\\n(  enum: .*\\n)?    \\S`));
  });
});
