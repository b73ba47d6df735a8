import { describe, expect, it } from '@jest/globals';
import {
  checkNodeName,
  clearJsonPathCache,
  DEFAULT_NAMING_SETTINGS,
  EXCLUSION_REASONS,
  jsonPathCacheStats,
  resolvePeers,
  type Excluded,
  type ResolveResult,
} from '../../../operator/naming/index.js';
import { quoteString } from '../../../operator/naming/quote.js';
import { deepFreeze, HOST, NAME, pod, SEED_HOST_EXPRESSION, seedSingleReplica } from './fixtures.js';

function only(result: ResolveResult): Excluded {
  expect(result.peers).toEqual([]);
  expect(result.excluded).toHaveLength(1);
  return result.excluded[0]!;
}

describe('the seed set-ups', () => {
  it('single replica with a stable DNS name: EXTERNAL_DNS through the hostname annotation', () => {
    const p = seedSingleReplica('myname-web-7d9f-x2x', 'myname-web.netzlive.svc.cluster.local', '10.1.2.3');
    expect(resolvePeers([p])).toEqual({
      peers: [
        {
          nodeName: 'myname-web-7d9f-x2x@myname-web.netzlive.svc.cluster.local',
          pod: 'myname-web-7d9f-x2x',
          uid: 'uid-myname-web-7d9f-x2x',
          podIP: '10.1.2.3',
          node: 'node-a',
          hostSource: 'Annotation',
          nameSource: 'PodName',
          terminating: false,
        },
      ],
      excluded: [],
    });
  });

  it('several replicas: no annotations, the pod IP fallback, sorted by node name', () => {
    const pods = [
      pod({ name: 'web-b', ip: '10.0.0.12', node: 'n2' }),
      pod({ name: 'web-a', ip: '10.0.0.11', node: 'n1' }),
      pod({ name: 'web-c', ip: '10.0.0.13', node: 'n3' }),
    ];
    const r = resolvePeers(pods);
    expect(r.excluded).toEqual([]);
    expect(r.peers.map((p) => [p.nodeName, p.hostSource, p.nameSource, p.node])).toEqual([
      ['web-a@10.0.0.11', 'PodIP', 'PodName', 'n1'],
      ['web-b@10.0.0.12', 'PodIP', 'PodName', 'n2'],
      ['web-c@10.0.0.13', 'PodIP', 'PodName', 'n3'],
    ]);
  });

  it('a pod without any annotations gets both fallbacks (the seed drops it silently)', () => {
    const p = pod({ name: 'web-0', ip: '10.0.0.5' });
    expect(Object.hasOwn(p['metadata'] as object, 'annotations')).toBe(false);
    expect(resolvePeers([p]).peers.map((x) => x.nodeName)).toEqual(['web-0@10.0.0.5']);
    expect(resolvePeers([pod({ name: 'web-0', ip: '10.0.0.5', annotations: {} })]).peers).toHaveLength(1);
    expect(
      resolvePeers([pod({ name: 'web-0', ip: '10.0.0.5', annotations: { 'other/annotation': 'x' } })]).peers,
    ).toHaveLength(1);
  });

  it('the nodename annotation sets the part before @', () => {
    const p = pod({
      name: 'web-0',
      ip: '10.0.0.5',
      annotations: { [NAME]: "$.spec.containers[?(@.name == 'app')].env[?(@.name == 'RELEASE')].value" },
      env: { RELEASE: 'billing' },
    });
    const [peer] = resolvePeers([p]).peers;
    expect(peer).toMatchObject({
      nodeName: 'billing@10.0.0.5',
      hostSource: 'PodIP',
      nameSource: 'Annotation',
    });
  });

  it('reads the annotation names from the settings', () => {
    const settings = { hostnameAnnotation: 'example.com/host', nodenameAnnotation: 'example.com/name' };
    const p = pod({
      name: 'web-0',
      annotations: {
        'example.com/host': '$.spec.hostname',
        'example.com/name': '$.metadata.labels.app',
        [HOST]: '$.not.used',
      },
    });
    (p['spec'] as Record<string, unknown>)['hostname'] = 'web-0.web';
    (p['metadata'] as { labels: Record<string, string> }).labels['app'] = 'web';
    expect(resolvePeers([p], settings).peers[0]).toMatchObject({
      nodeName: 'web@web-0.web',
      hostSource: 'Annotation',
      nameSource: 'Annotation',
    });
    // With the defaults, the default annotation is read instead.
    expect(resolvePeers([p]).excluded[0]!.reason).toBe('NoMatch');
  });

  it('defaults to the netzlive annotations', () => {
    expect(DEFAULT_NAMING_SETTINGS).toEqual({
      hostnameAnnotation: 'netzlive/hostname-naming-jsonpath',
      nodenameAnnotation: 'netzlive/nodename-naming-jsonpath',
    });
  });
});

