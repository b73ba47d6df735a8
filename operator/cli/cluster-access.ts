import { GROUP, KIND, PLURAL } from '../api/schema.js';
import type { TopologyObject } from '../protocol/read.js';
import { getTopology as getTopologyObject } from '../protocol/get.js';
import { ApiError, connect, TransportError, type Kube } from '../kube/client.js';
import { UsageError } from './command.js';
import { stringFlag } from './args.js';

/**
 * How the read-only commands (analyze, explain) reach the cluster: the kubeconfig and namespace
 * chosen as kubectl chooses them (--kubeconfig, else $KUBECONFIG, ~/.kube/config or the pod's
 * service account; -n, else the current context's namespace), and API failures turned into one
 * sentence that says what could not be read and why. They only ever GET and LIST.
 */

export interface Cluster {
  kube: Kube;
  namespace: string;
}

/**
 * Thrown when the cluster cannot be read — no usable kubeconfig from the default lookup, or the API
 * server refused or did not answer: not the user's command line (64), not a verdict (exit 69).
 */
export class ClusterReadError extends Error {}

export function connectCluster(command: string, values: Record<string, unknown>): Cluster {
  const kubeconfig = stringFlag(command, values, 'kubeconfig');
  const namespace = stringFlag(command, values, 'namespace');
  let kube: Kube;
  try {
    kube = connect(kubeconfig === undefined ? {} : { kubeconfig });
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    const why = err.code === 'ENOENT' ? `${err.path ?? 'the file'}: no such file` : err.message;
    if (kubeconfig !== undefined)
      throw new UsageError(`${command}: cannot use --kubeconfig ${kubeconfig}: ${why}`);
    throw new ClusterReadError(`no usable kubeconfig ($KUBECONFIG, ~/.kube/config or in-cluster): ${why}`);
  }
  return { kube, namespace: namespace ?? kube.namespace };
}

export type TopologyLookup = { found: true; topology: TopologyObject } | { found: false; message: string };

/** The ClusterTopology, or why there is none; any other failure throws a ClusterReadError. */
export async function getTopology(kube: Kube, namespace: string, name: string): Promise<TopologyLookup> {
  const got = await getTopologyObject(kube, namespace, name);
  switch (got.kind) {
    case 'found':
      return { found: true, topology: got.object };
    case 'missing':
      return {
        found: false,
        message: got.noResource
          ? `the ${KIND} API is not served by ${kube.server} (is the CRD ${PLURAL}.${GROUP} installed?)`
          : `${KIND} ${namespace}/${name} not found`,
      };
    case 'failed':
      throw new ClusterReadError(describeFailure(got.error, `${KIND} ${namespace}/${name}`, kube));
  }
}

/** One sentence for a failed read of `what`. */
export function describeFailure(e: unknown, what: string, kube: Kube): string {
  if (e instanceof ApiError) {
    const hint =
      e.code === 401
        ? ' (the credentials in the kubeconfig were refused)'
        : e.code === 403
          ? ' (your user may not read it: ask for get on it, or use another --kubeconfig)'
          : '';
    return `cannot read ${what}: ${e.code} ${e.reason}: ${e.message}${hint}`;
  }
  if (e instanceof TransportError)
    return `cannot reach the API server at ${kube.server} to read ${what}: ${e.message}`;
  return `cannot read ${what}: ${(e as Error).message}`;
}
