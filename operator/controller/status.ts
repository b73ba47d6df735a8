import type { ClusterTopologyStatus, ExcludedPod, LastResponse, Peer } from '../api/types.generated.js';
import type { ResolvedSpec } from '../api/validate.js';
import { resolvePod, settlePeers, type NamingSettings, type PodVerdict } from '../naming/index.js';
import { analyzeFailureDomains, quorumAtRiskCondition, type Member } from '../failure-domains/index.js';
import type { Failure } from '../kube/reflector-machine.js';
import { setCondition, type ConditionUpdate } from './conditions.js';

/**
 * The status of one ClusterTopology as a pure function of what the operator knows:
 *
 * | the last list of pods      | peers                                                     | lastResponse      | Ready / Degraded                  |
 * |----------------------------|-----------------------------------------------------------|-------------------|-----------------------------------|
 * | 200                        | resolved from the pods (kept current by the watch)        | 200 OK            | True / False                      |
 * | 401, 403                   | `onForbidden: Disconnect` → none; `Retain` → last known    | the code          | False / True (reason Forbidden…)  |
 * | any other status           | last known                                                | the code          | False / True                      |
 * | no answer                  | last known                                                | TransportError    | False / True                      |
 * | not listed: invalid spec   | last known                                                | unchanged         | False / True (InvalidSpec)        |
 * | not listed: cross-namespace| none (nothing of another namespace is ever published)    | unchanged         | False / True (CrossNamespaceDenied) |
 *
 * Only a list that once succeeded is "known": a failure before any success, and every refusal,
 * go out without lastPollTime, which agents read as a stale status (they keep what they have) —
 * an unknown list is never published as an empty one.
 *
 * "Last known" is the previous status's list, so an operator restart keeps it too.
 * `lastResponse.since` and each condition's `lastTransitionTime` move only when the outcome
 * changes, so recomputing the same world gives the same status, whenever and wherever.
 */

export interface PodView {
  metadata: { name: string; uid?: string; [k: string]: unknown };
  status?: { conditions?: { type: string; status: string }[]; [k: string]: unknown };
  spec?: { nodeName?: string; [k: string]: unknown };
  [k: string]: unknown;
}

/**
 * What the status needs of one selected pod, taken when the pod is listed or changes; the
 * operator keeps this, not the pod (at 5,000 pods the pod objects were most of its memory).
 * The verdict depends on the naming settings: a change of them re-lists.
 */
export type PodSummary = {
  metadata: { name: string; namespace?: string; resourceVersion?: string };
  verdict: PodVerdict;
  ready: boolean;
};

export function summarizePod(pod: PodView, naming: NamingSettings): PodSummary {
  const m = pod.metadata;
  return {
    metadata: {
      name: m.name,
      ...(typeof m.namespace === 'string' ? { namespace: m.namespace } : {}),
      ...(typeof m.resourceVersion === 'string' ? { resourceVersion: m.resourceVersion } : {}),
    },
    verdict: resolvePod(pod, naming),
    ready: podReady(pod),
  };
}

export type PollView = { ok: true; at: Date } | { ok: false; at: Date; failure: Failure };

export interface StatusInput {
  generation: number;
  previous: ClusterTopologyStatus | undefined;
  now: Date;
  /** Undefined only together with a refusal (an invalid spec). */
  spec: ResolvedSpec | undefined;
  /** The namespace whose pods are listed. */
  namespace: string;
  /** Set when the topology may not be served at all (cross-namespace, invalid spec). */
  refusal?: { reason: string; message: string };
  /** The last list's outcome; undefined: not listed yet. */
  poll?: PollView;
  /** The pods the selector matches now, summarized with spec.naming (read only when the last list succeeded). */
  pods: readonly PodSummary[];
  /** Node labels by Node name; undefined for a Node that does not exist (or is not known yet). */
  nodeLabels: (node: string) => Readonly<Record<string, string>> | undefined;
}

export const isForbidden = (f: Failure) => f.code === 401 || f.code === 403;

function responseOf(poll: PollView): Omit<LastResponse, 'since'> {
  if (poll.ok) return { code: '200', reason: 'OK' };
  const f = poll.failure;
  return f.code === undefined
    ? { code: 'TransportError', reason: 'TransportError', message: f.message }
    : { code: String(f.code), reason: f.reason, message: f.message };
}