describe('peer fields', () => {
  it('keeps a terminating pod as a peer, flagged', () => {
    const [peer] = resolvePeers([pod({ name: 'web-0', ip: '10.0.0.1', deleting: true })]).peers;
    expect(peer).toMatchObject({ nodeName: 'web-0@10.0.0.1', terminating: true });
  });

  it('uses IPv6 pod IPs as hosts', () => {
    const r = resolvePeers([pod({ name: 'web-0', ip: 'fd00:10:244::5' }), pod({ name: 'web-1', ip: '::1' })]);
    expect(r.peers.map((p) => p.nodeName)).toEqual(['web-0@fd00:10:244::5', 'web-1@::1']);
    expect(r.peers[0]!.podIP).toBe('fd00:10:244::5');
  });

  it('accepts an IPv6 host from an annotation', () => {
    const p = pod({
      name: 'web-0',
      ip: 'fd00::7',
      annotations: { [HOST]: SEED_HOST_EXPRESSION },
      env: { EXTERNAL_DNS: 'fd00::7' },
    });
    expect(resolvePeers([p]).peers[0]).toMatchObject({ nodeName: 'web-0@fd00::7', hostSource: 'Annotation' });
  });

  it('reports an unscheduled pod with node ""', () => {
    const p = pod({ name: 'web-0' });
    delete (p['spec'] as Record<string, unknown>)['nodeName'];
    expect(resolvePeers([p]).peers[0]!.node).toBe('');
  });

  it('falls back to the pod name as uid when the input has none', () => {
    const p = pod({ name: 'web-0' });
    delete (p['metadata'] as Record<string, unknown>)['uid'];
    expect(resolvePeers([p]).peers[0]!.uid).toBe('web-0');
  });

  it('keys peers by uid: two pods reusing one IP in turn are different peers', () => {
    const before = resolvePeers([pod({ name: 'web-0', uid: 'u-1', ip: '10.0.0.9' })]).peers[0]!;
    const after = resolvePeers([pod({ name: 'web-1', uid: 'u-2', ip: '10.0.0.9' })]).peers[0]!;
    expect(before.podIP).toBe(after.podIP);
    expect(before.uid).not.toBe(after.uid);
  });

  it('never writes to its input', () => {
    const pods = deepFreeze([
      seedSingleReplica('web-0', 'a.example'),
      pod({ name: 'web-1', ip: '' }),
      pod({ name: 'web-2', annotations: { [HOST]: '$..[?(@.name)].name' } }),
    ]);
    const before = JSON.stringify(pods);
    resolvePeers(pods);
    expect(JSON.stringify(pods)).toBe(before);
  });
});

