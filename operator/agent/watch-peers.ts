import { connect, type Kube } from '../kube/client.js';
import { agentInputFrom, pollingMsOf } from './observe.js';
import { decideAgentAction, type TroubleCause } from './round.js';
import { TopologyReader } from './topology-reader.js';

/**
 * For Node.js applications that form their own cluster: calls `onChange(peers)` with the peer
 * node names of one ClusterTopology whenever they change — with the agent's semantics: a list
 * from a current status only (an empty one included), never an empty list because the API is
 * unreachable, forbidden, the object is gone or the operator's liveness Lease is stale
 * (`onTrouble` hears those; docs/status-protocol.md). It re-checks every pollingInterval, so a
 * stale Lease is noticed even when nothing changes. Reading the Lease needs get/list/watch on it;
 * without, liveness is unknown and the peers are used as they are.
 */
export interface WatchPeersOptions {
  namespace: string;
  name: string;
  kubeconfig?: string;
  onTrouble?: (cause: TroubleCause, message: string) => void;
}

export interface PeerWatch {
  /** The last list handed to onChange (undefined before the first). */
  readonly peers: readonly string[] | undefined;
  stop(): void;
}

export function watchPeers(
  opts: WatchPeersOptions,
  onChange: (peers: readonly string[]) => void,
  kube: Kube = connect({ kubeconfig: opts.kubeconfig }),
): PeerWatch {
  let current: readonly string[] | undefined;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const check = () => {
    if (stopped) return;
    const action = decideAgentAction(
      agentInputFrom(reader.state(), new Date(), undefined, reader.leaseState()),
    );
    if (action.action === 'keep') return opts.onTrouble?.(action.cause, action.message);
    const next = [...action.desired].sort();
    if (current && current.length === next.length && current.every((p, i) => p === next[i])) return;
    current = next;
    onChange(next);
  };
  const reader = new TopologyReader(kube, opts.namespace, opts.name, check);
  const tick = () => {
    const read = reader.state();
    timer = setTimeout(
      () => {
        check();
        if (!stopped) tick();
      },
      pollingMsOf(read.kind === 'read' ? read.object : undefined),
    );
    timer.unref?.();
  };
  reader.start();
  tick();
  return {
    get peers() {
      return current;
    },
    stop() {
      stopped = true;
      clearTimeout(timer);
      reader.stop();
    },
  };
}
