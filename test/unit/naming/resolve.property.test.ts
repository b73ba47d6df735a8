import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import {
  checkNodeName,
  EXCLUSION_REASONS,
  resolvePeers,
  type ResolveResult,
} from '../../../operator/naming/index.js';
import { HOST, NAME, pod, SEED_HOST_EXPRESSION } from './fixtures.js';

// Pods drawn from small pools, so that shared names, shared IPs, shared DNS names, duplicates,
// terminating pods and every exclusion reason all turn up often.
const hostExpressions = [
  SEED_HOST_EXPRESSION,
  '$.metadata.labels.dns',
  '$.spec.containers[*].name',
  '$.spec.containers[0].env[0]',
  '$.a[?(@.hook())]',
  '$.nothing',
  '$.spec.containers[0].env[?(@.name == "EXTERNAL_DNS")].value',
  '',
];
const nameExpressions = ['$.metadata.labels.app', '$.metadata.name', '$.metadata.labels.missing', '$[(@.x)]'];

const realisticPod = fc
  .record({
    name: fc.constantFrom('web-0', 'web-1', 'web-2', 'B', 'a', 'web.0', ''),
    uid: fc.option(fc.constantFrom('u1', 'u2', 'u3'), { nil: undefined }),
    ip: fc.constantFrom('10.0.0.1', '10.0.0.2', 'fd00::1', '', 'not-an-ip'),
    phase: fc.constantFrom('Running', 'Pending', 'Succeeded', 'Failed', 'Unknown'),
    deleting: fc.boolean(),
    host: fc.option(fc.constantFrom(...hostExpressions), { nil: undefined }),
    nodename: fc.option(fc.constantFrom(...nameExpressions), { nil: undefined }),
    dns: fc.constantFrom('a.example', 'b.example', '', 'bad value', 'fd00::9', '$(id)'),
    app: fc.constantFrom('web', 'web-x', 'we b'),
    noAnnotations: fc.boolean(),
  })
  .map((s) => {
    const annotations: Record<string, string> = {};
    if (s.host !== undefined) annotations[HOST] = s.host;
    if (s.nodename !== undefined) annotations[NAME] = s.nodename;
    const p = pod({
      name: s.name,
      ip: s.ip,
      phase: s.phase,
      deleting: s.deleting,
      env: { EXTERNAL_DNS: s.dns },
      ...(s.noAnnotations ? {} : { annotations }),
    });
    const metadata = p['metadata'] as Record<string, unknown>;
    if (s.uid === undefined) delete metadata['uid'];
    else metadata['uid'] = s.uid;
    (metadata['labels'] as Record<string, string>)['app'] = s.app;
    (metadata['labels'] as Record<string, string>)['dns'] = s.dns;
    return p as unknown;
  });

// And some input that is not shaped like a pod at all.
const anyPod = fc.oneof({ weight: 6, arbitrary: realisticPod }, { weight: 1, arbitrary: fc.anything() });
const podList = fc.array(anyPod, { maxLength: 12 });

function nameOf(p: unknown): string {
  const m = (p as { metadata?: { name?: unknown } } | null)?.metadata;
  return typeof m === 'object' && m !== null && typeof m.name === 'string' && Object.hasOwn(m, 'name')
    ? m.name
    : '';
}

function sorted(xs: string[]): string[] {
  return [...xs].sort();
}

function outputNames(r: ResolveResult): string[] {
  return [...r.peers.map((p) => p.pod), ...r.excluded.map((e) => e.pod)];
}

