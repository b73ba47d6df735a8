/**
 * The messages of exclusions: one line each, for the person who owns the pod. Each says which
 * annotation (or field) is involved, what it evaluated to — values quoted and shortened by
 * quote.ts, never trimmed — and what to change.
 */
import { quoteString, quoteValue, describeKind } from './quote.js';
import { DEFAULT_CLUSTER_DOMAIN, type NamingSettings } from './types.js';

/** Which half of `name@host` a message is about. */
export type Half = 'host' | 'name';

const PART: Record<Half, string> = { host: 'host (after @)', name: 'name (before @)' };
const FALLBACK: Record<Half, string> = {
  host: 'the pod IP (status.podIP)',
  name: 'the pod name (metadata.name)',
};

function annotationRef(half: Half, key: string): string {
  return `the ${half === 'host' ? 'hostname' : 'nodename'} annotation ${key}`;
}

/**
 * What a half is when its annotation is absent, as the settings make it. Absent settings (or
 * the defaults) give the texts the messages always had.
 */
export function describeFallback(half: Half, s: NamingSettings | undefined): string {
  if (half === 'name')
    return s?.basename !== undefined
      ? `the basename ${quoteString(s.basename)} (spec.naming.basename)`
      : FALLBACK.name;
  const domain = s?.clusterDomain ?? DEFAULT_CLUSTER_DOMAIN;
  switch (s?.hostFallback ?? 'PodIP') {
    case 'PodIP':
      return FALLBACK.host;
    case 'PodDNS':
      return `the pod DNS name (status.podIP with dashes, .<metadata.namespace>.pod.${domain})`;
    case 'Hostname':
      return `the pod hostname (spec.hostname or the pod name, .<spec.subdomain>.<metadata.namespace>.svc.${domain})`;
  }
}

function orRemove(half: Half, fallback: string | undefined): string {
  return `or remove the annotation to use ${fallback ?? FALLBACK[half]}`;
}

/** Notes what a person might not see in a quoted value: whitespace at either end. */
function whitespaceNote(value: string): string {
  return value !== value.trim() ? ' (note the whitespace at its start or end: nothing is trimmed)' : '';
}

export function annotationNotAString(half: Half, key: string, value: unknown, fallback?: string): string {
  return `${annotationRef(half, key)} holds ${describeKind(value)} where a JSONPath string belongs; set it to a JSONPath such as $.status.podIP, ${orRemove(half, fallback)}.`;
}

export function invalidExpression(
  half: Half,
  key: string,
  expression: string,
  problem: string,
  fallback?: string,
): string {
  return `${annotationRef(half, key)} is not a usable JSONPath: ${problem}. Expression: ${quoteString(expression)}. Fix the expression, ${orRemove(half, fallback)}.`;
}

export function evaluationFailed(
  half: Half,
  key: string,
  expression: string,
  problem: string,
  fallback?: string,
): string {
  return `${annotationRef(half, key)} could not be evaluated against this pod: ${quoteString(problem, 160)}. Expression: ${quoteString(expression)}. Fix the expression, ${orRemove(half, fallback)}.`;
}

export function tooCostly(
  half: Half,
  key: string,
  expression: string,
  budget: number,
  fallback?: string,
): string {
  return `${annotationRef(half, key)} needs more than ${budget} evaluation steps against this pod, so it was stopped: ${quoteString(expression)}. Simplify it: spell the path out from $ instead of searching with .. (for example $.spec.containers[?(@.name == 'app')].env[?(@.name == 'NAME')].value), use fewer union members and shorter filters, and do not compare whole arrays or long fields (such as @root.spec.containers[0].args); ${orRemove(half, fallback)}.`;
}

export function noMatch(half: Half, key: string, expression: string, fallback?: string): string {
  return `${annotationRef(half, key)} matched nothing in this pod: ${quoteString(expression)} selects no value. Compare it with the pod's JSON (kubectl get pod -o json), ${orRemove(half, fallback)}.`;
}

