import type {
  ClusterTopologyStatus,
  ExcludedPod,
  LastFailure,
  LastResponse,
  Peer,
} from '../api/types.generated.js';
import type { ResolvedSpec } from '../api/validate.js';
import { resolvePod, settlePeers, type PodVerdict, type ResolveSettings } from '../naming/index.js';
import { READINESS_DEADLOCK_CONDITION, readinessDeadlockRisk } from '../naming/readiness-deadlock.js';
import { VOTES_ANNOTATION } from '../api/schema.js';
import { analyzePeers, quorumAtRiskCondition } from '../failure-domains/index.js';
import type { Failure } from '../kube/reflector-machine.js';
import { setCondition, type ConditionUpdate } from './conditions.js';
import { deepEqual } from '../protocol/publish.js';

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
 * | not listed: cross-namespace| none (nothing of another namespace is ever published)    | dropped (unknown) | False / True (CrossNamespaceDenied) |
 *
 * Only a list that once succeeded is "known": a failure before any success, and every refusal,
 * go out without lastPollTime; and an unknown list goes out as the status protocol's "unknown"
 * (docs/status-protocol.md): without a peers array (a failure before any success) or without
 * lastResponse (a refusal that does not keep the list) — never as an empty one.
 *
 * "Last known" is the previous status's list, so an operator restart keeps it too.
 * `lastResponse.since` and each condition's `lastTransitionTime` move only when the outcome
 * changes, so recomputing the same world gives the same status, whenever and wherever.
 *
 * `lastFailure` keeps the latest run of failed lists after it ended: its first answer, `since`
 * and `until` (the first success after it). The outcome (lastResponse, lastFailure) carries over
 * from a status computed but never written (`unwritten`): while the API server is down nothing
 * can be written, and its TransportError is published once it is back.
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
 * The verdict depends on the naming and membership settings: a change of them re-lists.
 */
export type PodSummary = {
  metadata: { name: string; namespace?: string; resourceVersion?: string };
  verdict: PodVerdict;
  ready: boolean;
  /** For declared voters (spec.failureDomains.voters): the pod's labels and its votes annotation. */
  labels?: Readonly<Record<string, string>>;
  votes?: string;
};

export function summarizePod(pod: PodView, naming: ResolveSettings): PodSummary {
  const m = pod.metadata;
  return {
    metadata: {
      name: m.name,
      ...(typeof m.namespace === 'string' ? { namespace: m.namespace } : {}),
      ...(typeof m.resourceVersion === 'string' ? { resourceVersion: m.resourceVersion } : {}),
    },
    verdict: resolvePod(pod, naming),
    ready: podReady(pod),
    ...voterFields(m),
  };
}

function voterFields(m: PodView['metadata']): Pick<PodSummary, 'labels' | 'votes'> {
  const labels = isStringMap(m.labels) ? m.labels : undefined;
  const votes = isStringMap(m.annotations) ? m.annotations[VOTES_ANNOTATION] : undefined;
  return { ...(labels ? { labels } : {}), ...(typeof votes === 'string' ? { votes } : {}) };
}

const isStringMap = (v: unknown): v is Record<string, string> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

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
  /** A status computed after `previous` whose write failed: its outcome carries over. */
  unwritten?: ClusterTopologyStatus;
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

/**
 * The latest run of failures: opened by the first failed list (its answer, its time), kept while
 * the lists fail, closed (`until`) by the first success, kept after that until the next failure.
 */
export function nextLastFailure(
  before: Pick<ClusterTopologyStatus, 'lastResponse' | 'lastFailure'> | undefined,
  poll: PollView,
): LastFailure | undefined {
  const open = before?.lastFailure && before.lastFailure.until === undefined ? before.lastFailure : undefined;
  if (poll.ok) return open ? { ...open, until: poll.at.toISOString() } : before?.lastFailure;
  if (open) return open;
  // A status written before lastFailure existed may already be failing: the run began then.
  const failing =
    before?.lastResponse && before.lastResponse.code !== '200' ? before.lastResponse : undefined;
  return failing ? { ...failing } : { ...responseOf(poll), since: poll.at.toISOString() };
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
    // A list that is not kept goes out without lastResponse: the status protocol's "unknown"
    // (docs/status-protocol.md), so readers keep what they have instead of reading "empty".
    return finish(
      {
        ...(keep && previous?.lastResponse ? { lastResponse: previous.lastResponse } : {}),
        ...(keep && previous?.lastFailure ? { lastFailure: previous.lastFailure } : {}),
      },
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
  const before = input.unwritten ?? previous;
  const lastResponse: LastResponse = {
    ...response,
    since: before?.lastResponse?.code === response.code ? before.lastResponse.since : poll.at.toISOString(),
  };
  const lastFailure = nextLastFailure(before, poll);

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
    // Present while membership.peers is Ready; turned False (not removed) when it goes back.
    const deadlock = readinessDeadlockRisk(spec.membership, peers.length, excluded);
    if (deadlock.status === 'True' || conditions.some((c) => c.type === READINESS_DEADLOCK_CONDITION))
      set({ type: READINESS_DEADLOCK_CONDITION, ...deadlock });
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
  const out = finish(
    {
      lastResponse,
      ...(lastFailure ? { lastFailure } : {}),
      ...(known ? { lastPollTime: poll.at.toISOString() } : {}),
    },
    peers,
    excluded,
    conditions,
    input,
    readyByPod,
  );
  // No list has succeeded yet and none is kept: no peers array, the status protocol's "unknown"
  // (docs/status-protocol.md) — readers keep what they have instead of reading "empty".
  if (!known && previous?.peers === undefined) delete out.peers;
  return out;
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
    const pods = new Map(input.pods.map((p) => [p.metadata.name, p]));
    const analysis = analyzePeers(
      peers.map((p) => ({
        name: p.pod,
        nodeLabels: p.node ? input.nodeLabels(p.node) : undefined,
        ready: readyByPod.get(p.pod) ?? false,
        podLabels: pods.get(p.pod)?.labels,
        votes: pods.get(p.pod)?.votes,
      })),
      input.spec?.failureDomains,
    );
    out.failureDomains = analysis;
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

// Whether to write is the status protocol's decision (only when the content changes).
export { deepEqual, shouldWrite, statusContent } from '../protocol/publish.js';

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
