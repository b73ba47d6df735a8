import { checkNodeName } from '../naming/node-name.js';
import type { InvalidPeer } from '../protocol/read.js';

/**
 * The agent's round logic, as pure functions.
 *
 * A round takes the list the agent remembers (the nodes it connected itself in earlier rounds),
 * the peer list the operator published in the ClusterTopology status, and the local node's own
 * name:
 *
 * 1. disconnect the nodes that are remembered and are not in the new list;
 * 2. connect to every node in the new list, except the local node itself;
 * 3. a node that fails to connect is not remembered, so the next round connects it again.
 *
 * Only remembered nodes are ever disconnected, so the agent never disconnects a node that
 * somebody else (the application, an operator at a shell) connected. A disconnect that fails
 * keeps its node remembered, so the next round tries again (libcluster does the same; the specification
 * does not say).
 *
 * Names that fail the node-name grammar are never handed to a connector: the plan lists them
 * under `invalid` with the reason.
 *
 * A node disconnected because the list dropped it is watched for DEPARTED_WATCH_MS after that
 * (`departed`): a node that still runs is connected again by OTP's `global` (connect_all) as long
 * as any peer still holds it, so a round that finds it connected again while it is still not
 * listed disconnects it again (`again`). The connector says what is connected (`connected()`,
 * only where it is what the runtime sees).
 */

/** How long a node disconnected for leaving the list is disconnected again if it comes back. */
export const DEPARTED_WATCH_MS = 30_000;

export interface RoundPlan {
  /** What the agent remembered when the round was planned (deduplicated, in the given order). */
  readonly remembered: readonly string[];
  /**
   * Remembered nodes that are no longer wanted, in remembered order, then `again`: to disconnect.
   */
  readonly disconnect: readonly string[];
  /** Departed nodes found connected again while still not listed: disconnected again. */
  readonly again: readonly string[];
  /** Every wanted node except the local one: to connect, in the order of the desired list. */
  readonly connect: readonly string[];
  /** Desired entries refused by the node-name grammar; never connected. */
  readonly invalid: readonly InvalidPeer[];
  /** True when the desired list named the local node (it is left out of `connect`). */
  readonly selfListed: boolean;
}

/** What happened to one node of a plan. `ok: false` includes "never attempted". */
export interface NodeResult {
  readonly node: string;
  readonly ok: boolean;
}

export interface RoundResults {
  readonly disconnect: readonly NodeResult[];
  readonly connect: readonly NodeResult[];
}

export interface RoundOutcome {
  /** The list to remember for the next round. */
  readonly remembered: readonly string[];
  readonly connected: readonly string[];
  readonly failedConnects: readonly string[];
  readonly disconnected: readonly string[];
  /** Disconnects that failed; these nodes stay remembered so the next round retries them. */
  readonly failedDisconnects: readonly string[];
}

function unique(xs: readonly string[]): string[] {
  return [...new Set(xs)];
}

/** What a round knows of the nodes it disconnected earlier: see `departed` in the module doc. */
export interface DepartedCheck {
  /** Nodes disconnected for leaving the list, still watched. */
  readonly departed: readonly string[];
  /** The local node's connections, asked at the round's start. */
  readonly connected: readonly string[];
}

/** Plans one round. Pure: the same inputs give the same plan. */
export function planRound(
  remembered: readonly string[],
  desired: readonly string[],
  self: string,
  check?: DepartedCheck,
): RoundPlan {
  const rememberedList = unique(remembered);
  const invalid: InvalidPeer[] = [];
  const wanted: string[] = [];
  const seenInvalid = new Set<string>();
  let selfListed = false;
  for (const node of unique(desired)) {
    if (node === self) {
      selfListed = true;
      continue;
    }
    const check = checkNodeName(node);
    if (check.ok) wanted.push(node);
    else if (!seenInvalid.has(node)) {
      seenInvalid.add(node);
      invalid.push({ node, problem: check.problem });
    }
  }
  // A remembered node is kept while the status lists it, whether or not its name is still
  // valid — it can't become invalid, it passed the grammar when it was connected. The local
  // node is never remembered (it is never connected), but a caller's remembered list is not
  // trusted on that: self is never disconnected either.
  const desiredSet = new Set(desired);
  const leaving = rememberedList.filter((n) => !desiredSet.has(n) && n !== self);
  const rememberedSet = new Set(rememberedList);
  const connectedNow = new Set(check?.connected ?? []);
  const again = unique(check?.departed ?? []).filter(
    (n) => connectedNow.has(n) && !desiredSet.has(n) && !rememberedSet.has(n) && n !== self,
  );
  return {
    remembered: rememberedList,
    disconnect: [...leaving, ...again],
    again,
    connect: wanted,
    invalid,
    selfListed,
  };
}

