import { describe, expect, it } from '@jest/globals';
import { summarizePod } from '../../../operator/controller/pod-summary.js';
import { DEFAULT_NAMING_SETTINGS } from '../../../operator/naming/index.js';
import { fullPod as full } from './pod-fixture.js';

describe('summarizePod: what the operator keeps of a pod', () => {
  it('keeps the key, the resourceVersion, the naming verdict, readiness and the labels (declared voters) — nothing else of the pod', () => {
    const s = summarizePod(full, DEFAULT_NAMING_SETTINGS);
    expect(Object.keys(s).sort()).toEqual(['labels', 'metadata', 'ready', 'verdict']);
    expect(s.labels).toEqual({ app: 'web' });
    expect(
      summarizePod(
        { ...full, metadata: { ...full.metadata, annotations: { 'netzlive/votes': '2' } } },
        DEFAULT_NAMING_SETTINGS,
      ).votes,
    ).toBe('2');
    expect(s.metadata).toEqual({ name: 'web-0', namespace: 'app', resourceVersion: '12' });
    expect(s.ready).toBe(false);
    expect(s.verdict).toEqual({
      ok: true,
      peer: {
        nodeName: 'web-0@web',
        pod: 'web-0',
        uid: 'u0',
        podIP: '10.0.0.1',
        node: 'n1',
        hostSource: 'Annotation',
        nameSource: 'PodName',
        terminating: false,
        ready: false,
        serving: false,
      },
    });
  });

  it('judges with the naming settings it is given (a change of them needs new summaries)', () => {
    const s = summarizePod(full, { hostnameAnnotation: 'other/host', nodenameAnnotation: 'other/name' });
    expect(s.verdict).toMatchObject({ ok: true, peer: { nodeName: 'web-0@10.0.0.1', hostSource: 'PodIP' } });
  });
});