function podReady(p: PodView): boolean {
  return p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
}

export function computeStatus(input: StatusInput): ClusterTopologyStatus {
  const { previous, now, generation, spec } = input;
  let conditions = previous?.conditions ?? [];
  const set = (u: ConditionUpdate) => (conditions = setCondition(conditions, u, now, generation));

  if (input.refusal) {
    // Not listed at all. An invalid spec keeps the last list (a typo must not disconnect a
    // cluster); a cross-namespace topology publishes nothing. Either way there is no
    // lastPollTime, so agents take the status as stale and keep their connections.
    const r = input.refusal;
    const keep = r.reason !== 'CrossNamespaceDenied';
    set({ type: 'Ready', status: 'False', ...r });
    set({ type: 'Degraded', status: 'True', ...r });
    set({
      type: 'QuorumAtRisk',
      status: 'Unknown',
      reason: r.reason,
      message: 'No analysis while the topology is refused.',
    });
    return finish(
      { ...(previous?.lastResponse ? { lastResponse: previous.lastResponse } : {}) },
      keep ? (previous?.peers ?? []) : [],
      keep ? (previous?.excluded ?? []) : [],
      conditions,
      input,
      undefined,
    );
  }

  const poll = input.poll;
  if (!spec) throw new Error('computeStatus: a spec is needed unless the topology is refused');
  if (!poll) {
    // Not listed yet: keep what the status says (an operator restart must not flap it).
    return (
      previous ?? {
        observedGeneration: generation,
        conditions: setCondition(
          [],
          {
            type: 'Ready',
            status: 'Unknown',
            reason: 'Listing',
            message: 'The first list of pods is under way.',
          },
          now,
          generation,
        ),
      }
    );
  }

  const response = responseOf(poll);
  const lastResponse: LastResponse = {
    ...response,
    since:
      previous?.lastResponse?.code === response.code ? previous.lastResponse.since : poll.at.toISOString(),
  };

  let peers: Peer[];
  let excluded: ExcludedPod[];
  let readyByPod = new Map<string, boolean>();
  let known = true;
  if (poll.ok) {
    const resolved = settlePeers(
      input.pods.map((p) => p.verdict),
      spec.naming,
    );
    peers = resolved.peers;
    excluded = resolved.excluded;
    readyByPod = new Map(input.pods.map((p) => [p.metadata.name, p.ready]));
    set({
      type: 'Ready',
      status: 'True',
      reason: 'Listed',
      message: `${peers.length} peers, ${excluded.length} excluded.`,
    });
    set({
      type: 'Degraded',
      status: 'False',
      reason: 'ListSucceeded',
      message: 'The last list of pods succeeded.',
    });
  } else {
    const f = poll.failure;
    const disconnect = isForbidden(f) && spec.onForbidden === 'Disconnect';
    peers = disconnect ? [] : (previous?.peers ?? []);
    excluded = disconnect ? [] : (previous?.excluded ?? []);
    // Only a list that once succeeded (the previous status was polled) is "known"; without one
    // the status goes out without lastPollTime, so agents keep what they have instead of
    // reading an unknown list as an empty one.
    known = disconnect || previous?.lastPollTime !== undefined;
    const kept = disconnect
      ? 'onForbidden is Disconnect: the peer list is empty, so agents disconnect.'
      : known
        ? `Keeping the last known ${peers.length} peers.`
        : 'No list of pods has succeeded yet; agents keep the connections they have.';
    const what =
      f.code === undefined
        ? 'The API server did not answer'
        : `The API server answered ${f.code} ${f.reason}`;
    const reason =
      f.code === undefined
        ? 'TransportError'
        : isForbidden(f)
          ? 'Forbidden'
          : f.code === 400
            ? 'InvalidSelector'
            : 'ListFailed';
    const message = `${what} to the list of pods in ${input.namespace}: ${truncate(f.message, 500)} ${kept}`;
    set({ type: 'Ready', status: 'False', reason, message });
    set({ type: 'Degraded', status: 'True', reason, message });
    // Readiness is only known from a fresh list; keep the previous verdicts' inputs as they were.
    for (const p of peers) readyByPod.set(p.pod, true);
  }
  return finish(
    { lastResponse, ...(known ? { lastPollTime: poll.at.toISOString() } : {}) },
    peers,
    excluded,
    conditions,
    input,
    readyByPod,
  );
}

