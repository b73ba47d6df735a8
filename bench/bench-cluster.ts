/**
 * A throwaway control plane for the operator benchmark: its own temp state directory, the CRD,
 * a namespace, Nodes, and pods grown in place through the raw client with bounded concurrency.
 * Stopping it (registered as a cleanup step) stops etcd and kube-apiserver and removes the
 * directory.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { request as httpsRequest, Agent } from 'node:https';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  apiserverMetrics,
  startControlPlane,
  stopControlPlane,
  type ControlPlaneState,
} from '../dev/cluster/control-plane.js';
import { connect, ApiError, type Kube } from '../operator/kube/client.js';
import { onCleanup } from './cleanup.js';
import { startOperator, type CtopoProcess } from '../test/support/operator-process.js';
import { mapLimit } from './concurrency.js';
import { ipFor, NODE_COUNT, nodeManifest, podManifest, podName, podStatus } from './pods.js';
import { parsePrometheusText, type Sample } from './prometheus.js';
import { parse as parseYaml } from 'yaml';
import { differences } from './json-diff.js';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const CRD_FILE = join(repoRoot, 'crds', 'clustertopologies.cluster.netzlive.io.yaml');
export const CT_GROUP_PATH = '/apis/cluster.netzlive.io/v1alpha1';

export interface BenchCluster {
  state: ControlPlaneState;
  kube: Kube;
  namespace: string;
  /**
   * Where kubectl reads the CRD file differently from a YAML 1.2 parser (kubectl's YAML 1.1
   * turns unquoted Yes/No into booleans): the paths that differ. Empty when they agree.
   */
  crdDrift: string[];
  /** Pods that exist now: indices 0 … podCount-1. */
  podCount: number;
  kubectl(args: string[], input?: string): Promise<string>;
  metrics(): Promise<Sample[]>;
  /** A GET that reads the body but never parses it; resolves with the byte count. */
  rawGet(path: string, agent: Agent): Promise<number>;
  adminAgent(maxSockets: number): Promise<Agent>;
  growPods(to: number, concurrency?: number, log?: (l: string) => void): Promise<void>;
  stop(): Promise<void>;
}

function run(bin: string, args: string[], input?: string): Promise<string> {
  return new Promise((ok, fail) => {
    const child = execFile(bin, args, { timeout: 120_000, maxBuffer: 64 << 20 }, (err, stdout, stderr) =>
      err
        ? fail(new Error(`${bin.split('/').pop()} ${args.join(' ')}: ${stderr || err.message}`))
        : ok(stdout),
    );
    if (input !== undefined) child.stdin!.end(input);
  });
}

