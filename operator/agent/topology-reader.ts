import type { Kube, KubeObject } from '../kube/client.js';
import { listWatch } from '../kube/list-watch.js';
import { topologiesPath } from '../kube/paths.js';
import { Reflector } from '../kube/reflector.js';
import type { ReadState, TopologyView } from './observe.js';

/**
 * Reads one ClusterTopology: a list and a watch narrowed to it by name (a fieldSelector, which
 * is also what lets RBAC restrict an agent to this one object with `resourceNames`). It is the
 * operator's reflector, so it resumes, re-lists and never stops silently.
 */
export class TopologyReader {
  private readonly reflector: Reflector<KubeObject>;

  constructor(
    kube: Kube,
    private readonly namespace: string,
    private readonly name: string,
    onChange: () => void,
    onRestart?: (why: string) => void,
  ) {
    this.reflector = new Reflector<KubeObject>({
      name: `clustertopology ${namespace}/${name}`,
      ...listWatch(kube, topologiesPath(namespace), { query: { fieldSelector: `metadata.name=${name}` } }),
      resyncMs: 30_000,
      onChange,
      onPoll: onChange,
      onRestart,
    });
  }

  start(): void {
    this.reflector.start();
  }

  stop(): void {
    this.reflector.stop();
  }

  /** What the agent knows now: still waiting, the last read failed, or the object (or its absence). */
  state(): ReadState {
    const poll = this.reflector.lastPoll;
    if (!poll) return { kind: 'pending' };
    if (!poll.ok) return { kind: 'failed', failure: poll.failure };
    return {
      kind: 'read',
      object: this.reflector.get(this.namespace, this.name) as unknown as TopologyView | undefined,
    };
  }
}
