import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import {
  checkNodeName,
  DEFAULT_NAMING_SETTINGS,
  EXCLUSION_REASONS,
  resolvePeers,
  type ResolveSettings,
} from '../../../operator/naming/index.js';
import { HOST, NAME, pod, SEED_HOST_EXPRESSION } from './fixtures.js';

// Every naming mode and membership policy over pods in every state: with and without a
// namespace, subdomain, hostname, IP (v4, v6, none, garbage), Ready condition, deletion
// timestamp, annotations.

const settingsArb: fc.Arbitrary<ResolveSettings> = fc
  .record({
    basename: fc.option(fc.constantFrom('app', 'web_1', 'x'), { nil: undefined }),
    hostFallback: fc.option(fc.constantFrom('PodIP' as const, 'PodDNS' as const, 'Hostname' as const), {
      nil: undefined,
    }),
    clusterDomain: fc.option(fc.constantFrom('cluster.local', 'corp.example', 'k8s'), { nil: undefined }),
    membership: fc.option(
      fc.record({
        peers: fc.constantFrom('Running' as const, 'Ready' as const),
        terminating: fc.constantFrom('Keep' as const, 'Drop' as const),
      }),
      { nil: undefined },
    ),
  })
  .map((s) => {
    const out: ResolveSettings = { ...DEFAULT_NAMING_SETTINGS };
    if (s.basename !== undefined) out.basename = s.basename;
    if (s.hostFallback !== undefined) out.hostFallback = s.hostFallback;
    if (s.clusterDomain !== undefined) out.clusterDomain = s.clusterDomain;
    if (s.membership !== undefined) out.membership = s.membership;
    return out;
  });

const podArb = fc
  .record({
    name: fc.constantFrom('web-0', 'web-1', 'db-0', 'db-1', 'a', 'web.0', ''),
    uid: fc.constantFrom('u1', 'u2', 'u3', 'u4'),
    namespace: fc.constantFrom('netzlive', 'app', ''),
    ip: fc.constantFrom('10.0.0.1', '10.0.0.2', 'fd00::1', '::1', '', 'not-an-ip'),
    phase: fc.constantFrom('Running', 'Pending', 'Succeeded', 'Unknown'),
    deleting: fc.boolean(),
    ready: fc.constantFrom('True', 'False', 'Unknown', undefined),
    hostname: fc.option(fc.constantFrom('db-0', 'h', 'bad_host'), { nil: undefined }),
    subdomain: fc.option(fc.constantFrom('db', 'web', 'Bad..x'), { nil: undefined }),
    host: fc.option(fc.constantFrom(SEED_HOST_EXPRESSION, '$.nothing', '$['), { nil: undefined }),
    nodename: fc.option(fc.constantFrom('$.metadata.name', '$.metadata.labels.app'), { nil: undefined }),
    dns: fc.constantFrom('a.example', 'bad value'),
  })
  .map((s) => {
    const annotations: Record<string, string> = {};
    if (s.host !== undefined) annotations[HOST] = s.host;
    if (s.nodename !== undefined) annotations[NAME] = s.nodename;
    const p = pod({
      name: s.name,
      uid: s.uid,
      ip: s.ip,
      phase: s.phase,
      deleting: s.deleting,
      annotations,
      env: { EXTERNAL_DNS: s.dns },
    });
    const metadata = p['metadata'] as Record<string, unknown>;
    if (s.namespace === '') delete metadata['namespace'];
    else metadata['namespace'] = s.namespace;
    (metadata['labels'] as Record<string, string>)['app'] = 'web';
    const spec = p['spec'] as Record<string, unknown>;
    if (s.hostname !== undefined) spec['hostname'] = s.hostname;
    if (s.subdomain !== undefined) spec['subdomain'] = s.subdomain;
    if (s.ready !== undefined)
      (p['status'] as Record<string, unknown>)['conditions'] = [{ type: 'Ready', status: s.ready }];
    return p;
  });

const podList = fc.array(podArb, { maxLength: 10 });

// Oracles read from the pod JSON here, not through the engine's reader.
const uidOf = (p: Record<string, unknown>) => (p['metadata'] as { uid: string }).uid;
const nameOf = (p: Record<string, unknown>) => (p['metadata'] as { name: string }).name;
const readyConditionOf = (p: Record<string, unknown>) =>
  ((p['status'] as { conditions?: { type: string; status: string }[] }).conditions ?? []).some(
    (c) => c.type === 'Ready' && c.status === 'True',
  );
const deletingOf = (p: Record<string, unknown>) =>
  (p['metadata'] as { deletionTimestamp?: string }).deletionTimestamp !== undefined;
const sorted = (xs: string[]) => [...xs].sort();

