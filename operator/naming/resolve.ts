/**
 * The naming engine: which of a set of pods are peers, under which node name, and why each
 * other pod is not. A pure function of the pods and the settings (spec.naming, spec.membership).
 *
 * For each pod:
 * - host (after @) = the hostname annotation's value evaluated as a JSONPath against the
 *   whole pod; without that annotation, spec.naming.hostFallback: status.podIP (PodIP, the
 *   default), the pod A record (PodDNS) or the StatefulSet name (Hostname) — fallbacks.ts.
 * - name (before @) = the nodename annotation's value evaluated likewise; without it,
 *   spec.naming.basename, or metadata.name when there is none.
 * - node name = `name@host`. A pod without annotations at all simply gets both fallbacks.
 *
 * Every input pod comes out exactly once: as a peer, or excluded with one reason, checked in
 * this order (permanent configuration problems before transient state, so a pending pod with a
 * broken annotation shows the broken annotation at once):
 *   1. PodFinished      status.phase is Succeeded or Failed.
 *   2. InvalidJSONPath  an annotation present (hostname first, then nodename) is not a string,
 *                       or is not in the accepted JSONPath language (jsonpath.ts) — including
 *                       anything that tries to run code, and values over 4096 bytes.
 *   3. NoSubdomain      no hostname annotation, hostFallback Hostname, spec.subdomain empty;
 *      NoNamespace      no hostname annotation, hostFallback PodDNS or Hostname, no namespace.
 *   4. NoPodIP          status.podIP is empty. This holds with a hostname annotation and the
 *                       DNS fallbacks too: a pod without an IP cannot be reached by any name.
 *   5. InvalidJSONPath  evaluating the expression against this pod failed;
 *      NoMatch          it selected nothing;
 *      AmbiguousMatch   it selected several distinct values (equal values count as one);
 *      NotAString       it selected one value that is not a string;
 *      ExpressionTooCostly  evaluating it against this pod needs more than the step budget
 *                       (jsonpath-eval.ts); it is stopped there, so no pod holds the event loop.
 *                       (hostname annotation first, then nodename)
 *   6. InvalidNodeName  `name@host` fails checkNodeName (node-name.ts). Nothing is trimmed.
 *   7. PodTerminating   membership.terminating is Drop and the pod is terminating;
 *      PodNotReady      membership.peers is Ready and the pod's Ready condition is not True.
 *   8. DuplicateNodeName several pods resolve to one node name. If exactly one of them is not
 *                       terminating, it is the peer and the terminating ones are excluded,
 *                       their message naming the holder; otherwise all are excluded.
 *
 * With membership.terminating Keep (the default) a terminating pod (metadata.deletionTimestamp
 * set) stays a peer, flagged `terminating`. Each peer carries its member state in the
 * EndpointSlice vocabulary: `serving` = the Ready condition is True; `ready` = serving and not
 * terminating; `terminating`. Membership rules come after naming rules, so a pod left out by
 * the policy has a valid name, and a dropped pod does not contend for its successor's name.
 * Peers carry their uid (metadata.uid; metadata.name when the input has none) so a consumer
 * keys them by pod, never by IP. `node` is spec.nodeName, '' when unscheduled.
 * Peers are sorted by node name, exclusions by pod, reason, message (code-unit order), so the
 * result does not depend on the order of the input.
 */
import { checkHostPart, checkNamePart, checkNodeName, MAX_NODE_NAME_LENGTH } from './node-name.js';
import { compileJsonPath, selectValue, type CompiledJsonPath } from './jsonpath.js';
import { annotation, readPod, type PodFacts } from './pod-fields.js';
import * as msg from './messages.js';
import { fallbackHost, fallbackName, missingForHost } from './fallbacks.js';
import {
  DEFAULT_MEMBERSHIP,
  DEFAULT_NAMING_SETTINGS,
  type Excluded,
  type ExclusionReason,
  type NamingSettings,
  type Peer,
  type PodVerdict,
  type ResolveResult,
  type ResolveSettings,
} from './types.js';

type Outcome<T> = { ok: true; value: T } | { ok: false; reason: ExclusionReason; message: string };

function fail(
  reason: ExclusionReason,
  message: string,
): { ok: false; reason: ExclusionReason; message: string } {
  return { ok: false, reason, message };
}

/** An annotation found on the pod, compiled. */
interface AnnotatedHalf {
  half: msg.Half;
  key: string;
  expression: string;
  compiled: CompiledJsonPath;
  /** What the half would be without the annotation (for "or remove the annotation"). */
  fallback: string | undefined;
}

/** The fallback's description for messages, only when the settings change it from the default. */
function fallbackText(half: msg.Half, settings: NamingSettings): string | undefined {
  const changed =
    half === 'name' ? settings.basename !== undefined : (settings.hostFallback ?? 'PodIP') !== 'PodIP';
  return changed ? msg.describeFallback(half, settings) : undefined;
}

