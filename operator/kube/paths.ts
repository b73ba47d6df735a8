import { GROUP, PLURAL, VERSION } from '../api/schema.js';
import { MEMBER_PLURAL } from '../api/member-schema.js';

/**
 * Every API path this project asks for, built in one place: each name segment is escaped, so a
 * namespace or name can never reach into another path.
 */

const seg = encodeURIComponent;

/** ClusterTopology objects: one namespace's, every namespace's (no namespace), or one object. */
export function topologiesPath(namespace?: string): string {
  return namespace === undefined
    ? `/apis/${GROUP}/${VERSION}/${PLURAL}`
    : `/apis/${GROUP}/${VERSION}/namespaces/${seg(namespace)}/${PLURAL}`;
}

export function topologyPath(namespace: string, name: string): string {
  return `${topologiesPath(namespace)}/${seg(name)}`;
}

export function topologyStatusPath(namespace: string, name: string): string {
  return `${topologyPath(namespace, name)}/status`;
}

/** Every namespace's pods. */
export const ALL_PODS_PATH = '/api/v1/pods';

/** A namespace's pods, or one pod. */
export function podsPath(namespace: string, name?: string): string {
  const all = `/api/v1/namespaces/${seg(namespace)}/pods`;
  return name === undefined ? all : `${all}/${seg(name)}`;
}

export function podStatusPath(namespace: string, name: string): string {
  return `${podsPath(namespace, name)}/status`;
}

export const NODES_PATH = '/api/v1/nodes';
export const NAMESPACES_PATH = '/api/v1/namespaces';

export function eventsPath(namespace: string): string {
  return `/api/v1/namespaces/${seg(namespace)}/events`;
}

/** coordination.k8s.io/v1 Leases of a namespace, or one Lease. */
export function leasesPath(namespace: string, name?: string): string {
  const all = `/apis/coordination.k8s.io/v1/namespaces/${seg(namespace)}/leases`;
  return name === undefined ? all : `${all}/${seg(name)}`;
}

/** ClusterTopologyMember reports of every namespace. */
export const ALL_MEMBER_REPORTS_PATH = `/apis/${GROUP}/${VERSION}/${MEMBER_PLURAL}`;

/** ClusterTopologyMember reports of a namespace, or one report. */
export function memberReportsPath(namespace: string, name?: string): string {
  const all = `/apis/${GROUP}/${VERSION}/namespaces/${seg(namespace)}/${MEMBER_PLURAL}`;
  return name === undefined ? all : `${all}/${seg(name)}`;
}

/** Where a process asks what it may do (authorization.k8s.io/v1 SelfSubjectAccessReview). */
export const SELF_SUBJECT_ACCESS_REVIEWS_PATH = '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews';
