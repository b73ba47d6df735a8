/**
 * The messages of exclusions: one line each, for the person who owns the pod. Each says which
 * annotation (or field) is involved, what it evaluated to — values quoted and shortened by
 * quote.ts, never trimmed — and what to change.
 */
import { quoteString, quoteValue, describeKind } from './quote.js';

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

function orRemove(half: Half): string {
  return `or remove the annotation to use ${FALLBACK[half]}`;
}

/** Notes what a person might not see in a quoted value: whitespace at either end. */
function whitespaceNote(value: string): string {
  return value !== value.trim() ? ' (note the whitespace at its start or end: nothing is trimmed)' : '';
}

export function annotationNotAString(half: Half, key: string, value: unknown): string {
  return `${annotationRef(half, key)} holds ${describeKind(value)} where a JSONPath string belongs; set it to a JSONPath such as $.status.podIP, ${orRemove(half)}.`;
}

export function invalidExpression(half: Half, key: string, expression: string, problem: string): string {
  return `${annotationRef(half, key)} is not a usable JSONPath: ${problem}. Expression: ${quoteString(expression)}. Fix the expression, ${orRemove(half)}.`;
}

export function evaluationFailed(half: Half, key: string, expression: string, problem: string): string {
  return `${annotationRef(half, key)} could not be evaluated against this pod: ${quoteString(problem, 160)}. Expression: ${quoteString(expression)}. Fix the expression, ${orRemove(half)}.`;
}

export function tooCostly(half: Half, key: string, expression: string, budget: number): string {
  return `${annotationRef(half, key)} needs more than ${budget} evaluation steps against this pod, so it was stopped: ${quoteString(expression)}. Simplify it: spell the path out from $ instead of searching with .. (for example $.spec.containers[?(@.name == 'app')].env[?(@.name == 'NAME')].value), use fewer union members and shorter filters, and do not compare whole arrays or long fields (such as @root.spec.containers[0].args); ${orRemove(half)}.`;
}

export function noMatch(half: Half, key: string, expression: string): string {
  return `${annotationRef(half, key)} matched nothing in this pod: ${quoteString(expression)} selects no value. Compare it with the pod's JSON (kubectl get pod -o json), ${orRemove(half)}.`;
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

export function noPodIP(hostKey: string, hostFromAnnotation: boolean, phase: string): string {
  const state = `the pod has no IP yet (status.podIP is empty${phase ? `, status.phase ${quoteString(phase)}` : ''})`;
  return hostFromAnnotation
    ? `${state}; although its host comes from the hostname annotation ${hostKey}, a pod without an IP cannot be reached, so it joins once it has one.`
    : `${state}, and without the hostname annotation ${hostKey} its host is the pod IP; it joins once it has one.`;
}

/** Where one half of a node name came from, for InvalidNodeName. */
export interface HalfOrigin {
  half: Half;
  value: string;
  /** The annotation key and expression, when the half came from an annotation. */
  annotation?: { key: string; expression: string };
}

function describeOrigin(o: HalfOrigin): string {
  if (o.annotation)
    return `${annotationRef(o.half, o.annotation.key)} (${quoteString(o.annotation.expression)}), which selected ${quoteString(o.value)}${whitespaceNote(o.value)}`;
  return `${FALLBACK[o.half]}, ${quoteString(o.value)}${whitespaceNote(o.value)}`;
}

function fixFor(o: HalfOrigin, nameKey: string): string {
  if (o.annotation)
    return `Make the annotation select a valid ${o.half === 'host' ? 'DNS name or IP address' : 'name (letters, digits, _ and -)'}, ${orRemove(o.half)}.`;
  return o.half === 'name'
    ? `The pod name is not usable as a node name; set the nodename annotation ${nameKey} to select one that is (letters, digits, _ and -).`
    : 'The pod IP is not usable as a host; check status.podIP.';
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
  else
    hint =
      ' They have the same pod name and IP: the input may list one pod twice, or pods from several namespaces.';
  return `node name ${quoteString(nodeName)} is shared by ${sharers.length} pods (${listed}${more}), ${state}; a node name must belong to exactly one pod, so none of them is a peer.${hint}`;
}