export function ambiguousMatch(
  half: Half,
  key: string,
  expression: string,
  distinct: readonly unknown[],
  count: number,
): string {
  const shown = distinct.map((v) => quoteValue(v)).join(', ');
  const more = count > distinct.length ? ` and ${count - distinct.length} more` : '';
  return `${annotationRef(half, key)} matched ${count} different values (${shown}${more}) with ${quoteString(expression)}; the ${PART[half]} must be exactly one value. Narrow the expression, for example with a filter on the container name such as [?(@.name == 'app')].`;
}

export function notAString(half: Half, key: string, expression: string, value: unknown): string {
  return `${annotationRef(half, key)} selected ${describeKind(value)}, ${quoteValue(value)}, with ${quoteString(expression)}; the ${PART[half]} must be a string. Select a string field (an env entry's .value, not the entry itself).`;
}

export function podFinished(phase: string): string {
  return `the pod has finished (status.phase ${quoteString(phase)}); a finished pod never runs again — its controller replaces it with a new pod, which is resolved on its own.`;
}

export function noPodIP(
  hostKey: string,
  hostFromAnnotation: boolean,
  phase: string,
  hostFallback: 'PodIP' | 'PodDNS' | 'Hostname' = 'PodIP',
): string {
  const state = `the pod has no IP yet (status.podIP is empty${phase ? `, status.phase ${quoteString(phase)}` : ''})`;
  if (hostFromAnnotation)
    return `${state}; although its host comes from the hostname annotation ${hostKey}, a pod without an IP cannot be reached, so it joins once it has one.`;
  if (hostFallback === 'PodIP')
    return `${state}, and without the hostname annotation ${hostKey} its host is the pod IP; it joins once it has one.`;
  return `${state}; its host is a DNS name (spec.naming.hostFallback ${hostFallback}), but a pod without an IP has no DNS record and cannot be reached, so it joins once it has one.`;
}

export function missingHostField(
  field: 'metadata.namespace' | 'spec.subdomain',
  hostFallback: 'PodDNS' | 'Hostname',
  hostKey: string,
): string {
  if (field === 'spec.subdomain')
    return `the pod has no spec.subdomain, which spec.naming.hostFallback Hostname needs for its stable name (<hostname>.<subdomain>.<namespace>.svc.<cluster domain>). A StatefulSet sets it from spec.serviceName: give the StatefulSet a headless Service and serviceName (or set spec.subdomain on the pod), give the pod the hostname annotation ${hostKey}, or set spec.naming.hostFallback to PodIP or PodDNS.`;
  return `the pod has no metadata.namespace, which spec.naming.hostFallback ${hostFallback} needs for its DNS name; pods read from a file need their namespace (kubectl get pods -o json prints it), or set spec.naming.hostFallback to PodIP.`;
}

export function podIPNotAnAddress(podIP: string): string {
  return `status.podIP ${quoteString(podIP)} is not an IP address, so spec.naming.hostFallback PodDNS has no A record to name; check status.podIP (input read from a file may be edited), or set spec.naming.hostFallback to PodIP.`;
}

export function podTerminating(): string {
  return 'the pod is terminating (metadata.deletionTimestamp is set) and spec.membership.terminating is Drop, so it left the peers at once; set it to Keep to keep terminating pods as peers, flagged terminating, until they are gone.';
}

export function podNotReady(phase: string): string {
  return `the pod's Ready condition is not True${phase ? ` (status.phase ${quoteString(phase)})` : ''} and spec.membership.peers is Ready, so only ready pods are peers; it joins once it is ready. If its readiness waits for the cluster to form, it never becomes ready: make the readiness probe independent of clustering, or set spec.membership.peers to Running.`;
}

/** Where one half of a node name came from, for InvalidNodeName. */
export interface HalfOrigin {
  half: Half;
  value: string;
  /** The annotation key and expression, when the half came from an annotation. */
  annotation?: { key: string; expression: string };
  /** describeFallback of this half (absent: the default fallback). */
  fallback?: string;
  /** The host fallback, when the host did not come from an annotation. */
  hostFallback?: 'PodIP' | 'PodDNS' | 'Hostname';
}