function finish(
  base: Partial<ClusterTopologyStatus>,
  peers: Peer[],
  excluded: ExcludedPod[],
  conditionsIn: ClusterTopologyStatus['conditions'],
  input: StatusInput,
  readyByPod: Map<string, boolean> | undefined,
): ClusterTopologyStatus {
  let conditions = conditionsIn ?? [];
  const out: ClusterTopologyStatus = {
    observedGeneration: input.generation,
    peerCount: peers.length,
    excludedCount: excluded.length,
    peers,
    excluded,
    ...base,
  };
  if (readyByPod) {
    const members: Member[] = peers.map((p) => ({
      name: p.pod,
      labels: p.node ? input.nodeLabels(p.node) : undefined,
      ready: readyByPod.get(p.pod) ?? false,
    }));
    const analysis = analyzeFailureDomains(members, input.spec?.failureDomains);
    out.failureDomains = analysis as unknown as ClusterTopologyStatus['failureDomains'];
    const c = quorumAtRiskCondition(analysis);
    conditions = setCondition(
      conditions,
      { type: 'QuorumAtRisk', status: c.status, reason: c.reason, message: c.message },
      input.now,
      input.generation,
    );
  } else if (input.previous?.failureDomains && !input.refusal) {
    out.failureDomains = input.previous.failureDomains;
  }
  out.conditions = conditions;
  return out;
}

const truncate = (s: string, n: number) => (s.length > n ? s.slice(0, n - 1) + '…' : s);

/** The status without the fields that change on every poll: what decides whether to write. */
export function statusContent(s: ClusterTopologyStatus | undefined): unknown {
  if (!s) return undefined;
  const { lastPollTime: _t, ...rest } = s;
  return rest;
}

export const HEARTBEAT_MS = 60_000;

/** Write when the content changed, or when the last written lastPollTime is a minute old. */
export function shouldWrite(
  written: ClusterTopologyStatus | undefined,
  next: ClusterTopologyStatus,
  now: Date,
): boolean {
  if (!deepEqual(statusContent(written), statusContent(next))) return true;
  if (!next.lastPollTime || next.lastPollTime === written?.lastPollTime) return false;
  const last = written?.lastPollTime ? Date.parse(written.lastPollTime) : 0;
  return now.getTime() - last >= HEARTBEAT_MS;
}

export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((x, i) => deepEqual(x, bb[i]));
  }
  const ka = Object.keys(a).filter((k) => (a as Record<string, unknown>)[k] !== undefined);
  const kb = Object.keys(b).filter((k) => (b as Record<string, unknown>)[k] !== undefined);
  return (
    ka.length === kb.length &&
    ka.every((k) => deepEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]))
  );
}

/**
 * A JSON merge patch (RFC 7386) that turns `from` into `to`: changed and new keys are set,
 * removed keys are set to null, arrays are replaced whole.
 */
export function mergePatch(from: unknown, to: unknown): unknown {
  if (
    typeof to !== 'object' ||
    to === null ||
    Array.isArray(to) ||
    typeof from !== 'object' ||
    from === null ||
    Array.isArray(from)
  )
    return to;
  const patch: Record<string, unknown> = {};
  // defineProperty: a key named __proto__ is data, never the object's prototype.
  const put = (k: string, v: unknown) =>
    Object.defineProperty(patch, k, { value: v, enumerable: true, writable: true, configurable: true });
  const f = from as Record<string, unknown>;
  const t = to as Record<string, unknown>;
  for (const k of Object.keys(f)) if (f[k] !== undefined && t[k] === undefined) put(k, null);
  for (const k of Object.keys(t)) {
    if (t[k] === undefined || deepEqual(f[k], t[k])) continue;
    put(k, mergePatch(f[k], t[k]));
  }
  return patch;
}

/** What changed in the peer list, for events. */
export function peerChanges(
  before: readonly Peer[] | undefined,
  after: readonly Peer[],
): { joined: string[]; left: string[] } {
  const b = new Set((before ?? []).map((p) => p.nodeName));
  const a = new Set(after.map((p) => p.nodeName));
  return { joined: [...a].filter((n) => !b.has(n)), left: [...b].filter((n) => !a.has(n)) };
}
