import { describe, expect, it } from '@jest/globals';
import {
  dashedIP,
  DEFAULT_NAMING_SETTINGS,
  resolvePeers,
  type Excluded,
  type ResolveResult,
  type ResolveSettings,
} from '../../../operator/naming/index.js';
import { readinessDeadlockRisk } from '../../../operator/naming/readiness-deadlock.js';
import { HOST, NAME, pod, seedSingleReplica } from './fixtures.js';

const withNaming = (n: Partial<ResolveSettings>): ResolveSettings => ({ ...DEFAULT_NAMING_SETTINGS, ...n });

/** A pod as a StatefulSet makes it (spec.hostname and spec.subdomain), with a Ready condition. */
function statefulPod(
  name: string,
  o: { subdomain?: string; hostname?: string; ready?: boolean; ip?: string; deleting?: boolean } = {},
) {
  const p = pod({ name, ip: o.ip ?? '10.0.0.5', deleting: o.deleting ?? false });
  const spec = p['spec'] as Record<string, unknown>;
  if (o.hostname !== '') spec['hostname'] = o.hostname ?? name;
  if (o.subdomain !== undefined) spec['subdomain'] = o.subdomain;
  if (o.ready !== undefined)
    (p['status'] as Record<string, unknown>)['conditions'] = [
      { type: 'Initialized', status: 'True' },
      { type: 'Ready', status: o.ready ? 'True' : 'False' },
    ];
  return p;
}

function only(r: ResolveResult): Excluded {
  expect(r.peers).toEqual([]);
  expect(r.excluded).toHaveLength(1);
  return r.excluded[0]!;
}

describe('spec.naming.basename: the name part of pods without the nodename annotation', () => {
  it("gives every pod libcluster's <basename>@<pod IP>", () => {
    const r = resolvePeers(
      [pod({ name: 'web-7d-a', ip: '10.0.0.1' }), pod({ name: 'web-7d-b', ip: '10.0.0.2' })],
      withNaming({ basename: 'app' }),
    );
    expect(r.peers.map((p) => [p.nodeName, p.nameSource, p.hostSource])).toEqual([
      ['app@10.0.0.1', 'Basename', 'PodIP'],
      ['app@10.0.0.2', 'Basename', 'PodIP'],
    ]);
  });

  it('leaves a pod with the nodename annotation to the annotation', () => {
    const p = pod({ name: 'web-0', ip: '10.0.0.1', annotations: { [NAME]: '$.metadata.labels.app' } });
    (p['metadata'] as { labels: Record<string, string> }).labels['app'] = 'fromlabel';
    const [peer] = resolvePeers([p], withNaming({ basename: 'app' })).peers;
    expect(peer).toMatchObject({ nodeName: 'fromlabel@10.0.0.1', nameSource: 'Annotation' });
  });

  it('names the basename as the fallback in an annotation message', () => {
    const p = pod({ name: 'web-0', annotations: { [NAME]: '$.metadata.labels.missing' } });
    const e = only(resolvePeers([p], withNaming({ basename: 'app' })));
    expect(e.reason).toBe('NoMatch');
    expect(e.message).toContain('or remove the annotation to use the basename "app" (spec.naming.basename)');
  });

  it('two pods with one IP and the basename: both excluded, the message says why', () => {
    const r = resolvePeers(
      [pod({ name: 'a', ip: '10.0.0.1' }), pod({ name: 'b', ip: '10.0.0.1' })],
      withNaming({ basename: 'app' }),
    );
    expect(r.peers).toEqual([]);
    expect(r.excluded.map((e) => e.reason)).toEqual(['DuplicateNodeName', 'DuplicateNodeName']);
    expect(r.excluded[0]!.message).toContain('Their name part is spec.naming.basename');
  });
});

