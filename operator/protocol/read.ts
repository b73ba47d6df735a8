import type {
  ClusterTopologySpec,
  ClusterTopologyStatus,
  ExcludedPod,
  Peer,
  PeerDefaults,
} from '../api/types.generated.js';
import { isRecord } from '../api/json.js';
import type { KubeObject } from '../kube/object.js';
import { isForbidden, type Failure } from '../kube/reflector-machine.js';
import { checkNodeName } from '../naming/node-name.js';

/**
 * The reader's side of the status protocol (docs/status-protocol.md), as pure functions: from
 * what a reader fetched — the ClusterTopology and its liveness Lease — and the time, to what it
 * may act on. Every reader (the agent, `watchPeers`, the CLI, `explain`, the demo) goes through
 * here; nothing else looks into `status.peers`. The cases are test/protocol-vectors/, which the
 * OTP library runs too.
 */

/** The liveness Lease of a topology: `clustertopology.<name>` in the topology's namespace. */
export const LEASE_PREFIX = 'clustertopology.';
/** The label every liveness Lease carries, with the topology's name as its value. */
export const TOPOLOGY_LABEL = 'cluster.netzlive.io/topology';
/** The operator renews a live Lease at most this often (and at once after a failure or start). */
export const RENEW_EVERY_S = 60;

export function leaseNameFor(topology: string): string {
  return `${LEASE_PREFIX}${topology}`;
}

/** THE staleness limit (docs/status-protocol.md, "Liveness"): 60 s + 3 × pollingInterval + 30 s. */
export function leaseDurationSeconds(pollingMs: number): number {
  return RENEW_EVERY_S + Math.ceil((3 * pollingMs) / 1000) + 30;
}

/** What a reader needs of a Lease; anything else in it is ignored. */
export interface LeaseView {
  metadata?: { name?: string; [k: string]: unknown };
  spec?: { holderIdentity?: string; renewTime?: string; leaseDurationSeconds?: number; [k: string]: unknown };
}

/** What the reader knows of the Lease: the object, none (404), or why it could not read it. */
export type LeaseRead =
  | { kind: 'found'; lease: LeaseView }
  | { kind: 'missing' }
  | { kind: 'unreadable'; message: string }
  /** This reader does not read the Lease (e.g. the CLI without permission to). */
  | { kind: 'unread' };

export type Liveness =
  | { state: 'live'; renewTime: string; holder?: string; limitS: number }
  | { state: 'stale'; renewTime: string; holder?: string; limitS: number; ageS: number }
  | { state: 'unknown'; why: string };

/**
 * THE ONE STALENESS RULE: the operator is live for a topology iff its Lease exists and
 * now ≤ renewTime + leaseDurationSeconds. A missing, unreadable or malformed Lease leaves liveness
 * unknown: reported, never acted on.
 */
export function livenessOf(read: LeaseRead, now: Date): Liveness {
  switch (read.kind) {
    case 'unread':
      return { state: 'unknown', why: 'the liveness Lease is not read' };
    case 'missing':
      return { state: 'unknown', why: 'the liveness Lease does not exist' };
    case 'unreadable':
      return { state: 'unknown', why: `the liveness Lease cannot be read: ${read.message}` };
    case 'found': {
      const spec = read.lease.spec ?? {};
      const renew = spec.renewTime === undefined ? NaN : Date.parse(spec.renewTime);
      const limitS = spec.leaseDurationSeconds;
      if (Number.isNaN(renew) || typeof limitS !== 'number' || !(limitS > 0))
        return { state: 'unknown', why: 'the liveness Lease has no renewTime or leaseDurationSeconds' };
      const holder = spec.holderIdentity !== undefined ? { holder: spec.holderIdentity } : {};
      const ageMs = now.getTime() - renew;
      if (ageMs <= limitS * 1000) return { state: 'live', renewTime: spec.renewTime!, ...holder, limitS };
      return {
        state: 'stale',
        renewTime: spec.renewTime!,
        ...holder,
        limitS,
        ageS: Math.floor(ageMs / 1000),
      };
    }
  }
}

/** When a live verdict turns stale by the clock alone (ms since the epoch); undefined otherwise. */
export function livenessExpiresAt(liveness: Liveness): number | undefined {
  if (liveness.state !== 'live') return undefined;
  return Date.parse(liveness.renewTime) + liveness.limitS * 1000;
}

/** A listed name the node-name grammar refuses: never dialled, reported with the problem. */
export interface InvalidPeer {
  readonly node: string;
  readonly problem: string;
}

/** A current list: every entry as published, and its names split by the node-name grammar. */
export interface CurrentList {
  /**
   * status.peers as the operator wrote it (the reader's own entry included), each flag an entry
   * leaves out taken from status.peerDefaults.
   */
  peers: readonly Peer[];
  /** The names that pass the grammar, each once (its first entry), in list order. */
  names: readonly string[];
  /** The others, each once, in list order. */
  invalid: readonly InvalidPeer[];
}

