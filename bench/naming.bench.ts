/**
 * Naming engine throughput, single thread (= per core): resolvePeers over 10,000 pods
 *  - whose hostname annotation is the seed's EXTERNAL_DNS expression (a distinct DNS name per
 *    pod, so every pod is evaluated and becomes a peer), goal ≥ 20,000 pods/s;
 *  - without annotations (pod IP and pod name fallbacks), goal ≥ 200,000 pods/s;
 *  - without annotations in each other naming mode and membership policy — basename, PodDNS,
 *    Hostname (StatefulSet pods), peers Ready, terminating Drop — goal ≥ 200,000 pods/s each.
 * One warm-up run, then REPETITIONS timed runs; each sample is pods per second of one run.
 */
import { pathToFileURL } from 'node:url';
import { formatFigure, type Figure } from './figure.js';
import {
  DEFAULT_HOSTNAME_ANNOTATION,
  DEFAULT_NAMING_SETTINGS,
  resolvePeers,
  type ResolveSettings,
} from '../operator/naming/index.js';

const PODS = 10_000;
const REPETITIONS = 7;
const SEED_EXPRESSION = "$.spec.containers[?(@.name >= '0')].env[?(@.name == 'EXTERNAL_DNS')].value";

function ip(i: number): string {
  return `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
}

function pod(i: number, annotated: boolean): object {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: `web-${i}`,
      namespace: 'netzlive',
      uid: `00000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`,
      labels: { 'netzlive/pod-type': 'cluster-service' },
      ...(annotated ? { annotations: { [DEFAULT_HOSTNAME_ANNOTATION]: SEED_EXPRESSION } } : {}),
    },
    spec: {
      nodeName: `node-${i % 50}`,
      hostname: `web-${i}`,
      subdomain: 'web',
      containers: [
        {
          name: 'app',
          image: 'registry.example/web:1.0.0',
          env: [
            { name: 'MIX_ENV', value: 'prod' },
            { name: 'EXTERNAL_DNS', value: `web-${i}.netzlive.svc.cluster.local` },
            { name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
          ],
        },
      ],
    },
    status: {
      phase: 'Running',
      podIP: ip(i),
      conditions: [
        { type: 'Initialized', status: 'True' },
        { type: 'Ready', status: 'True' },
        { type: 'ContainersReady', status: 'True' },
        { type: 'PodScheduled', status: 'True' },
      ],
    },
  };
}

function measure(
  name: string,
  pods: readonly object[],
  goal: number,
  note: string,
  settings: ResolveSettings = DEFAULT_NAMING_SETTINGS,
): Figure {
  const check = resolvePeers(pods, settings);
  if (check.peers.length !== pods.length)
    throw new Error(`${name}: expected ${pods.length} peers, got ${check.peers.length}`);
  const samples: number[] = [];
  for (let r = 0; r < REPETITIONS; r++) {
    const start = process.hrtime.bigint();
    resolvePeers(pods, settings);
    const seconds = Number(process.hrtime.bigint() - start) / 1e9;
    samples.push(pods.length / seconds);
  }
  return { name, unit: 'pods/s', samples, goal: { op: '>=', value: goal }, note };
}

const MODES: [string, Partial<ResolveSettings>][] = [
  ['basename', { basename: 'app' }],
  ['basename + PodDNS', { basename: 'app', hostFallback: 'PodDNS' }],
  ['basename + Hostname', { basename: 'app', hostFallback: 'Hostname' }],
  ['membership Ready + Drop', { membership: { peers: 'Ready', terminating: 'Drop' } }],
];

export default async function run(): Promise<Figure[]> {
  const annotated = Array.from({ length: PODS }, (_, i) => pod(i, true));
  const plain = Array.from({ length: PODS }, (_, i) => pod(i, false));
  return [
    measure(
      'naming: resolvePeers, seed EXTERNAL_DNS JSONPath',
      annotated,
      20_000,
      `${PODS} pods, distinct EXTERNAL_DNS each, single thread`,
    ),
    measure(
      'naming: resolvePeers, fallbacks only',
      plain,
      200_000,
      `${PODS} annotation-less pods, single thread`,
    ),
    ...MODES.map(([label, settings]) =>
      measure(
        `naming: resolvePeers, ${label}`,
        plain,
        200_000,
        `${PODS} annotation-less pods, single thread`,
        {
          ...DEFAULT_NAMING_SETTINGS,
          ...settings,
        },
      ),
    ),
  ];
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  for (const figure of await run()) console.log(formatFigure(figure));
}