describe('exclusions: one reason each, with a message to act on', () => {
  it('lists the reason names', () => {
    expect(EXCLUSION_REASONS).toEqual([
      'NoPodIP',
      'PodFinished',
      'InvalidJSONPath',
      'NoMatch',
      'AmbiguousMatch',
      'NotAString',
      'InvalidNodeName',
      'DuplicateNodeName',
      'ExpressionTooCostly',
    ]);
  });

  it('NoPodIP: no IP yet and no hostname annotation', () => {
    expect(only(resolvePeers([pod({ name: 'web-0', ip: '', phase: 'Pending' })]))).toEqual({
      pod: 'web-0',
      reason: 'NoPodIP',
      message:
        'the pod has no IP yet (status.podIP is empty, status.phase "Pending"), and without the hostname annotation netzlive/hostname-naming-jsonpath its host is the pod IP; it joins once it has one.',
    });
  });

  it('NoPodIP: no IP yet, even with the host from an annotation (it cannot be reached)', () => {
    const p = seedSingleReplica('web-0', 'web.example');
    delete (p['status'] as Record<string, unknown>)['podIP'];
    const e = only(resolvePeers([p]));
    expect(e.reason).toBe('NoPodIP');
    expect(e.message).toContain(
      'although its host comes from the hostname annotation netzlive/hostname-naming-jsonpath',
    );
  });

  it('NoPodIP: a podIP that is not a string reads as missing', () => {
    const p = pod({ name: 'web-0' });
    (p['status'] as Record<string, unknown>)['podIP'] = 10;
    expect(only(resolvePeers([p])).reason).toBe('NoPodIP');
  });

  it.each(['Succeeded', 'Failed'])('PodFinished: phase %s, before anything else', (phase) => {
    const p = pod({ name: 'job-0', phase, ip: '', annotations: { [HOST]: '$.a[?(@.hook())]' } });
    expect(only(resolvePeers([p]))).toEqual({
      pod: 'job-0',
      reason: 'PodFinished',
      message: `the pod has finished (status.phase "${phase}"); a finished pod never runs again — its controller replaces it with a new pod, which is resolved on its own.`,
    });
  });

  it('InvalidJSONPath: names the annotation, the problem with its position, and the way out', () => {
    const p = pod({ name: 'web-0', annotations: { [HOST]: '$.spec.containers[(@.length-1)].name' } });
    expect(only(resolvePeers([p]))).toEqual({
      pod: 'web-0',
      reason: 'InvalidJSONPath',
      message:
        'the hostname annotation netzlive/hostname-naming-jsonpath is not a usable JSONPath: script steps [( … )] are not allowed: their result is read as more path; use a filter [?( … )] or a slice such as [-1:] (at character 19). Expression: "$.spec.containers[(@.length-1)].name". Fix the expression, or remove the annotation to use the pod IP (status.podIP).',
    });
  });

  it('InvalidJSONPath: the nodename annotation, with the pod name as the way out', () => {
    const e = only(resolvePeers([pod({ annotations: { [NAME]: 'metadata.name' } })]));
    expect(e.reason).toBe('InvalidJSONPath');
    expect(e.message).toContain(
      'the nodename annotation netzlive/nodename-naming-jsonpath is not a usable JSONPath',
    );
    expect(e.message).toContain('or remove the annotation to use the pod name (metadata.name).');
  });

  it('InvalidJSONPath: an annotation value that is not a string', () => {
    const e = only(resolvePeers([pod({ annotations: { [HOST]: 42 } })]));
    expect(e.reason).toBe('InvalidJSONPath');
    expect(e.message).toContain('holds a number where a JSONPath string belongs');
  });

  it('InvalidJSONPath: an empty annotation is not "no annotation"', () => {
    const e = only(resolvePeers([pod({ annotations: { [HOST]: '' } })]));
    expect(e.reason).toBe('InvalidJSONPath');
    expect(e.message).toContain('the expression is empty');
  });

  it('InvalidJSONPath: over 4 KiB, saying so', () => {
    const e = only(resolvePeers([pod({ annotations: { [HOST]: `$.${'a'.repeat(4095)}` } })]));
    expect(e.reason).toBe('InvalidJSONPath');
    expect(e.message).toContain('the expression is 4097 bytes long; at most 4096 bytes are allowed');
    // The expression is quoted shortened, not in full.
    expect(e.message.length).toBeLessThan(600);
    expect(e.message).toContain('more characters)');
  });

  it('InvalidJSONPath: a trailing line break from a YAML block is explained, not trimmed', () => {
    const e = only(resolvePeers([pod({ annotations: { [HOST]: `${SEED_HOST_EXPRESSION}\n` } })]));
    expect(e.reason).toBe('InvalidJSONPath');
    expect(e.message).toContain('ends with a line break (nothing is trimmed; a YAML | block adds one');
  });

  it('InvalidJSONPath comes before NoPodIP: a pending pod shows its broken annotation at once', () => {
    const p = pod({ ip: '', annotations: { [HOST]: '$.a[?(@.hook())]' } });
    expect(only(resolvePeers([p])).reason).toBe('InvalidJSONPath');
  });

  it('InvalidJSONPath: the hostname annotation is checked before the nodename annotation', () => {
    const p = pod({ annotations: { [HOST]: '$.a^', [NAME]: '$.b^' } });
    expect(only(resolvePeers([p])).message).toContain('the hostname annotation');
  });

  it('ExpressionTooCostly: an expression that runs too long on this pod', () => {
    const body = Array.from({ length: 150 }, () => "@.name == 'never'").join(' || ');
    const p = pod({ annotations: { [HOST]: `$..[?(${body})].name` } });
    (p['spec'] as Record<string, unknown>)['extra'] = Array.from({ length: 5000 }, (_, k) => ({
      name: `x${k}`,
    }));
    const e = only(resolvePeers([p]));
    expect(e.reason).toBe('ExpressionTooCostly');
    expect(e.message).toContain('evaluation steps against this pod, so it was stopped');
    expect(e.message).toContain('instead of searching with ..');
  });

  it('NoMatch: says what matched nothing and how to compare', () => {
    const p = pod({ name: 'web-0', annotations: { [HOST]: SEED_HOST_EXPRESSION }, env: { OTHER: 'x' } });
    expect(only(resolvePeers([p]))).toEqual({
      pod: 'web-0',
      reason: 'NoMatch',
      message: `the hostname annotation netzlive/hostname-naming-jsonpath matched nothing in this pod: "${SEED_HOST_EXPRESSION}" selects no value. Compare it with the pod's JSON (kubectl get pod -o json), or remove the annotation to use the pod IP (status.podIP).`,
    });
  });

  it('AmbiguousMatch: lists the distinct values, quoted, and how to narrow', () => {
    const p = pod({
      name: 'web-0',
      annotations: { [HOST]: SEED_HOST_EXPRESSION },
      containers: [
        { name: 'app', env: [{ name: 'EXTERNAL_DNS', value: 'a.example' }] },
        { name: 'proxy', env: [{ name: 'EXTERNAL_DNS', value: 'b.example' }] },
        { name: 'log', env: [{ name: 'EXTERNAL_DNS', value: 'a.example' }] },
      ],
    });
    const e = only(resolvePeers([p]));
    expect(e.reason).toBe('AmbiguousMatch');
    expect(e.message).toBe(
      `the hostname annotation netzlive/hostname-naming-jsonpath matched 2 different values ("a.example", "b.example") with "${SEED_HOST_EXPRESSION}"; the host (after @) must be exactly one value. Narrow the expression, for example with a filter on the container name such as [?(@.name == 'app')].`,
    );
  });

  it('AmbiguousMatch: counts the values it does not show', () => {
    const p = pod({
      annotations: { [NAME]: '$.spec.containers[*].name' },
      containers: ['a', 'b', 'c', 'd', 'e'].map((name) => ({ name })),
    });
    expect(only(resolvePeers([p])).message).toContain(
      'matched 5 different values ("a", "b", "c" and 2 more)',
    );
  });

  it.each([
    ['an object', '$.spec.containers[0].env[0]', 'an object, {"name":"EXTERNAL_DNS","value":"a.example"}'],
    ['a number', '$.spec.containers[0].ports[0].containerPort', 'a number, 4369'],
    ['null', '$.spec.containers[0].nothing', 'null, null'],
    ['a boolean', '$.spec.containers[0].tty', 'a boolean, true'],
  ])('NotAString: %s', (_, expression, shown) => {
    const p = pod({
      annotations: { [HOST]: expression },
      containers: [
        {
          name: 'app',
          env: [{ name: 'EXTERNAL_DNS', value: 'a.example' }],
          ports: [{ containerPort: 4369 }],
          nothing: null,
          tty: true,
        },
      ],
    });
    const e = only(resolvePeers([p]));
    expect(e.reason).toBe('NotAString');
    expect(e.message).toContain(
      `selected ${shown}, with "${expression}"; the host (after @) must be a string.`,
    );
  });

  it('InvalidNodeName: a pod name that is not a node name, pointing at the nodename annotation', () => {
    const e = only(resolvePeers([pod({ name: 'web.v2-0', ip: '10.0.0.3' })]));
    expect(e).toEqual({
      pod: 'web.v2-0',
      reason: 'InvalidNodeName',
      message:
        'node name "web.v2-0@10.0.0.3" is invalid: the name part (before @) may only hold letters, digits, _ and -. The name (before @) came from the pod name (metadata.name), "web.v2-0". The pod name is not usable as a node name; set the nodename annotation netzlive/nodename-naming-jsonpath to select one that is (letters, digits, _ and -).',
    });
  });

  it('InvalidNodeName: an annotation that selects an empty string', () => {
    const e = only(resolvePeers([seedSingleReplica('web-0', '')]));
    expect(e.reason).toBe('InvalidNodeName');
    expect(e.message).toContain('the host part (after @) is empty');
    expect(e.message).toContain('which selected ""');
  });

  it('InvalidNodeName: whitespace is reported, not trimmed', () => {
    const e = only(resolvePeers([seedSingleReplica('web-0', ' web.example ')]));
    expect(e.reason).toBe('InvalidNodeName');
    expect(e.message).toContain(
      'which selected " web.example " (note the whitespace at its start or end: nothing is trimmed)',
    );
  });

  it('InvalidNodeName: too long, with the lengths of both halves', () => {
    const host = ['a'.repeat(63), 'b'.repeat(63), 'c'.repeat(63), 'd'.repeat(61)].join('.');
    const e = only(resolvePeers([seedSingleReplica('web-0', host)]));
    expect(e.reason).toBe('InvalidNodeName');
    expect(e.message).toContain('longer than 255 characters (name 5 + host 253 characters)');
  });

  it('InvalidNodeName: an @ inside the name is blamed on the name', () => {
    const p = pod({ annotations: { [NAME]: '$.metadata.labels.n' } });
    (p['metadata'] as { labels: Record<string, string> }).labels['n'] = 'a@b';
    const e = only(resolvePeers([p]));
    expect(e.message).toContain('the name part (before @) may only hold letters');
    expect(e.message).toContain('The name (before @) came from the nodename annotation');
  });

  const hostileValues = [
    'web.example; rm -rf /',
    '$(reboot)',
    '`id`',
    "web'.example",
    'web".example',
    'web\n.example',
    'web.example\r',
    'web example',
    'a|b',
    'a&&b',
    "' or 1=1 --",
    'host\u0000',
    '-oProxyCommand=x',
    '../../etc/passwd',
    'web.example\u202e',
    "'web@other'",
    'x'.repeat(300),
  ];

  it.each(hostileValues)('InvalidNodeName: hostile host value %j, quoted safely', (value) => {
    const e = only(resolvePeers([seedSingleReplica('web-0', value)]));
    expect(e.reason).toBe('InvalidNodeName');
    // eslint-disable-next-line no-control-regex -- control characters are what it looks for
    expect(e.message).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202e]/);
    expect(e.message).toContain(`which selected ${quoteString(value)}`);
  });

  it('quotes hostile values as escaped literals', () => {
    const message = (v: string) => only(resolvePeers([seedSingleReplica('web-0', v)])).message;
    expect(message('web\n.example')).toContain('which selected "web\\n.example"');
    expect(message('web".example')).toContain('which selected "web\\".example"');
    expect(message('host\u0000')).toContain('which selected "host\\u0000"');
    expect(message('web.example\u202e')).toContain('which selected "web.example\\u202e"');
    expect(message('x'.repeat(300))).toContain(`which selected "${'x'.repeat(80)}"… (220 more characters)`);
  });

  it.each(hostileValues)('InvalidNodeName: hostile name value %j', (value) => {
    const p = pod({ annotations: { [NAME]: '$.metadata.labels.n' } });
    (p['metadata'] as { labels: Record<string, string> }).labels['n'] = value;
    expect(only(resolvePeers([p])).reason).toBe('InvalidNodeName');
  });

  it('excluded pods are sorted by pod name', () => {
    const r = resolvePeers([
      pod({ name: 'c', ip: '' }),
      pod({ name: 'a', ip: '' }),
      pod({ name: 'B', ip: '' }),
    ]);
    expect(r.excluded.map((e) => e.pod)).toEqual(['B', 'a', 'c']);
  });

  it('an input entry that is not a pod object is excluded, not dropped', () => {
    const r = resolvePeers([null, 3, 'pod', [], {}]);
    expect(r.peers).toEqual([]);
    expect(r.excluded).toHaveLength(5);
    expect(r.excluded.every((e) => e.reason === 'NoPodIP' && e.pod === '')).toBe(true);
  });
});