describe('resolvePeers properties', () => {
  it('every input pod comes out exactly once, as a peer or excluded', () => {
    fc.assert(
      fc.property(podList, (pods) => {
        const r = resolvePeers(pods);
        expect(r.peers.length + r.excluded.length).toBe(pods.length);
        expect(sorted(outputNames(r))).toEqual(sorted(pods.map(nameOf)));
      }),
      { numRuns: 1500 },
    );
  });

  it('with distinct pod names, each name appears once in the output', () => {
    const unique = fc
      .uniqueArray(realisticPod, { selector: nameOf, maxLength: 7 })
      .filter((ps) => ps.every((p) => nameOf(p) !== ''));
    fc.assert(
      fc.property(unique, (pods) => {
        const names = outputNames(resolvePeers(pods));
        expect(new Set(names).size).toBe(names.length);
        expect(sorted(names)).toEqual(sorted(pods.map(nameOf)));
      }),
      { numRuns: 800 },
    );
  });

  it('no two peers share a node name, and every node name is valid', () => {
    fc.assert(
      fc.property(podList, (pods) => {
        const { peers } = resolvePeers(pods);
        expect(new Set(peers.map((p) => p.nodeName)).size).toBe(peers.length);
        for (const p of peers) {
          expect(checkNodeName(p.nodeName)).toEqual({ ok: true });
          expect(p.podIP).not.toBe('');
        }
      }),
      { numRuns: 1500 },
    );
  });

  it('the result does not depend on the order of the input', () => {
    const listAndPermutation = podList.chain((pods) =>
      fc.tuple(
        fc.constant(pods),
        fc.shuffledSubarray(pods, { minLength: pods.length, maxLength: pods.length }),
      ),
    );
    fc.assert(
      fc.property(listAndPermutation, ([pods, permuted]) => {
        expect(resolvePeers(permuted)).toEqual(resolvePeers(pods));
      }),
      { numRuns: 1500 },
    );
  });

  it('output is sorted, reasons are known, messages are single lines', () => {
    fc.assert(
      fc.property(podList, (pods) => {
        const r = resolvePeers(pods);
        const nodeNames = r.peers.map((p) => p.nodeName);
        expect(nodeNames).toEqual([...nodeNames].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
        const pods_ = r.excluded.map((e) => e.pod);
        expect(pods_).toEqual([...pods_].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
        for (const e of r.excluded) {
          expect(EXCLUSION_REASONS).toContain(e.reason);
          // eslint-disable-next-line no-control-regex -- control characters are what it looks for
          expect(e.message).not.toMatch(/[\u0000-\u001f]/);
          expect(e.message.length).toBeGreaterThan(0);
        }
      }),
      { numRuns: 1000 },
    );
  });

  it('a node name goes to a pod that shares it only when all the others are terminating', () => {
    // Pods that collide often: the name part from a label with two values, two pod IPs.
    const colliding = fc
      .record({
        name: fc.constantFrom(...Array.from({ length: 10 }, (_, k) => `web-${k}`)),
        app: fc.constantFrom('web', 'api'),
        ip: fc.constantFrom('10.0.0.1', '10.0.0.2'),
        deleting: fc.boolean(),
      })
      .map((s) => {
        const p = pod({
          name: s.name,
          ip: s.ip,
          deleting: s.deleting,
          annotations: { [NAME]: '$.metadata.labels.app' },
        });
        (p['metadata'] as { labels: Record<string, string> }).labels['app'] = s.app;
        return p as unknown;
      });
    const unique = fc.uniqueArray(colliding, { selector: nameOf, maxLength: 10 });
    const terminating = (p: unknown) =>
      Boolean((p as { metadata: { deletionTimestamp?: string } }).metadata.deletionTimestamp);
    fc.assert(
      fc.property(unique, (pods) => {
        const r = resolvePeers(pods);
        const byName = new Map(pods.map((p) => [nameOf(p), p]));
        for (const e of r.excluded.filter((x) => x.reason === 'DuplicateNodeName')) {
          const holder = /is held by pod "([^"]*)"/.exec(e.message);
          if (!holder) continue;
          expect(terminating(byName.get(e.pod))).toBe(true);
          expect(r.peers.some((p) => p.pod === holder[1] && !p.terminating)).toBe(true);
        }
        // A group excluded as a whole never has exactly one pod that is not terminating.
        const shared = new Map<string, string[]>();
        for (const e of r.excluded) {
          const m = /^node name ("[^"]*") is shared by/.exec(e.message);
          if (m) shared.set(m[1]!, [...(shared.get(m[1]!) ?? []), e.pod]);
        }
        for (const members of shared.values()) {
          expect(members.length).toBeGreaterThan(1);
          expect(members.filter((n) => !terminating(byName.get(n))).length).not.toBe(1);
        }
      }),
      { numRuns: 1500 },
    );
  });
});