describe('spec.naming.hostFallback PodDNS: the pod A record', () => {
  const dns = withNaming({ hostFallback: 'PodDNS' });
  it('writes IPv4 with dashes under <namespace>.pod.<cluster domain>', () => {
    const [peer] = resolvePeers([pod({ name: 'web-0', ip: '10.1.2.3' })], dns).peers;
    expect(peer).toMatchObject({
      nodeName: 'web-0@10-1-2-3.netzlive.pod.cluster.local',
      hostSource: 'PodDNS',
      podIP: '10.1.2.3',
    });
  });

  it('uses spec.naming.clusterDomain', () => {
    const [peer] = resolvePeers(
      [pod({ name: 'web-0', ip: '10.1.2.3' })],
      withNaming({ hostFallback: 'PodDNS', clusterDomain: 'corp.example', basename: 'app' }),
    ).peers;
    expect(peer!.nodeName).toBe('app@10-1-2-3.netzlive.pod.corp.example');
  });

  it('writes IPv6 in its dashed form, never starting or ending with a dash', () => {
    expect(dashedIP('fd00::1')).toBe('fd00--1');
    expect(dashedIP('FD00:0:0:0:0:0:0:1')).toBe('fd00--1');
    expect(dashedIP('2001:db8:0:0:1:0:0:1')).toBe('2001-db8--1-0-0-1');
    expect(dashedIP('::1')).toBe('0--1');
    expect(dashedIP('fd00::')).toBe('fd00--0');
    expect(dashedIP('::ffff:10.1.2.3')).toBe('0--ffff-a01-203');
    expect(dashedIP('1:2:3:4:5:6:7:8')).toBe('1-2-3-4-5-6-7-8');
    const [peer] = resolvePeers([pod({ name: 'web-0', ip: 'fd00::1' })], dns).peers;
    expect(peer!.nodeName).toBe('web-0@fd00--1.netzlive.pod.cluster.local');
  });

  it('a pod read without a namespace: NoNamespace, naming the field', () => {
    const p = pod({ name: 'web-0' });
    delete (p['metadata'] as Record<string, unknown>)['namespace'];
    const e = only(resolvePeers([p], dns));
    expect(e.reason).toBe('NoNamespace');
    expect(e.message).toContain('metadata.namespace');
    expect(e.message).toContain('hostFallback PodDNS');
  });

  it('a pod without an IP has no A record: NoPodIP says so', () => {
    const e = only(resolvePeers([pod({ name: 'web-0', ip: '', phase: 'Pending' })], dns));
    expect(e.reason).toBe('NoPodIP');
    expect(e.message).toContain('no DNS record');
  });

  it('the hostname annotation still wins', () => {
    const [peer] = resolvePeers([seedSingleReplica('web-0', 'web.example')], dns).peers;
    expect(peer).toMatchObject({ nodeName: 'web-0@web.example', hostSource: 'Annotation' });
  });
});

describe('spec.naming.hostFallback Hostname: the StatefulSet name', () => {
  const hn = withNaming({ hostFallback: 'Hostname', basename: 'app' });
  it('is <hostname>.<subdomain>.<namespace>.svc.<cluster domain>', () => {
    const [peer] = resolvePeers([statefulPod('db-0', { subdomain: 'db' })], hn).peers;
    expect(peer).toMatchObject({
      nodeName: 'app@db-0.db.netzlive.svc.cluster.local',
      hostSource: 'Hostname',
      nameSource: 'Basename',
    });
  });

  it('takes the pod name when spec.hostname is not set (as Kubernetes does)', () => {
    const [peer] = resolvePeers([statefulPod('db-1', { subdomain: 'db', hostname: '' })], hn).peers;
    expect(peer!.nodeName).toBe('app@db-1.db.netzlive.svc.cluster.local');
  });

  it('is stable across a restart: a new IP gives the same node name', () => {
    const before = resolvePeers([statefulPod('db-0', { subdomain: 'db', ip: '10.0.0.5' })], hn).peers;
    const after = resolvePeers([statefulPod('db-0', { subdomain: 'db', ip: '10.0.9.9' })], hn).peers;
    expect(after[0]!.nodeName).toBe(before[0]!.nodeName);
  });

  it('a pod without spec.subdomain: NoSubdomain, naming the field and what to do', () => {
    const e = only(resolvePeers([statefulPod('db-0')], hn));
    expect(e.reason).toBe('NoSubdomain');
    expect(e.message).toContain('no spec.subdomain');
    expect(e.message).toContain('serviceName');
    expect(e.message).toContain('set spec.naming.hostFallback to PodIP or PodDNS');
  });

  it('NoSubdomain before NoPodIP: the configuration first', () => {
    const e = only(resolvePeers([statefulPod('db-0', { ip: '' })], hn));
    expect(e.reason).toBe('NoSubdomain');
  });

  it('a hostname that makes no DNS name: InvalidNodeName pointing at the fields', () => {
    const e = only(resolvePeers([statefulPod('db-0', { subdomain: 'db_bad' })], hn));
    expect(e.reason).toBe('InvalidNodeName');
    expect(e.message).toContain('the pod hostname');
    expect(e.message).toContain('check spec.hostname, spec.subdomain');
  });

  it('with the hostname annotation, no subdomain is needed', () => {
    const p = seedSingleReplica('web-0', 'web.example');
    expect(resolvePeers([p], hn).peers[0]!.nodeName).toBe('app@web.example');
  });
});

describe('member state: ready, serving, terminating (EndpointSlice)', () => {
  it('ready and serving follow the Ready condition; terminating clears ready, not serving', () => {
    const r = resolvePeers([
      statefulPod('a', { ready: true, ip: '10.0.0.1' }),
      statefulPod('b', { ready: false, ip: '10.0.0.2' }),
      statefulPod('c', { ready: true, ip: '10.0.0.3', deleting: true }),
      statefulPod('d', { ip: '10.0.0.4' }),
    ]);
    expect(r.peers.map((p) => [p.pod, p.ready, p.serving, p.terminating])).toEqual([
      ['a', true, true, false],
      ['b', false, false, false],
      ['c', false, true, true],
      ['d', false, false, false],
    ]);
  });
});

