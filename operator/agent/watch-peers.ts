import type { Peer, ReaderTroubleReport } from '../api/types.generated.js';
import { connect, type Kube } from '../kube/client.js';
import type { LinkReason } from '../protocol/member-report.js';
import { MemberReportWriter } from '../protocol/member-report-writer.js';
import type { Reading } from '../protocol/read.js';
import { agentView, reportedTrouble } from './member-view.js';
import { TopologySubscription } from '../protocol/subscription.js';
import { agentInputFrom, pollingMsOf } from './observe.js';
import { decideAgentAction, type TroubleCause } from './round.js';

/**
 * For Node.js applications that form their own cluster: calls `onChange(peers)` with the peer
 * node names of one ClusterTopology whenever they change — with the agent's semantics: a list
 * from a current status only (an empty one included), never an empty list because the API is
 * unreachable, forbidden, the object is gone or the operator's liveness Lease is stale
 * (`onTrouble` hears those; docs/status-protocol.md). It follows the topology through the status
 * protocol's subscription (`protocol/subscription.ts`), which looks again when the Lease expires,
 * and re-checks every pollingInterval, so a stale Lease is noticed even when nothing changes. Reading the Lease needs
 * get/list/watch on it; without, liveness is unknown and the peers are used as they are.
 */
export interface WatchPeersOptions {
  namespace: string;
  name: string;
  kubeconfig?: string;
  onTrouble?: (cause: TroubleCause, message: string) => void;
  /**
   * The peers with their member state, from the same current status as onChange's list, called
   * whenever a peer or its state changes. The state is the policy the operator applied
   * (spec.membership): use it, do not re-decide membership from it. `ready`/`serving` are
   * undefined (unknown) in a status written before the operator published them.
   */
  onMembers?: (members: readonly PeerMember[]) => void;
  /**
   * Opt in to writing this member's report (ClusterTopologyMember, docs/status-protocol.md §8),
   * so that the topology's MESH counts it: tell the watch what you are connected to with
   * `connections()`. Off by default. Needs create/patch on clustertopologymembers; a refusal is
   * said once (`onProblem`) and changes nothing else.
   */
  report?: WatchPeersReport;
}

export interface WatchPeersReport {
  /** This process's pod (its own entry in the list is itself, not a peer). */
  pod: string;
  /** The node name this process runs as (what its peers dial). */
  node: string;
  /** Its pod's uid. Default: the uid of its own entry in the list (the report waits until listed). */
  podUid?: string;
  /** false when the connections you give are what you asked for rather than what you see. Default true. */
  observed?: boolean;
  /** Default `watch-peers`. */
  fieldManager?: string;
  /** Writing the report failed or works again (said once each). Default: process.emitWarning. */
  onProblem?: (message: string) => void;
}

/** One peer and its state in the EndpointSlice vocabulary. */
export type PeerMember = Pick<Peer, 'nodeName' | 'pod' | 'uid' | 'ready' | 'serving' | 'terminating'>;

export interface PeerWatch {
  /** The last list handed to onChange (undefined before the first). */
  readonly peers: readonly string[] | undefined;
  /** The last members handed to onMembers (undefined before the first current status). */
  readonly members: readonly PeerMember[] | undefined;
  /**
   * With `report`: the node names you are connected to now, and for listed ones you are not,
   * the last reason (default NotTried). Call it whenever they change.
   */
  connections(connected: Iterable<string>, reasons?: ReadonlyMap<string, LinkReason>): void;
  stop(): void;
}

function membersOf(peers: readonly Peer[]): PeerMember[] {
  return peers
    .map((p) => ({
      nodeName: p.nodeName,
      pod: p.pod,
      uid: p.uid,
      ...(typeof p.ready === 'boolean' ? { ready: p.ready } : {}),
      ...(typeof p.serving === 'boolean' ? { serving: p.serving } : {}),
      terminating: p.terminating,
    }))
    .sort((a, b) => (a.nodeName < b.nodeName ? -1 : a.nodeName > b.nodeName ? 1 : 0));
}

export function watchPeers(
  opts: WatchPeersOptions,
  onChange: (peers: readonly string[]) => void,
  kube: Kube = connect({ kubeconfig: opts.kubeconfig }),
): PeerWatch {
  let current: readonly string[] | undefined;
  let members: readonly PeerMember[] | undefined;
  let membersKey = '';
  const report = opts.report;
  const writer = report
    ? new MemberReportWriter({
        kube,
        namespace: opts.namespace,
        topology: opts.name,
        fieldManager: report.fieldManager ?? 'watch-peers',
        say: (_level, message, meta) =>
          (report.onProblem ?? ((m) => process.emitWarning(m, 'ClusterTopologyWarning')))(
            `${message} (${JSON.stringify(meta)})`,
          ),
      })
    : undefined;
  let list: { peers: readonly Peer[]; resourceVersion?: string } | undefined;
  let trouble: ReaderTroubleReport | undefined;
  let links = {
    connected: [] as string[],
    reasons: new Map<string, LinkReason>() as ReadonlyMap<string, LinkReason>,
  };
  const offer = () => {
    if (!writer || !report) return;
    const v = agentView({
      node: report.node,
      pod: report.pod,
      ...(list ? { list } : {}),
      links: { ...links, invalid: [] },
      observed: report.observed ?? true,
      ...(trouble ? { trouble } : {}),
    });
    if (v) writer.offer({ name: report.pod, uid: report.podUid ?? v.podUid }, v.view);
  };
  const check = (reading: Reading) => {
    const action = decideAgentAction(agentInputFrom(reading));
    trouble = reportedTrouble(
      trouble,
      action.action === 'keep' ? { cause: action.cause, message: action.message } : undefined,
      Date.now(),
    );
    if (reading.act) {
      const rv = reading.object?.metadata?.resourceVersion;
      list = { peers: reading.list.peers, ...(rv !== undefined ? { resourceVersion: rv } : {}) };
    }
    offer();
    if (action.action === 'keep' || !reading.act) {
      if (action.action === 'keep') opts.onTrouble?.(action.cause, action.message);
      return;
    }
    const nextMembers = membersOf(reading.list.peers);
    const key = JSON.stringify(nextMembers);
    if (members === undefined || key !== membersKey) {
      members = nextMembers;
      membersKey = key;
      opts.onMembers?.(nextMembers);
    }
    const next = [...action.desired].sort();
    if (current && current.length === next.length && current.every((p, i) => p === next[i])) return;
    current = next;
    onChange(next);
  };
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const subscription = new TopologySubscription(kube, {
    namespace: opts.namespace,
    name: opts.name,
    onReading: (r) => !stopped && check(r),
  });
  // Trouble is told again every pollingInterval while it lasts, not only when it changes.
  const tick = () => {
    timer = setTimeout(() => {
      if (stopped) return;
      check(subscription.reading());
      tick();
    }, pollingMsOf(subscription.reading().object));
    timer.unref?.();
  };
  subscription.start();
  tick();
  return {
    get peers() {
      return current;
    },
    get members() {
      return members;
    },
    connections(connected, reasons = new Map()) {
      links = { connected: [...connected], reasons };
      offer();
    },
    stop() {
      stopped = true;
      writer?.stop();
      clearTimeout(timer);
      subscription.stop();
    },
  };
}