/**
 * What a status states (docs/status-protocol.md §3): `unknown` (no `lastResponse` or no `peers`
 * array — keep what you have), `refused` (this reader cannot take it as a whole: more peers than
 * it accepts, or a field it reads of the wrong type — keep what you have and report it), or a
 * current list, possibly empty (the operator's answer — disconnect who is not on it).
 */
export type StatusMeaning =
  | { kind: 'unknown'; why: string }
  | { kind: 'refused'; problem: string }
  | ({ kind: 'current' } & CurrentList);

export interface ReadLimits {
  /** The longest list accepted; a longer one is refused (default: no limit). */
  maxPeers?: number;
}

const STRING_FIELDS = ['nodeName', 'pod', 'uid'] as const;
/** The flags of an entry; status.peerDefaults holds the value of each one an entry leaves out. */
export const PEER_FLAGS = ['terminating', 'ready', 'serving'] as const;

/** Why status.peerDefaults cannot be read, if it cannot. */
function peerDefaultsProblem(d: unknown): string | undefined {
  if (d === undefined) return undefined;
  if (!isRecord(d)) return 'status.peerDefaults is not an object';
  for (const k of PEER_FLAGS)
    if (d[k] !== undefined && typeof d[k] !== 'boolean') return `status.peerDefaults.${k} is not a boolean`;
  return undefined;
}

/**
 * The entries with every flag they leave out taken from `defaults` (docs/status-protocol.md §2);
 * a flag neither gives stays absent: unknown. The same array when there is nothing to fill in.
 */
export function withPeerDefaults(peers: readonly Peer[], defaults: PeerDefaults | undefined): Peer[] {
  const fill = PEER_FLAGS.filter((k) => defaults?.[k] !== undefined);
  if (fill.length === 0) return peers as Peer[];
  return peers.map((p) => {
    if (fill.every((k) => p[k] !== undefined)) return p;
    const out = { ...p };
    for (const k of fill) out[k] ??= defaults![k];
    return out;
  });
}

/** Why an entry of status.peers cannot be read, if it cannot (the fields of §2 only). */
function peerProblem(p: unknown): string | undefined {
  if (!isRecord(p)) return 'a status.peers entry is not an object';
  if (typeof p.nodeName !== 'string') return 'a status.peers entry has no string nodeName';
  for (const k of STRING_FIELDS)
    if (p[k] !== undefined && typeof p[k] !== 'string') return `status.peers[].${k} is not a string`;
  for (const k of PEER_FLAGS)
    if (p[k] !== undefined && typeof p[k] !== 'boolean') return `status.peers[].${k} is not a boolean`;
  return undefined;
}

export function statusMeaning(
  status: ClusterTopologyStatus | undefined,
  limits: ReadLimits = {},
): StatusMeaning {
  if (status === undefined) return { kind: 'unknown', why: 'the ClusterTopology has no status yet' };
  const s = status as Record<string, unknown>;
  if (s.lastResponse !== undefined && !isRecord(s.lastResponse))
    return { kind: 'refused', problem: 'status.lastResponse is not an object' };
  if (s.peers !== undefined && !Array.isArray(s.peers))
    return { kind: 'refused', problem: 'status.peers is not an array' };
  if (s.observedGeneration !== undefined && !Number.isInteger(s.observedGeneration))
    return { kind: 'refused', problem: 'status.observedGeneration is not an integer' };
  const defaultsProblem = peerDefaultsProblem(s.peerDefaults);
  if (defaultsProblem !== undefined) return { kind: 'refused', problem: defaultsProblem };
  if (s.lastResponse === undefined) return { kind: 'unknown', why: 'the status has no lastResponse' };
  if (!Array.isArray(s.peers)) return { kind: 'unknown', why: 'the status has no peers array' };
  const peers = s.peers as unknown[];
  if (limits.maxPeers !== undefined && peers.length > limits.maxPeers)
    return {
      kind: 'refused',
      problem: `status.peers holds ${peers.length} entries, more than the ${limits.maxPeers} accepted`,
    };
  const names: string[] = [];
  const invalid: InvalidPeer[] = [];
  const seen = new Set<string>();
  for (const p of peers) {
    const problem = peerProblem(p);
    if (problem !== undefined) return { kind: 'refused', problem };
    const node = (p as Peer).nodeName;
    if (seen.has(node)) continue;
    seen.add(node);
    const check = checkNodeName(node);
    if (check.ok) names.push(node);
    else invalid.push({ node, problem: check.problem });
  }
  return {
    kind: 'current',
    peers: withPeerDefaults(peers as Peer[], s.peerDefaults as PeerDefaults | undefined),
    names,
    invalid,
  };
}

/**
 * The names to dial from a current list: every entry's name but the reader's own pod's (it never
 * dials itself, whatever name the operator computed for it: a wrong one is the self check's
 * business). Names the grammar refuses stay in: the round refuses them itself and says so.
 */
export function peerNodeNames(list: readonly Peer[], ownPod?: string): string[] {
  return list.filter((p) => p.pod !== ownPod).map((p) => p.nodeName);
}