export async function startBenchCluster(log: (l: string) => void): Promise<BenchCluster> {
  const dir = await mkdtemp(join(tmpdir(), 'ctopo-bench-'));
  const stop = onCleanup('control plane', async () => {
    await stopControlPlane(dir);
    if (!process.env.CTOPO_KEEP_BENCH_STATE) await rm(dir, { recursive: true, force: true });
  });
  let state: ControlPlaneState;
  try {
    state = await startControlPlane(dir, { log: (l) => log(`control plane: ${l}`) });
  } catch (e) {
    await stop();
    throw e;
  }
  const kube = connect({ kubeconfig: state.kubeconfig });
  const namespace = 'bench';
  const kubectl = (args: string[], input?: string) =>
    run(state.binaries.kubectl, ['--kubeconfig', state.kubeconfig, ...args], input);
  const [ca, cert, key] = await Promise.all([
    readFile(state.pki.caCert),
    readFile(join(state.pki.dir, 'admin.crt')),
    readFile(join(state.pki.dir, 'admin.key')),
  ]);

  // Apply the CRD as the YAML 1.2 parser reads it (sent as JSON), and record where kubectl's
  // own reading of the file differs — that difference is what `kubectl apply -f` would install.
  const asYaml12 = parseYaml(await readFile(CRD_FILE, 'utf8')) as unknown;
  const asKubectl = JSON.parse(
    await kubectl(['create', '--dry-run=client', '-o', 'json', '-f', CRD_FILE]),
  ) as unknown;
  const crdDrift = differences(asYaml12, asKubectl, '');
  if (crdDrift.length && process.env.BENCH_CRD_AS_KUBECTL_READS_IT)
    await kubectl(['apply', '--server-side', '-f', CRD_FILE]);
  else await kubectl(['apply', '--server-side', '-f', '-'], JSON.stringify(asYaml12));
  await kubectl([
    'wait',
    '--for=condition=Established',
    '--timeout=60s',
    'crd/clustertopologies.cluster.netzlive.io',
  ]);
  await kube.request('POST', '/api/v1/namespaces', {
    body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } },
  });
  await mapLimit(
    Array.from({ length: NODE_COUNT }, (_, j) => j),
    16,
    (j) => kube.request('POST', '/api/v1/nodes', { body: nodeManifest(j) }),
  );

  const cluster: BenchCluster = {
    state,
    kube,
    namespace,
    crdDrift,
    podCount: 0,
    kubectl,
    metrics: async () => parsePrometheusText(await apiserverMetrics(state)),
    adminAgent: async (maxSockets) => new Agent({ ca, cert, key, keepAlive: true, maxSockets }),
    rawGet: (path, agent) =>
      new Promise<number>((ok, fail) => {
        const req = httpsRequest(
          `${state.server}${path}`,
          { agent, headers: { Accept: 'application/json' }, timeout: 60_000 },
          (res) => {
            let bytes = 0;
            res.on('data', (c: Buffer) => (bytes += c.length));
            res.on('error', fail);
            res.on('end', () =>
              res.statusCode === 200 ? ok(bytes) : fail(new Error(`GET ${path}: ${res.statusCode}`)),
            );
          },
        );
        req.on('timeout', () => req.destroy(new Error(`GET ${path}: no answer within 60 s`)));
        req.on('error', fail);
        req.end();
      }),
    async growPods(to, concurrency = 24, progress) {
      const from = cluster.podCount;
      if (to <= from) return;
      const startedAt = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
      let done = 0;
      const t0 = Date.now();
      await mapLimit(
        Array.from({ length: to - from }, (_, k) => from + k),
        concurrency,
        async (i) => {
          const path = `/api/v1/namespaces/${namespace}/pods`;
          try {
            await kube.request('POST', path, { body: podManifest(i, namespace) });
          } catch (e) {
            if (!(e instanceof ApiError && e.code === 409)) throw e; // exists already: fine
          }
          await kube.request('PATCH', `${path}/${podName(i)}/status`, {
            body: podStatus(i, ipFor(i + 1), startedAt),
            contentType: 'application/merge-patch+json',
          });
          if (++done % 1000 === 0) progress?.(`pods: ${from + done}/${to}`);
        },
      );
      cluster.podCount = to;
      progress?.(`pods: ${to} (${to - from} created in ${((Date.now() - t0) / 1000).toFixed(1)} s)`);
    },
    stop,
  };
  return cluster;
}

/**
 * `ctopo operator` serving the benchmark's namespace without leader election (plus `args`),
 * stopped by the cleanups if the run ends first; resolves once it listens.
 */
export async function startBenchOperator(
  c: BenchCluster,
  args: string[] = [],
  env: NodeJS.ProcessEnv = {},
): Promise<{ op: CtopoProcess; stop: () => Promise<void> }> {
  return managedOperator(
    startOperator(c.state.kubeconfig, ['--namespaces', c.namespace, '--no-leader-elect', ...args], env),
  );
}

/** An operator process stopped by the cleanups if the run ends first; resolves once it listens. */
export async function managedOperator(
  op: CtopoProcess,
): Promise<{ op: CtopoProcess; stop: () => Promise<void> }> {
  const stop = onCleanup('operator process', async () => void (await op.stop()));
  try {
    await op.port();
  } catch (e) {
    await stop();
    throw e;
  }
  return { op, stop };
}