function compileAnnotation(
  facts: PodFacts,
  half: msg.Half,
  key: string,
  settings: NamingSettings,
): Outcome<AnnotatedHalf | undefined> {
  const raw = annotation(facts, key);
  if (raw === undefined) return { ok: true, value: undefined };
  const fallback = fallbackText(half, settings);
  if (typeof raw !== 'string')
    return fail('InvalidJSONPath', msg.annotationNotAString(half, key, raw, fallback));
  const compiled = compileJsonPath(raw);
  if (!compiled.ok)
    return fail('InvalidJSONPath', msg.invalidExpression(half, key, raw, compiled.problem, fallback));
  return { ok: true, value: { half, key, expression: raw, compiled: compiled.path, fallback } };
}

function evaluate(a: AnnotatedHalf, pod: object): Outcome<string> {
  const s = selectValue(a.compiled, pod);
  switch (s.kind) {
    case 'Match':
      return { ok: true, value: s.value };
    case 'NoMatch':
      return fail('NoMatch', msg.noMatch(a.half, a.key, a.expression, a.fallback));
    case 'AmbiguousMatch':
      return fail('AmbiguousMatch', msg.ambiguousMatch(a.half, a.key, a.expression, s.distinct, s.count));
    case 'NotAString':
      return fail('NotAString', msg.notAString(a.half, a.key, a.expression, s.value));
    case 'OverBudget':
      return fail('ExpressionTooCostly', msg.tooCostly(a.half, a.key, a.expression, s.budget));
    case 'Failed':
      return fail(
        'InvalidJSONPath',
        msg.evaluationFailed(a.half, a.key, a.expression, s.problem, a.fallback),
      );
  }
}

function origin(
  half: msg.Half,
  value: string,
  a: AnnotatedHalf | undefined,
  settings: NamingSettings,
): msg.HalfOrigin {
  const fallback = fallbackText(half, settings);
  if (a) return { half, value, annotation: { key: a.key, expression: a.expression }, fallback };
  return {
    half,
    value,
    fallback,
    ...(half === 'host' ? { hostFallback: settings.hostFallback ?? 'PodIP' } : {}),
  };
}

function explainInvalidNodeName(
  nodeName: string,
  name: msg.HalfOrigin,
  host: msg.HalfOrigin,
  problem: string,
  settings: NamingSettings,
): string {
  // checkNodeName splits at the first @, so an @ inside the name would be blamed on the host;
  // checking each half on its own blames the half that is at fault.
  const nameCheck = checkNamePart(name.value);
  if (!nameCheck.ok)
    return msg.invalidNodeName(nodeName, nameCheck.problem, name, settings.nodenameAnnotation);
  const hostCheck = checkHostPart(host.value);
  if (!hostCheck.ok)
    return msg.invalidNodeName(nodeName, hostCheck.problem, host, settings.nodenameAnnotation);
  const detail =
    nodeName.length > MAX_NODE_NAME_LENGTH
      ? `${problem} (name ${name.value.length} + host ${host.value.length} characters)`
      : problem;
  return msg.invalidNodeName(nodeName, detail, undefined, settings.nodenameAnnotation);
}

function verdictOf(pod: unknown, facts: PodFacts, settings: ResolveSettings): Outcome<Peer> {
  if (facts.phase === 'Succeeded' || facts.phase === 'Failed')
    return fail('PodFinished', msg.podFinished(facts.phase));

  const hostAnnotation = compileAnnotation(facts, 'host', settings.hostnameAnnotation, settings);
  if (!hostAnnotation.ok) return hostAnnotation;
  const nameAnnotation = compileAnnotation(facts, 'name', settings.nodenameAnnotation, settings);
  if (!nameAnnotation.ok) return nameAnnotation;
  const hostA = hostAnnotation.value;
  const nameA = nameAnnotation.value;

  if (!hostA) {
    const missing = missingForHost(facts, settings);
    if (missing && !missing.ok)
      return fail(
        missing.missing === 'spec.subdomain' ? 'NoSubdomain' : 'NoNamespace',
        msg.missingHostField(
          missing.missing,
          missing.fallback as 'PodDNS' | 'Hostname',
          settings.hostnameAnnotation,
        ),
      );
  }

  if (facts.podIP === '')
    return fail(
      'NoPodIP',
      msg.noPodIP(settings.hostnameAnnotation, hostA !== undefined, facts.phase, settings.hostFallback),
    );

  // An annotation can only be present when the pod is an object.
  const podObject = pod as object;
  let host: string;
  if (hostA) {
    const v = evaluate(hostA, podObject);
    if (!v.ok) return v;
    host = v.value;
  } else {
    const fallback = fallbackHost(facts, settings);
    if (fallback === undefined) return fail('InvalidNodeName', msg.podIPNotAnAddress(facts.podIP));
    host = fallback;
  }
  let name: string;
  let basename = false;
  if (nameA) {
    const v = evaluate(nameA, podObject);
    if (!v.ok) return v;
    name = v.value;
  } else ({ name, basename } = fallbackName(facts, settings));

  const nodeName = `${name}@${host}`;
  const check = checkNodeName(nodeName);
  if (!check.ok)
    return fail(
      'InvalidNodeName',
      explainInvalidNodeName(
        nodeName,
        origin('name', name, nameA, settings),
        origin('host', host, hostA, settings),
        check.problem,
        settings,
      ),
    );

  const membership = settings.membership ?? DEFAULT_MEMBERSHIP;
  if (facts.terminating && membership.terminating === 'Drop')
    return fail('PodTerminating', msg.podTerminating());
  if (!facts.readyCondition && membership.peers === 'Ready')
    return fail('PodNotReady', msg.podNotReady(facts.phase));

  return {
    ok: true,
    value: {
      nodeName,
      pod: facts.name,
      uid: facts.uid !== '' ? facts.uid : facts.name,
      podIP: facts.podIP,
      node: facts.node,
      hostSource: hostA ? 'Annotation' : (settings.hostFallback ?? 'PodIP'),
      nameSource: nameA ? 'Annotation' : basename ? 'Basename' : 'PodName',
      terminating: facts.terminating,
      ready: facts.readyCondition && !facts.terminating,
      serving: facts.readyCondition,
    },
  };
}

