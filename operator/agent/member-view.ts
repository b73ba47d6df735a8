import type { Peer, ReaderTroubleReport } from '../api/types.generated.js';
import { memberView, rfc3339, type LinkReason, type MemberView } from '../protocol/member-report.js';

/**
 * What the agent knows of its links, for its member report (docs/status-protocol.md §8.2), as pure
 * functions: after every round, which listed nodes it is connected to and, for the others, the
 * last reason. The erlang connector sees the node's connections (`nodes()`, observed); exec and
 * file only know what they called or wrote (what the round holds, not observed).
 */

export interface Links {
  /** The nodes it is connected to (observed), or that it told the application and holds. */
  readonly connected: readonly string[];
  /** The last reason for a node it is not connected to. */
  readonly reasons: ReadonlyMap<string, LinkReason>;
  /** Listed names it refuses (never dialled). */
  readonly invalid: readonly string[];
}

export const NO_LINKS: Links = { connected: [], reasons: new Map(), invalid: [] };

/** A connector's failure class (connectors/types.ts) as a link's reason (§8.1's words). */
export function linkReason(f: string): LinkReason {
  switch (f) {
    case 'InvalidNodeName':
      return 'Invalid';
    case 'Timeout':
      return 'Timeout';
    default:
      // Refused, and the failures that say the attempt did not get through (the local node
      // unreachable, an error): the link is down because the attempt failed.
      return 'Refused';
  }
}

/** A connect's answer as far as a link cares (connectors/types.ts's ConnectResult fits). */
export type ConnectAnswer =
  | { readonly ok: true; readonly node: string }
  | { readonly ok: false; readonly node: string; readonly failure: string };

export interface RoundSeen {
  readonly results: { readonly connect: readonly ConnectAnswer[] };
  /** What the round left held (the round loop's remembered list). */
  readonly held: readonly string[];
  /** The names the round refused. */
  readonly invalid: readonly string[];
  /** The connections seen after the round (nodes()); undefined when the connector cannot see them. */
  readonly observed?: readonly string[];
}

/**
 * The links after a round. A failed connect gives its reason; a success clears it; a node that
 * was connected and is no longer, without a failure of its own this round, went down (NodeDown).
 */
export function linksAfterRound(before: Links, round: RoundSeen): Links {
  const connected = [...(round.observed ?? round.held)];
  const now = new Set(connected);
  const reasons = new Map(before.reasons);
  const failedNow = new Set<string>();
  for (const r of round.results.connect) {
    if (r.ok) reasons.delete(r.node);
    else {
      reasons.set(r.node, linkReason(r.failure));
      failedNow.add(r.node);
    }
  }
  for (const n of before.connected) if (!now.has(n) && !failedNow.has(n)) reasons.set(n, 'NodeDown');
  for (const n of connected) reasons.delete(n);
  return { connected, reasons, invalid: [...round.invalid] };
}

/**
 * The trouble as reported: its cause, the message and the time it began. A later reading of the
 * same cause keeps them (a message that counts seconds would make every view new).
 */
export function reportedTrouble(
  before: ReaderTroubleReport | undefined,
  trouble: { cause: string; message: string } | undefined,
  now: number,
): ReaderTroubleReport | undefined {
  if (!trouble) return undefined;
  if (before?.cause === trouble.cause) return before;
  return { cause: trouble.cause, message: trouble.message, since: rfc3339(new Date(now)) };
}

export interface AgentViewInput {
  /** The local node's name (undefined: not known yet, no view). */
  readonly node: string | undefined;
  readonly pod: string;
  /** The list last acted on, and the resourceVersion of the object it came from. */
  readonly list?: { readonly peers: readonly Peer[]; readonly resourceVersion?: string };
  readonly links: Links;
  readonly observed: boolean;
  readonly trouble?: ReaderTroubleReport;
}

/** The agent's view, and its pod's uid from its own entry in the list (the report's owner). */
export function agentView(v: AgentViewInput): { view: MemberView; podUid: string | undefined } | undefined {
  if (v.node === undefined) return undefined;
  const view = memberView({
    node: v.node,
    pod: v.pod,
    ...(v.list
      ? {
          peers: v.list.peers,
          ...(v.list.resourceVersion !== undefined
            ? { topologyResourceVersion: v.list.resourceVersion }
            : {}),
        }
      : {}),
    connected: v.links.connected,
    reasons: v.links.reasons,
    invalid: v.links.invalid,
    observed: v.observed,
    ...(v.trouble ? { trouble: v.trouble } : {}),
  });
  return { view, podUid: v.list?.peers.find((p) => p.pod === v.pod)?.uid };
}
