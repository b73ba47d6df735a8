import { GROUP, KIND, PLURAL, VERSION } from '../api/schema.js';
import { leaseNameFor, type LeaseRead, type LeaseView } from '../protocol/read.js';
import type { ClusterTopologySpec, ClusterTopologyStatus } from '../api/types.generated.js';
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

export interface TopologyObject {
  metadata: { name: string; namespace?: string; generation?: number };
  spec?: ClusterTopologySpec;
  status?: ClusterTopologyStatus;
}

export type TopologyLookup = { found: true; topology: TopologyObject } | { found: false; message: string };

const seg = encodeURIComponent;

export function topologyPath(namespace: string, name: string): string {
  return `/apis/${GROUP}/${VERSION}/namespaces/${seg(namespace)}/${PLURAL}/${seg(name)}`;
}

export function podPath(namespace: string, name?: string): string {
  return `/api/v1/namespaces/${seg(namespace)}/pods${name === undefined ? '' : `/${seg(name)}`}`;
}

/** The ClusterTopology, or why there is none; any other failure throws a ClusterReadError. */
export async function getTopology(kube: Kube, namespace: string, name: string): Promise<TopologyLookup> {
  try {
    return {
      found: true,
      topology: await kube.request<TopologyObject>('GET', topologyPath(namespace, name)),
    };
  } catch (e) {
    if (e instanceof ApiError && e.code === 404) {
      // A missing object names itself in the message; a missing resource type does not.
      const crdMissing =
        !e.message.includes('not found') || e.message.includes('could not find the requested resource');
      return {
        found: false,
        message: crdMissing
          ? `the ${KIND} API is not served by ${kube.server} (is the CRD ${PLURAL}.${GROUP} installed?)`
          : `${KIND} ${namespace}/${name} not found`,
      };
    }
    throw new ClusterReadError(describeFailure(e, `${KIND} ${namespace}/${name}`, kube));
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

/**
 * The topology's liveness Lease as the status protocol's reader takes it (docs/status-protocol.md):
 * found, missing (404), or unreadable (any other failure — the CLI says so and carries on).
 */
export async function getLiveness(kube: Kube, namespace: string, name: string): Promise<LeaseRead> {
  try {
    const lease = await kube.request<LeaseView>(
      'GET',
      `/apis/coordination.k8s.io/v1/namespaces/${seg(namespace)}/leases/${seg(leaseNameFor(name))}`,
    );
    return { kind: 'found', lease };
  } catch (e) {
    if (e instanceof ApiError && e.code === 404) return { kind: 'missing' };
    return {
      kind: 'unreadable',
      message: e instanceof ApiError ? `${e.code} ${e.reason}` : (e as Error).message,
    };
  }
}