function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function compareExcluded(a: Excluded, b: Excluded): number {
  return (
    compareStrings(a.pod, b.pod) || compareStrings(a.reason, b.reason) || compareStrings(a.message, b.message)
  );
}

// Within a group sharing a node name: a total order on the peer record, so messages and the
// choice of listing do not depend on input order.
function comparePeers(a: Peer, b: Peer): number {
  return (
    compareStrings(a.nodeName, b.nodeName) ||
    compareStrings(a.pod, b.pod) ||
    compareStrings(a.uid, b.uid) ||
    compareStrings(a.podIP, b.podIP) ||
    compareStrings(a.node, b.node) ||
    compareStrings(a.hostSource, b.hostSource) ||
    compareStrings(a.nameSource, b.nameSource) ||
    Number(a.terminating ?? false) - Number(b.terminating ?? false) ||
    Number(a.ready ?? false) - Number(b.ready ?? false) ||
    Number(a.serving ?? false) - Number(b.serving ?? false)
  );
}

function settleGroup(
  group: readonly Peer[],
  settings: NamingSettings,
  peers: Peer[],
  excluded: Excluded[],
): void {
  const first = group[0]!;
  if (group.length === 1) {
    peers.push(first);
    return;
  }
  const live = group.filter((p) => !p.terminating);
  if (live.length === 1) {
    const holder = live[0]!;
    peers.push(holder);
    for (const p of group)
      if (p !== holder)
        excluded.push({
          pod: p.pod,
          reason: 'DuplicateNodeName',
          message: msg.heldBy(p.nodeName, holder.pod),
        });
    return;
  }
  const sharers = group.map((p) => ({
    pod: p.pod,
    terminating: p.terminating === true,
    hostFromAnnotation: p.hostSource === 'Annotation',
    nameFromAnnotation: p.nameSource === 'Annotation',
    nameFromBasename: p.nameSource === 'Basename',
  }));
  const message = msg.sharedNodeName(
    first.nodeName,
    sharers,
    settings.hostnameAnnotation,
    settings.nodenameAnnotation,
  );
  for (const p of group) excluded.push({ pod: p.pod, reason: 'DuplicateNodeName', message });
}

/**
 * One pod on its own: rules 1–7, everything but the rule that spans pods (8, duplicate node
 * names). A pod's verdict depends only on the pod and the settings, so a cache of pods can keep
 * verdicts instead of pods and settle them with `settlePeers` whenever the set changes.
 */
export function resolvePod(pod: unknown, settings: ResolveSettings = DEFAULT_NAMING_SETTINGS): PodVerdict {
  const facts = readPod(pod);
  const outcome = verdictOf(pod, facts, settings);
  return outcome.ok
    ? { ok: true, peer: outcome.value }
    : { ok: false, excluded: { pod: facts.name, reason: outcome.reason, message: outcome.message } };
}

/** Rule 8 over the verdicts of a set of pods, and the result's order; see the module comment. */
export function settlePeers(
  verdicts: readonly PodVerdict[],
  settings: NamingSettings = DEFAULT_NAMING_SETTINGS,
): ResolveResult {
  const candidates: Peer[] = [];
  const excluded: Excluded[] = [];
  for (const v of verdicts) {
    if (v.ok) candidates.push(v.peer);
    else excluded.push(v.excluded);
  }

  candidates.sort(comparePeers);
  const peers: Peer[] = [];
  for (let start = 0; start < candidates.length;) {
    let end = start + 1;
    while (end < candidates.length && candidates[end]!.nodeName === candidates[start]!.nodeName) end++;
    settleGroup(candidates.slice(start, end), settings, peers, excluded);
    start = end;
  }

  excluded.sort(compareExcluded);
  return { peers, excluded };
}

/** Resolves pods (Kubernetes pod JSON objects) to peers and exclusions; see the module comment. */
export function resolvePeers(
  pods: readonly unknown[],
  settings: ResolveSettings = DEFAULT_NAMING_SETTINGS,
): ResolveResult {
  return settlePeers(
    pods.map((pod) => resolvePod(pod, settings)),
    settings,
  );
}