/**
 * The departed nodes to watch after a round, each with when its watch ends (ms): those it
 * disconnected (again or for the first time) from `now`, the others as they were, until their
 * time is up or the list names them again.
 */
export function nextDeparted(
  before: ReadonlyMap<string, number>,
  desired: readonly string[],
  disconnected: readonly string[],
  now: number,
): Map<string, number> {
  const listed = new Set(desired);
  const after = new Map<string, number>();
  for (const [n, until] of before) if (until > now && !listed.has(n)) after.set(n, until);
  for (const n of disconnected) if (!listed.has(n)) after.set(n, now + DEPARTED_WATCH_MS);
  return after;
}

/**
 * Folds the connectors' answers into the list to remember. A node of the plan with no result,
 * or with several results of which one failed, counts as failed.
 */
export function completeRound(plan: RoundPlan, results: RoundResults): RoundOutcome {
  const succeeded = (list: readonly NodeResult[]): Set<string> => {
    const ok = new Set<string>();
    const failed = new Set<string>();
    for (const r of list) (r.ok ? ok : failed).add(r.node);
    for (const f of failed) ok.delete(f);
    return ok;
  };
  const connectOk = succeeded(results.connect);
  const disconnectOk = succeeded(results.disconnect);

  const connected = plan.connect.filter((n) => connectOk.has(n));
  const failedConnects = plan.connect.filter((n) => !connectOk.has(n));
  const disconnected = plan.disconnect.filter((n) => disconnectOk.has(n));
  const failedDisconnects = plan.disconnect.filter((n) => !disconnectOk.has(n));
  // `connect` and `disconnect` are disjoint (a node is disconnected only when it is not wanted).
  const remembered = [...connected, ...failedDisconnects];
  return { remembered, connected, failedConnects, disconnected, failedDisconnects };
}

// ---------------------------------------------------------------------------------------------
// The agent never disconnects because of its own trouble.

/** Why the agent has no usable status this time; none of these is a reason to disconnect. */
export const TROUBLE_CAUSES = [
  'ApiUnreachable',
  'Forbidden',
  'ObjectGone',
  'NoStatusYet',
  'StatusStale',
] as const;
export type TroubleCause = (typeof TROUBLE_CAUSES)[number];

export type AgentInput =
  /** The operator's status was read: its peer list is the truth, even when it is empty. */
  | { readonly kind: 'status'; readonly peers: readonly string[] }
  /** The agent could not get a current status. */
  | { readonly kind: 'trouble'; readonly cause: TroubleCause; readonly detail?: string };

export type AgentAction =
  | { readonly action: 'round'; readonly desired: readonly string[] }
  | { readonly action: 'keep'; readonly cause: TroubleCause; readonly message: string };

const TROUBLE_MESSAGES: Record<TroubleCause, string> = {
  ApiUnreachable: 'the Kubernetes API cannot be reached',
  Forbidden: 'the Kubernetes API refused to show the ClusterTopology (401/403)',
  ObjectGone: 'the ClusterTopology object does not exist',
  NoStatusYet: 'the ClusterTopology has no status yet',
  StatusStale: 'the ClusterTopology status has not been refreshed by the operator for too long',
};

/**
 * Decides what the agent does with what it read. Peers leave only when a real status says so —
 * an empty peer list in a status (the operator's `onForbidden: Disconnect` after a 403, or simply
 * no pods) does disconnect everyone; the agent's own trouble keeps every connection it has.
 */
export function decideAgentAction(input: AgentInput): AgentAction {
  switch (input.kind) {
    case 'status':
      return { action: 'round', desired: [...input.peers] };
    case 'trouble': {
      const base = TROUBLE_MESSAGES[input.cause];
      const message = `keeping the current connections: ${base}${input.detail ? ` (${input.detail})` : ''}`;
      return { action: 'keep', cause: input.cause, message };
    }
  }
}
