import { describe, expect, it } from '@jest/globals';
import {
  BENCH_SELECTOR,
  ipFor,
  NODE_COUNT,
  nodeManifest,
  nodeName,
  podManifest,
  podName,
  podStatus,
} from '../../../bench/pods.js';
import { isValidNodeName } from '../../../operator/naming/node-name.js';

describe('podName', () => {
  it('looks like a Deployment pod and is distinct for 10,000 pods', () => {
    expect(podName(0)).toMatch(/^web-7d9f8c6b5-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    const names = new Set(Array.from({ length: 10_000 }, (_, i) => podName(i)));
    expect(names.size).toBe(10_000);
  });
  it('refuses indices it cannot keep distinct', () => {
    expect(() => podName(-1)).toThrow(RangeError);
    expect(() => podName(27 ** 5)).toThrow(RangeError);
  });
});

describe('ipFor', () => {
  it('gives distinct IPv4 addresses in 10.64.0.0/10', () => {
    expect(ipFor(0)).toBe('10.64.0.0');
    expect(ipFor(1)).toBe('10.64.0.1');
    expect(ipFor(256)).toBe('10.64.1.0');
    expect(ipFor((1 << 22) - 1)).toBe('10.127.255.255');
    const ips = new Set(Array.from({ length: 20_000 }, (_, k) => ipFor(k * 197)));
    expect(ips.size).toBe(20_000);
  });
  it('refuses indices outside the block', () => {
    expect(() => ipFor(1 << 22)).toThrow(RangeError);
  });
});

describe('manifests', () => {
  it('selects the bench pods and spreads them over the Nodes', () => {
    const p = podManifest(61, 'bench') as {
      metadata: { labels: Record<string, string> };
      spec: { nodeName: string };
    };
    const [k, v] = BENCH_SELECTOR.split('=');
    expect(p.metadata.labels[k!]).toBe(v);
    expect(p.spec.nodeName).toBe(nodeName(61 % NODE_COUNT));
    const n = nodeManifest(4) as { metadata: { labels: Record<string, string> } };
    expect(n.metadata.labels['topology.kubernetes.io/zone']).toBe('eu-central-1b');
  });

  it('makes a running, ready pod whose fallback node name is valid', () => {
    const s = (podStatus(3, ipFor(4), '2026-01-01T00:00:00Z') as { status: Record<string, unknown> }).status;
    expect(s.phase).toBe('Running');
    expect(s.podIP).toBe('10.64.0.4');
    expect(s.conditions).toContainEqual({
      type: 'Ready',
      status: 'True',
      lastTransitionTime: '2026-01-01T00:00:00Z',
    });
    expect(isValidNodeName(`${podName(3)}@${ipFor(4)}`)).toBe(true);
  });
});