describe('naming modes and membership policies: properties', () => {
  it('in every mode, each pod comes out exactly once: a peer or excluded with one known reason', () => {
    fc.assert(
      fc.property(settingsArb, podList, (settings, pods) => {
        const r = resolvePeers(pods, settings);
        expect(r.peers.length + r.excluded.length).toBe(pods.length);
        expect(sorted([...r.peers.map((p) => p.pod), ...r.excluded.map((e) => e.pod)])).toEqual(
          sorted(pods.map(nameOf)),
        );
        for (const e of r.excluded) expect(EXCLUSION_REASONS).toContain(e.reason);
      }),
      { numRuns: 2000 },
    );
  });

  it('in every mode, peers have valid, unique node names of the form the mode says', () => {
    fc.assert(
      fc.property(settingsArb, podList, (settings, pods) => {
        const { peers } = resolvePeers(pods, settings);
        expect(new Set(peers.map((p) => p.nodeName)).size).toBe(peers.length);
        const domain = settings.clusterDomain ?? 'cluster.local';
        for (const p of peers) {
          expect(checkNodeName(p.nodeName)).toEqual({ ok: true });
          const [name, host] = [p.nodeName.split('@')[0]!, p.nodeName.slice(p.nodeName.indexOf('@') + 1)];
          if (p.nameSource === 'Basename') expect(name).toBe(settings.basename);
          if (p.nameSource === 'PodName') {
            expect(settings.basename).toBeUndefined();
            expect(name).toBe(p.pod);
          }
          if (p.hostSource !== 'Annotation') expect(p.hostSource).toBe(settings.hostFallback ?? 'PodIP');
          if (p.hostSource === 'PodIP') expect(host).toBe(p.podIP);
          if (p.hostSource === 'PodDNS')
            expect(host).toMatch(
              new RegExp(`^[0-9a-f-]+\\.[a-z]+\\.pod\\.${domain.replaceAll('.', '\\.')}$`),
            );
          if (p.hostSource === 'Hostname') expect(host.endsWith(`.svc.${domain}`)).toBe(true);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('member state is the EndpointSlice one: serving = Ready condition, ready = serving and not terminating', () => {
    fc.assert(
      fc.property(settingsArb, podList, (settings, pods) => {
        const byUid = new Map<string, Record<string, unknown>[]>();
        for (const p of pods) byUid.set(uidOf(p), [...(byUid.get(uidOf(p)) ?? []), p]);
        for (const peer of resolvePeers(pods, settings).peers) {
          // Pods sharing a uid are told apart by name and state; any of them matches.
          const candidates = (byUid.get(peer.uid) ?? []).filter((p) => nameOf(p) === peer.pod);
          expect(
            candidates.some(
              (p) =>
                peer.serving === readyConditionOf(p) &&
                peer.terminating === deletingOf(p) &&
                peer.ready === (readyConditionOf(p) && !deletingOf(p)),
            ),
          ).toBe(true);
        }
      }),
      { numRuns: 1500 },
    );
  });

  it('the policy holds: Ready admits only serving peers, Drop admits no terminating peer; each policy exclusion is true of its pod', () => {
    fc.assert(
      fc.property(settingsArb, podList, (settings, pods) => {
        const r = resolvePeers(pods, settings);
        const m = settings.membership ?? { peers: 'Running', terminating: 'Keep' };
        for (const p of r.peers) {
          if (m.peers === 'Ready') expect(p.serving).toBe(true);
          if (m.terminating === 'Drop') expect(p.terminating).toBe(false);
        }
        const named = (n: string) => pods.filter((p) => nameOf(p) === n);
        for (const e of r.excluded) {
          if (e.reason === 'PodNotReady') {
            expect(m.peers).toBe('Ready');
            expect(named(e.pod).some((p) => !readyConditionOf(p))).toBe(true);
          }
          if (e.reason === 'PodTerminating') {
            expect(m.terminating).toBe('Drop');
            expect(named(e.pod).some(deletingOf)).toBe(true);
          }
          if (e.reason === 'NoSubdomain') expect(settings.hostFallback).toBe('Hostname');
          if (e.reason === 'NoNamespace') expect(['PodDNS', 'Hostname']).toContain(settings.hostFallback);
        }
      }),
      { numRuns: 1500 },
    );
  });

  it('Running and Keep spelled out are the default; the result does not depend on input order', () => {
    const withOrder = fc
      .tuple(settingsArb, podList)
      .chain(([settings, pods]) =>
        fc.tuple(
          fc.constant(settings),
          fc.constant(pods),
          fc.shuffledSubarray(pods, { minLength: pods.length, maxLength: pods.length }),
        ),
      );
    fc.assert(
      fc.property(withOrder, ([settings, pods, permuted]) => {
        expect(resolvePeers(permuted, settings)).toEqual(resolvePeers(pods, settings));
        const { membership: _m, ...naming } = settings;
        expect(
          resolvePeers(pods, { ...naming, membership: { peers: 'Running', terminating: 'Keep' } }),
        ).toEqual(resolvePeers(pods, naming));
      }),
      { numRuns: 1000 },
    );
  });
});
