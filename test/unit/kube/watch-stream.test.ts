import { expect, it } from '@jest/globals';
import type { KubeObject } from '../../../operator/kube/client.js';
import { podsPath } from '../../../operator/kube/paths.js';
import { FakeApiServer } from '../../support/fake-api-server.js';
import { waitFor } from '../../support/wait.js';

const PODS = podsPath('ns');
const pod = (name: string, annotations: Record<string, string> = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'ns', annotations },
});

it('a watch reads every event whole: one of 1 MB across many chunks, small ones before and after it', async () => {
  const api = await FakeApiServer.start();
  try {
    const blob = 'x'.repeat(1_000_000);
    for (const p of [pod('a'), pod('big', { blob }), pod('b'), pod('c')]) api.put(PODS, p);
    const seen: KubeObject[] = [];
    const handle = await api.kube().watch(
      PODS,
      { resourceVersion: '0' },
      (_type, o) => seen.push(o),
      () => {},
      60_000,
    );
    try {
      await waitFor('four events', async () => seen.length >= 4, 20_000);
    } finally {
      handle.abort();
    }
    expect(seen.map((o) => o.metadata.name)).toEqual(['a', 'big', 'b', 'c']);
    expect(seen[1]!.metadata.annotations).toEqual({ blob });
  } finally {
    await api.close();
  }
});
