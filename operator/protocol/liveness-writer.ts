import { ApiError, type Kube } from '../kube/client.js';
import { leasesPath } from '../kube/paths.js';
import { leaseNameFor } from './read.js';
import { leaseObject, leaseSpec, renewDue, type RenewState, type TopologyRef } from './publish.js';

/**
 * Renews each topology's liveness Lease after its successful polls (docs/status-protocol.md):
 * a merge patch of the spec, or a create when the Lease does not exist yet. A failure is logged
 * and retried on the next successful poll; it never touches the topology's status.
 */

export interface LivenessWriterOptions {
  holder: string;
  onResult?: (result: 'ok' | 'error', error?: unknown) => void;
  now?: () => number;
}

export class LivenessWriter {
  private readonly state = new Map<string, RenewState & { busy?: boolean }>();
  private readonly now: () => number;

  constructor(
    private readonly kube: Kube,
    private readonly opts: LivenessWriterOptions,
  ) {
    this.now = opts.now ?? Date.now;
  }

  /** One poll's outcome for a topology. Resolves once a due renewal was written (or failed). */
  async polled(topology: TopologyRef, ok: boolean, at: Date, pollingMs: number): Promise<void> {
    const key = `${topology.namespace}/${topology.name}`;
    const s = this.state.get(key) ?? {};
    this.state.set(key, s);
    if (!ok) {
      s.failedSince = true;
      return;
    }
    if (s.busy || !renewDue(s, ok, this.now())) return;
    s.busy = true;
    try {
      await this.renew(topology, at, pollingMs);
      s.renewedAt = this.now();
      s.failedSince = false;
      this.opts.onResult?.('ok');
    } catch (e) {
      this.opts.onResult?.('error', e);
    } finally {
      s.busy = false;
    }
  }

  /** The topology is gone or no longer served here: its Lease goes with it (ownerReference). */
  forget(namespace: string, name: string): void {
    this.state.delete(`${namespace}/${name}`);
  }

  private async renew(topology: TopologyRef, at: Date, pollingMs: number): Promise<void> {
    const path = leasesPath(topology.namespace, leaseNameFor(topology.name));
    const patch = () =>
      this.kube.request('PATCH', path, {
        body: { spec: leaseSpec(this.opts.holder, at, pollingMs) },
        contentType: 'application/merge-patch+json',
        ignoreBody: true,
      });
    try {
      await patch();
    } catch (e) {
      if (!(e instanceof ApiError && e.code === 404)) throw e;
      try {
        await this.kube.request('POST', leasesPath(topology.namespace), {
          body: leaseObject(topology, this.opts.holder, at, pollingMs),
          ignoreBody: true,
        });
      } catch (c) {
        // Created meanwhile (another replica, a retry): renew that one.
        if (c instanceof ApiError && c.code === 409) await patch();
        else throw c;
      }
    }
  }
}