describe('spec.membership', () => {
  const ready: ResolveSettings = withNaming({ membership: { peers: 'Ready', terminating: 'Keep' } });
  const drop: ResolveSettings = withNaming({ membership: { peers: 'Running', terminating: 'Drop' } });

  it('peers Ready: a pod whose Ready condition is not True is excluded as PodNotReady, with the deadlock warning', () => {
    const r = resolvePeers(
      [statefulPod('a', { ready: true, ip: '10.0.0.1' }), statefulPod('b', { ready: false, ip: '10.0.0.2' })],
      ready,
    );
    expect(r.peers.map((p) => p.pod)).toEqual(['a']);
    expect(r.excluded).toHaveLength(1);
    expect(r.excluded[0]).toMatchObject({ pod: 'b', reason: 'PodNotReady' });
    expect(r.excluded[0]!.message).toContain('spec.membership.peers is Ready');
    expect(r.excluded[0]!.message).toContain('never becomes ready');
  });

  it('peers Running (the default): a not-ready running pod is a peer, flagged', () => {
    const r = resolvePeers([statefulPod('b', { ready: false })]);
    expect(r.peers).toHaveLength(1);
    expect(r.peers[0]!.ready).toBe(false);
  });

  it('terminating Drop: a terminating pod is excluded at once as PodTerminating', () => {
    const r = resolvePeers([statefulPod('c', { ready: true, deleting: true })], drop);
    expect(only(r)).toMatchObject({ pod: 'c', reason: 'PodTerminating' });
    expect(r.excluded[0]!.message).toContain('spec.membership.terminating is Drop');
  });

  it('terminating Drop: the replacement holding the same name is the peer, no duplicate', () => {
    const hn = { ...drop, hostFallback: 'Hostname' as const };
    const r = resolvePeers(
      [
        statefulPod('db-0', { subdomain: 'db', deleting: true, ip: '10.0.0.1' }),
        {
          ...statefulPod('db-0', { subdomain: 'db', ip: '10.0.0.2' }),
          metadata: { name: 'db-0', namespace: 'netzlive', uid: 'new' },
        },
      ],
      hn,
    );
    expect(r.peers.map((p) => p.uid)).toEqual(['new']);
    expect(r.excluded.map((e) => e.reason)).toEqual(['PodTerminating']);
  });

  it('terminating Keep (the default): it stays a peer, flagged', () => {
    const [peer] = resolvePeers([statefulPod('c', { ready: true, deleting: true })]).peers;
    expect(peer).toMatchObject({ terminating: true, ready: false, serving: true });
  });

  it('a terminating, not-ready pod under Ready and Drop carries one reason: PodTerminating', () => {
    const both = withNaming({ membership: { peers: 'Ready', terminating: 'Drop' } });
    expect(only(resolvePeers([statefulPod('c', { ready: false, deleting: true })], both)).reason).toBe(
      'PodTerminating',
    );
  });

  it('naming problems come before the policy: a not-ready pod with a broken annotation shows the annotation', () => {
    const p = statefulPod('b', { ready: false });
    (p['metadata'] as Record<string, unknown>)['annotations'] = { [HOST]: '$[' };
    expect(only(resolvePeers([p], ready)).reason).toBe('InvalidJSONPath');
  });
});

describe('the ReadinessDeadlockRisk condition', () => {
  const notReady: Excluded = { pod: 'b', reason: 'PodNotReady', message: 'm' };
  it('False under Running', () => {
    expect(readinessDeadlockRisk({ peers: 'Running', terminating: 'Keep' }, 0, [notReady])).toMatchObject({
      status: 'False',
      reason: 'RunningPodsArePeers',
    });
  });
  it('True, NoPodReady, when no pod is ready under Ready', () => {
    const c = readinessDeadlockRisk({ peers: 'Ready', terminating: 'Keep' }, 0, [notReady, notReady]);
    expect(c).toMatchObject({ status: 'True', reason: 'NoPodReady' });
    expect(c.message).toContain('none of the 2 pods');
    expect(c.message).toContain('set spec.membership.peers to Running');
  });
  it('True, ReadyPodsOnly, as a warning while some are ready', () => {
    const c = readinessDeadlockRisk({ peers: 'Ready', terminating: 'Keep' }, 2, [notReady]);
    expect(c).toMatchObject({ status: 'True', reason: 'ReadyPodsOnly' });
    expect(c.message).toContain('(1 not ready now)');
  });
});

describe('PodDNS on a pod IP that is not an address', () => {
  it('is InvalidNodeName, saying there is no A record for it', () => {
    const e = only(
      resolvePeers([pod({ name: 'web-0', ip: 'not-an-ip' })], withNaming({ hostFallback: 'PodDNS' })),
    );
    expect(e.reason).toBe('InvalidNodeName');
    expect(e.message).toContain('is not an IP address');
  });
});
