import { ApiError, type Kube } from '../kube/client.js';
import { leasesPath, topologyPath } from '../kube/paths.js';
import { leaseNameFor, type LeaseRead, type LeaseView, type TopologyObject } from './read.js';

/**
 * The reader's side of the status protocol for a reader that looks once (the CLI): one GET of the
 * ClusterTopology, one of its liveness Lease — the same objects, paths and meanings as the
 * subscription (`subscription.ts`) that a reader which stays follows. What they mean is `read.ts`.
 */

export type TopologyGet =
  | { kind: 'found'; object: TopologyObject }
  /** 404: the object does not exist, or (`noResource`) the API does not serve the resource at all. */
  | { kind: 'missing'; noResource: boolean }
  /** Any other failure: the client's ApiError or TransportError, for the caller to describe. */
  | { kind: 'failed'; error: unknown };

export async function getTopology(kube: Kube, namespace: string, name: string): Promise<TopologyGet> {
  try {
    return {
      kind: 'found',
      object: await kube.request<TopologyObject>('GET', topologyPath(namespace, name)),
    };
  } catch (e) {
    if (e instanceof ApiError && e.code === 404)
      // A missing object names itself in the message; a missing resource type does not.
      return {
        kind: 'missing',
        noResource:
          !e.message.includes('not found') || e.message.includes('could not find the requested resource'),
      };
    return { kind: 'failed', error: e };
  }
}

/** The topology's liveness Lease: found, missing (404), or unreadable (any other failure). */
export async function getLease(kube: Kube, namespace: string, topology: string): Promise<LeaseRead> {
  try {
    const lease = await kube.request<LeaseView>('GET', leasesPath(namespace, leaseNameFor(topology)));
    return { kind: 'found', lease };
  } catch (e) {
    if (e instanceof ApiError && e.code === 404) return { kind: 'missing' };
    return {
      kind: 'unreadable',
      message: e instanceof ApiError ? `${e.code} ${e.reason}` : (e as Error).message,
    };
  }
}