function describeOrigin(o: HalfOrigin): string {
  if (o.annotation)
    return `${annotationRef(o.half, o.annotation.key)} (${quoteString(o.annotation.expression)}), which selected ${quoteString(o.value)}${whitespaceNote(o.value)}`;
  return `${o.fallback ?? FALLBACK[o.half]}, ${quoteString(o.value)}${whitespaceNote(o.value)}`;
}

function fixFor(o: HalfOrigin, nameKey: string): string {
  if (o.annotation)
    return `Make the annotation select a valid ${o.half === 'host' ? 'DNS name or IP address' : 'name (letters, digits, _ and -)'}, ${orRemove(o.half, o.fallback)}.`;
  if (o.half === 'name')
    return `The pod name is not usable as a node name; set the nodename annotation ${nameKey} to select one that is (letters, digits, _ and -).`;
  switch (o.hostFallback ?? 'PodIP') {
    case 'PodIP':
      return 'The pod IP is not usable as a host; check status.podIP.';
    case 'PodDNS':
      return 'The pod DNS name is not a valid DNS name; check status.podIP, metadata.namespace and spec.naming.clusterDomain, or set spec.naming.hostFallback to PodIP.';
    case 'Hostname':
      return 'The pod hostname is not a valid DNS name (labels of at most 63 letters, digits and -, 253 characters in all); check spec.hostname, spec.subdomain, metadata.namespace and spec.naming.clusterDomain, or set spec.naming.hostFallback to PodIP.';
  }
}

export function invalidNodeName(
  nodeName: string,
  problem: string,
  culprit: HalfOrigin | undefined,
  nameKey: string,
): string {
  const head = `node name ${quoteString(nodeName)} is invalid: ${problem}.`;
  if (!culprit) return `${head} Shorten the name or the host.`;
  return `${head} The ${PART[culprit.half]} came from ${describeOrigin(culprit)}. ${fixFor(culprit, nameKey)}`;
}

export function heldBy(nodeName: string, holder: string): string {
  return `node name ${quoteString(nodeName)} is held by pod ${quoteString(holder)}, which is not terminating; this pod is terminating and gives way to it.`;
}

/** One pod of a group sharing a node name. */
export interface Sharer {
  pod: string;
  terminating: boolean;
  hostFromAnnotation: boolean;
  nameFromAnnotation: boolean;
  /** The name part is spec.naming.basename. */
  nameFromBasename?: boolean;
}

const LISTED_SHARERS = 5;

export function sharedNodeName(
  nodeName: string,
  sharers: readonly Sharer[],
  hostKey: string,
  nameKey: string,
): string {
  const live = sharers.filter((s) => !s.terminating).length;
  const listed = sharers
    .slice(0, LISTED_SHARERS)
    .map((s) => `${quoteString(s.pod)}${s.terminating ? ' (terminating)' : ''}`)
    .join(', ');
  const more = sharers.length > LISTED_SHARERS ? ` and ${sharers.length - LISTED_SHARERS} more` : '';
  const state = live === 0 ? 'all of them terminating' : `${live} of them not terminating`;
  let hint: string;
  if (sharers.some((s) => s.hostFromAnnotation))
    hint = ` Replicas that share one DNS name get one node name: leave the hostname annotation ${hostKey} off so each pod's host is its own pod IP, and start each node as \${HOSTNAME}@\${POD_IP} (POD_IP from the field status.podIP).`;
  else if (sharers.some((s) => s.nameFromAnnotation))
    hint = ` The nodename annotation ${nameKey} gives them the same name; make it select something unique per pod, or remove it to use the pod name.`;
  else if (sharers.some((s) => s.nameFromBasename))
    hint =
      ' Their name part is spec.naming.basename, so only the host tells them apart, and theirs is the same: two pods with one IP (the input may list one pod twice), or a hostname shared by pods.';
  else
    hint =
      ' They have the same pod name and IP: the input may list one pod twice, or pods from several namespaces.';
  return `node name ${quoteString(nodeName)} is shared by ${sharers.length} pods (${listed}${more}), ${state}; a node name must belong to exactly one pod, so none of them is a peer.${hint}`;
}
