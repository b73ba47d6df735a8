/**
 * Where a large status write's time goes on the API server: one topology object of `peers`
 * peers (no operator running), each write changing one peer's IP, sent several ways — the former
 * (every peer field, a merge patch, which replaces the whole peer list, and the whole object sent
 * back), today's (the reader fields only above 1,000 peers, their flags against peerDefaults, a
 * JSON Patch of the one peer, the metadata sent back) and the steps between. The API server's own mean
 * duration of each (`apiserver_request_duration_seconds`, clustertopologies/status PATCH), the
 * request and answer sizes, and the object's size.
 */
import { performance } from 'node:perf_hooks';
import type { BenchCluster } from './bench-cluster.js';
import { CT_GROUP_PATH } from './bench-cluster.js';
import { meanBetween } from './api-cost.js';
import { ipFor, podName, nodeName, NODE_COUNT } from './pods.js';
import { PEER_DEFAULTS } from '../operator/protocol/publish.js';

export interface WriteVariant {
  name: string;
  /** Peers in the object (default: the size measured). */
  peers?: number;
  light: boolean;
  /** Light peers' flags only where they differ from status.peerDefaults (today's above 1,000 peers). */
  defaults?: boolean;
  patch: 'merge' | 'json';
  /** Ask for the metadata only in the answer. */
  metadataAnswer: boolean;
}

export const WRITE_VARIANTS: WriteVariant[] = [
  {
    name: 'before: every peer field, merge patch, whole object back',
    light: false,
    patch: 'merge',
    metadataAnswer: false,
  },
  {
    name: 'every peer field, JSON Patch of the one peer, metadata back',
    light: false,
    patch: 'json',
    metadataAnswer: true,
  },
  {
    name: 'reader fields only, merge patch, metadata back',
    light: true,
    patch: 'merge',
    metadataAnswer: true,
  },
  {
    name: 'reader fields only, every flag, JSON Patch of the one peer, metadata back',
    light: true,
    patch: 'json',
    metadataAnswer: true,
  },
  {
    name: 'now: reader fields only, flags against peerDefaults, JSON Patch of the one peer, metadata back',
    light: true,
    defaults: true,
    patch: 'json',
    metadataAnswer: true,
  },
  {
    // docs/design/peer-slices.md: what writing one slice of 100 peers would cost.
    name: 'a peer slice (design): 100 peers, reader fields only, JSON Patch of the one peer, metadata back',
    peers: 100,
    light: true,
    patch: 'json',
    metadataAnswer: true,
  },
];

export interface WriteCost {
  variant: WriteVariant;
  /** The API server's mean handling time, ms. */
  serverMs: number;
  /** Each write from sending to the answer read, ms. */
  wallMs: number[];
  requestBytes: number;
  answerBytes: number;
  objectBytes: number;
}

const METADATA_ONLY = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1';

function peer(i: number, ip: string, variant: WriteVariant) {
  const name = podName(i);
  return {
    nodeName: `${name}@${ip}`,
    pod: name,
    uid: `0f3c1b6e-1a7d-4e5f-8a9b-${String(i).padStart(12, '0')}`,
    ...(variant.light
      ? {}
      : { podIP: ip, node: nodeName(i % NODE_COUNT), hostSource: 'PodIP', nameSource: 'PodName' }),
    // Every pod here is ready and not terminating: against peerDefaults, no flag is written.
    ...(variant.defaults ? {} : { terminating: false, ready: true, serving: true }),
  };
}

/** Writes `writes` single-peer changes per variant, the variants interleaved round by round. */
export async function measureWriteCost(
  c: BenchCluster,
  peers: number,
  writes: number,
  log: (l: string) => void,
): Promise<WriteCost[]> {
  const base = `${CT_GROUP_PATH}/namespaces/${c.namespace}/clustertopologies`;
  const state = WRITE_VARIANTS.map((variant, v) => ({
    variant,
    name: `write-cost-${v}`,
    size: variant.peers ?? peers,
    peers: Array.from({ length: variant.peers ?? peers }, (_, i) => peer(i, ipFor(i + 1), variant)).sort(
      (a, b) => (a.nodeName < b.nodeName ? -1 : 1),
    ),
    serverMs: 0,
    count: 0,
    wallMs: [] as number[],
    requestBytes: 0,
    answerBytes: 0,
  }));
  for (const s of state) {
    await c.kube.request('POST', base, {
      body: {
        apiVersion: 'cluster.netzlive.io/v1alpha1',
        kind: 'ClusterTopology',
        metadata: { name: s.name, namespace: c.namespace },
        spec: { selector: 'bench/write-cost=none', pollingInterval: '10m' },
      },
    });
    await c.kube.request('PATCH', `${base}/${s.name}/status`, {
      body: {
        status: {
          peerCount: s.size,
          peers: s.peers,
          ...(s.variant.defaults ? { peerDefaults: PEER_DEFAULTS } : {}),
        },
      },
      contentType: 'application/merge-patch+json',
      ignoreBody: true,
    });
  }
  log(`status write cost: ${state.length} variants × ${writes} writes at ${peers} peers`);
  for (let w = 0; w < writes; w++)
    for (const s of state) {
      const i = (w * 7919 + 11) % s.size;
      const old = s.peers[i]!;
      const ip = ipFor((1 << 21) + 100_000 + w);
      const moved = { ...old, nodeName: `${old.pod}@${ip}`, ...(s.variant.light ? {} : { podIP: ip }) };
      const next = [...s.peers.slice(0, i), ...s.peers.slice(i + 1)];
      let j = next.findIndex((p) => p.nodeName > moved.nodeName);
      if (j < 0) j = next.length;
      next.splice(j, 0, moved);
      const body =
        s.variant.patch === 'merge'
          ? { status: { peers: next } }
          : [
              { op: 'remove', path: `/status/peers/${i}` },
              { op: 'add', path: `/status/peers/${j}`, value: moved },
            ];
      const before = await c.metrics();
      const t0 = performance.now();
      const answer = await c.kube.request<unknown>('PATCH', `${base}/${s.name}/status`, {
        body,
        contentType:
          s.variant.patch === 'merge' ? 'application/merge-patch+json' : 'application/json-patch+json',
        ...(s.variant.metadataAnswer ? { accept: METADATA_ONLY } : {}),
      });
      s.wallMs.push(performance.now() - t0);
      const m = meanBetween(before, await c.metrics(), 'apiserver_request_duration_seconds', {
        resource: 'clustertopologies',
        subresource: 'status',
        verb: 'PATCH',
      });
      s.serverMs += m.mean * m.count * 1000;
      s.count += m.count;
      s.requestBytes += Buffer.byteLength(JSON.stringify(body));
      s.answerBytes += Buffer.byteLength(JSON.stringify(answer));
      s.peers = next;
    }
  const out: WriteCost[] = [];
  for (const s of state) {
    const obj = await c.kube.request('GET', `${base}/${s.name}`);
    out.push({
      variant: s.variant,
      serverMs: s.serverMs / s.count,
      wallMs: s.wallMs,
      requestBytes: s.requestBytes / writes,
      answerBytes: s.answerBytes / writes,
      objectBytes: Buffer.byteLength(JSON.stringify(obj)),
    });
    await c.kube.request('DELETE', `${base}/${s.name}`);
  }
  return out;
}