/** The peer entry of one pod, if the status lists it (its flags filled in from status.peerDefaults when readable). */
export function peerOfPod(status: ClusterTopologyStatus | undefined, pod: string): Peer | undefined {
  const peer = Array.isArray(status?.peers) ? status.peers.find((p) => p.pod === pod) : undefined;
  if (!peer || peerDefaultsProblem(status?.peerDefaults) !== undefined) return peer;
  return withPeerDefaults([peer], status?.peerDefaults)[0];
}

/** The exclusions of one pod (it may have more than one). */
export function exclusionsOfPod(status: ClusterTopologyStatus | undefined, pod: string): ExcludedPod[] {
  return Array.isArray(status?.excluded) ? status.excluded.filter((e) => e.pod === pod) : [];
}

/**
 * A ClusterTopology as every reader holds it (the operator's cache, the agent, the CLI): the API
 * server's JSON, typed where it is the API's own; any other field is kept as it came.
 */
export type TopologyObject = KubeObject & {
  spec?: ClusterTopologySpec;
  status?: ClusterTopologyStatus;
};

/** What a reader has of the object: nothing yet, a failure, the object, or its absence. */
export type ObjectRead =
  | { kind: 'pending' }
  | { kind: 'failed'; failure: Failure }
  | { kind: 'read'; object: TopologyObject | undefined };

/**
 * What a reader has of one source it lists and watches (the topology, its Lease — one object each,
 * narrowed by name): nothing yet, a failure (of the last list, or of the watch since), or the
 * objects it holds.
 */
export type SourceRead =
  { kind: 'pending' } | { kind: 'failed'; failure: Failure } | { kind: 'read'; objects: readonly unknown[] };

export function objectReadOf(source: SourceRead): ObjectRead {
  if (source.kind !== 'read') return source;
  return { kind: 'read', object: source.objects[0] as TopologyObject | undefined };
}

/** A source's failure in one line: the HTTP status and reason when the server answered. */
export function describeReadFailure(f: Failure): string {
  return f.code ? `${f.code} ${f.reason}: ${f.message}` : f.message;
}

/** The Lease as the staleness rule takes it; no source: this reader does not read it. */
export function leaseReadOf(source: SourceRead | undefined): LeaseRead {
  if (source === undefined) return { kind: 'unread' };
  switch (source.kind) {
    case 'pending':
      return { kind: 'unreadable', message: 'not read yet' };
    case 'failed':
      return { kind: 'unreadable', message: describeReadFailure(source.failure) };
    case 'read':
      return source.objects[0] === undefined
        ? { kind: 'missing' }
        : { kind: 'found', lease: source.objects[0] as LeaseView };
  }
}

export type ReaderTrouble = 'NoStatusYet' | 'Forbidden' | 'ApiUnreachable' | 'ObjectGone' | 'StatusStale';

/**
 * Everything a reader may conclude, as one typed state. `act`: a current list from an operator
 * that is not stale — connect its names, disconnect who is not on it. Otherwise keep what you
 * have, and `trouble` says why (a refused status is NoStatusYet too: no status this reader can use
 * yet; `status` tells them apart). Liveness is reported whatever the list is: a stale Lease means
 * the status is not current; an unknown one is only reported. `object` is the object read, when
 * there is one (its spec and the rest of its status are for people and the self check).
 */
export type Reading = { liveness: Liveness; object?: TopologyObject } & (
  | { act: true; list: CurrentList }
  | { act: false; trouble: ReaderTrouble; detail?: string; status?: StatusMeaning }
);

export function readTopology(
  object: ObjectRead,
  lease: LeaseRead,
  now: Date,
  limits: ReadLimits = {},
): Reading {
  const liveness = livenessOf(lease, now);
  const keep = (
    trouble: ReaderTrouble,
    detail?: string,
    more: { object?: TopologyObject; status?: StatusMeaning } = {},
  ): Reading => ({
    liveness,
    ...more,
    act: false,
    trouble,
    ...(detail === undefined ? {} : { detail }),
  });
  switch (object.kind) {
    case 'pending':
      return keep('NoStatusYet', 'the first read is under way');
    case 'failed': {
      const f = object.failure;
      return keep(isForbidden(f) ? 'Forbidden' : 'ApiUnreachable', describeReadFailure(f));
    }
    case 'read': {
      const o = object.object;
      if (!o) return keep('ObjectGone');
      const status = statusMeaning(o.status, limits);
      switch (status.kind) {
        case 'unknown':
          return keep('NoStatusYet', undefined, { object: o, status });
        case 'refused':
          return keep('NoStatusYet', `the status is refused: ${status.problem}`, { object: o, status });
        case 'current': {
          if (liveness.state === 'stale')
            return keep(
              'StatusStale',
              `the operator last renewed its liveness Lease at ${liveness.renewTime}, ${liveness.ageS} s ago (limit ${liveness.limitS} s)`,
              { object: o, status },
            );
          const { kind: _kind, ...list } = status;
          return { liveness, object: o, act: true, list };
        }
      }
    }
  }
}