describe('several pods, one node name', () => {
  const trapAnnotations = { [HOST]: SEED_HOST_EXPRESSION, [NAME]: '$.metadata.labels.app' };
  function replica(name: string, opts: { deleting?: boolean; ip?: string } = {}) {
    const p = pod({
      name,
      ip: opts.ip ?? `10.0.0.${name.length}`,
      deleting: opts.deleting,
      annotations: trapAnnotations,
      env: { EXTERNAL_DNS: 'myname-web.netzlive.svc.cluster.local' },
    });
    (p['metadata'] as { labels: Record<string, string> }).labels['app'] = 'web';
    return p;
  }

  it('the shared-DNS-name trap: all replicas excluded, with the seed fix as hint', () => {
    const r = resolvePeers([replica('web-2'), replica('web-0'), replica('web-1')]);
    expect(r.peers).toEqual([]);
    expect(r.excluded.map((e) => [e.pod, e.reason])).toEqual([
      ['web-0', 'DuplicateNodeName'],
      ['web-1', 'DuplicateNodeName'],
      ['web-2', 'DuplicateNodeName'],
    ]);
    expect(r.excluded[0]!.message).toBe(
      'node name "web@myname-web.netzlive.svc.cluster.local" is shared by 3 pods ("web-0", "web-1", "web-2"), 3 of them not terminating; a node name must belong to exactly one pod, so none of them is a peer. Replicas that share one DNS name get one node name: leave the hostname annotation netzlive/hostname-naming-jsonpath off so each pod\'s host is its own pod IP, and start each node as ${HOSTNAME}@${POD_IP} (POD_IP from the field status.podIP).',
    );
    expect(new Set(r.excluded.map((e) => e.message)).size).toBe(1);
  });

  it('one live pod and terminating ones: the live one holds the name', () => {
    const r = resolvePeers([
      replica('web-old', { deleting: true }),
      replica('web-new'),
      replica('web-older', { deleting: true }),
    ]);
    expect(r.peers.map((p) => [p.pod, p.terminating])).toEqual([['web-new', false]]);
    expect(r.excluded).toEqual([
      {
        pod: 'web-old',
        reason: 'DuplicateNodeName',
        message:
          'node name "web@myname-web.netzlive.svc.cluster.local" is held by pod "web-new", which is not terminating; this pod is terminating and gives way to it.',
      },
      {
        pod: 'web-older',
        reason: 'DuplicateNodeName',
        message:
          'node name "web@myname-web.netzlive.svc.cluster.local" is held by pod "web-new", which is not terminating; this pod is terminating and gives way to it.',
      },
    ]);
  });

  it('all terminating: all excluded', () => {
    const r = resolvePeers([replica('web-0', { deleting: true }), replica('web-1', { deleting: true })]);
    expect(r.peers).toEqual([]);
    expect(r.excluded[0]!.message).toContain(
      'is shared by 2 pods ("web-0" (terminating), "web-1" (terminating)), all of them terminating',
    );
  });

  it('two live and one terminating: all excluded', () => {
    const r = resolvePeers([replica('web-0'), replica('web-1'), replica('web-2', { deleting: true })]);
    expect(r.peers).toEqual([]);
    expect(r.excluded).toHaveLength(3);
    expect(r.excluded[0]!.message).toContain('2 of them not terminating');
  });

  it('a shared name from the nodename annotation gets its own hint', () => {
    const mk = (name: string, ip: string) => {
      const p = pod({ name, ip, annotations: { [NAME]: '$.metadata.labels.app' } });
      (p['metadata'] as { labels: Record<string, string> }).labels['app'] = 'web';
      return p;
    };
    const r = resolvePeers([mk('web-0', '10.0.0.1'), mk('web-1', '10.0.0.1')]);
    expect(r.excluded[0]!.message).toContain(
      'The nodename annotation netzlive/nodename-naming-jsonpath gives them the same name; make it select something unique per pod',
    );
  });

  it('the same pod name and IP twice', () => {
    const r = resolvePeers([pod({ name: 'web-0', uid: 'a' }), pod({ name: 'web-0', uid: 'b' })]);
    expect(r.peers).toEqual([]);
    expect(r.excluded[0]!.message).toContain('They have the same pod name and IP');
  });

  it('lists at most five pods in the message', () => {
    const r = resolvePeers(Array.from({ length: 8 }, (_, k) => replica(`web-${k}`)));
    expect(r.excluded[0]!.message).toContain('("web-0", "web-1", "web-2", "web-3", "web-4" and 3 more)');
  });

  it('leaves pods with other node names alone', () => {
    const r = resolvePeers([replica('web-0'), replica('web-1'), pod({ name: 'solo', ip: '10.9.9.9' })]);
    expect(r.peers.map((p) => p.nodeName)).toEqual(['solo@10.9.9.9']);
  });
});

describe('sorting and scale', () => {
  it('sorts peers by node name in code-unit order', () => {
    const r = resolvePeers([
      pod({ name: 'b', ip: '10.0.0.1' }),
      pod({ name: 'B', ip: '10.0.0.2' }),
      pod({ name: 'a', ip: '10.0.0.3' }),
      pod({ name: 'a', ip: '10.0.0.10' }),
    ]);
    expect(r.peers.map((p) => p.nodeName)).toEqual(['B@10.0.0.2', 'a@10.0.0.10', 'a@10.0.0.3', 'b@10.0.0.1']);
  });

  it('parses one expression once for 10,000 pods', () => {
    clearJsonPathCache();
    const pods = Array.from({ length: 10_000 }, (_, k) =>
      seedSingleReplica(`web-${k}`, `web-${k}.example`, `10.0.${k >> 8}.${k & 255}`),
    );
    const r = resolvePeers(pods);
    expect(r.peers).toHaveLength(10_000);
    expect(jsonPathCacheStats().misses).toBe(1);
    expect(r.peers.every((p) => checkNodeName(p.nodeName).ok)).toBe(true);
  });
});
