import type { ClusterTopologyStatus } from '../api/types.generated.js';
import type { Admission } from './admission.js';
import { eventsFor, type PlannedEvent } from './announce.js';
import { mergePatch } from '../api/json.js';
import { ownedStatus, shouldWrite } from '../protocol/publish.js';
import type { PollView } from './last-response.js';
import type { PodSummary } from './pod-summary.js';
import { computeStatus } from './status.js';
import { statusPatchOps, type JsonPatchOp } from './status-patch.js';
import { meshStep } from './mesh-step.js';
import type { MemberReportObject } from '../mesh/standing.js';

/**
 * One reconcile, decided: a pure function from what the caches hold, the previous status and
 * the time to what must happen — the status to publish (as a merge patch of the previous one),
 * the Events to record and the gauges to set once the write has succeeded. `apply.ts` does it.
 */

export interface ReconcileInput {
  /** metadata.generation of the topology. */
  generation: number;
  /** The topology's own namespace. */
  namespace: string;
  /** The status this process last wrote, else the one the object carries: what it computes from. */
  previous: ClusterTopologyStatus | undefined;
  /**
   * What the object holds now (`status` undefined: no status at all), when that may not be
   * `previous` (someone else wrote it): the write decision and the patch start from it, so an owned
   * field changed by hand is put back. Absent: the object holds `previous`.
   */
  observed?: { status: ClusterTopologyStatus | undefined };
  /** The status this process planned after `previous` and could not write (the write failed). */
  unwritten?: ClusterTopologyStatus;
  admission: Admission;
  /** The last list of the admitted source's pods; undefined: not listed yet (or refused). */
  poll: PollView | undefined;
  /** The pods the source holds now. */
  pods: readonly PodSummary[];
  /** Node labels by Node name; undefined for a Node that is not known. */
  nodeLabels: (node: string) => Readonly<Record<string, string>> | undefined;
  now: Date;
  /** Above this many peers each carries the reader fields only (default LIGHT_PEERS_ABOVE). */
  lightPeersAbove?: number;
  /** The members' reports, for status.mesh (mesh-step.ts); absent: the mesh is left as written. */
  mesh?: {
    topology: string;
    /** undefined while the reports are not known yet. */
    reports: readonly MemberReportObject[] | undefined;
    /** When this process last wrote a changed mesh for the topology (ms). */
    lastMeshWriteAt: number | undefined;
  };
}

export interface StatusWrite {
  status: ClusterTopologyStatus;
  /** RFC 7386 merge patch from what the object holds to `status` (owned fields only). */
  patch: unknown;
  /** The same as RFC 6902 ops on `/status`, element by element in the lists; undefined without a previous status. */
  ops?: JsonPatchOp[];
  events: PlannedEvent[];
  gauges: { peers: number; excluded: number };
}

/** `write` undefined: the published status is current, nothing to do. */
export interface ReconcilePlan {
  write?: StatusWrite;
  /** The write carries a changed mesh (its time starts the next 15 s). */
  meshChanged?: boolean;
  /** Reconcile again then for the mesh (ms): a held change, or a report going stale. */
  meshRecheckAt?: number;
}

export function planReconcile(input: ReconcileInput): ReconcilePlan {
  const { admission, previous, now } = input;
  const computed = computeStatus({
    generation: input.generation,
    previous,
    ...(input.unwritten ? { unwritten: input.unwritten } : {}),
    now,
    spec: admission.spec,
    namespace: admission.ok ? admission.target : (admission.spec?.namespace ?? input.namespace),
    ...(admission.ok ? {} : { refusal: admission.refusal }),
    poll: admission.ok ? input.poll : undefined,
    pods: admission.ok ? input.pods : [],
    nodeLabels: input.nodeLabels,
    ...(input.lightPeersAbove !== undefined ? { lightPeersAbove: input.lightPeersAbove } : {}),
  });
  const mesh = input.mesh
    ? meshStep({ ...input.mesh, generation: input.generation, status: computed, previous, now })
    : undefined;
  const status = mesh?.status ?? computed;
  const recheck = mesh?.recheckAt !== undefined ? { meshRecheckAt: mesh.recheckAt } : {};
  const observed = input.observed ? input.observed.status : previous;
  // Only when the content differs from what the object holds (docs/status-protocol.md): liveness
  // is the Lease's business. A field the operator does not own is neither compared nor patched.
  if (!shouldWrite(observed, status)) return recheck;
  return {
    write: {
      status,
      patch: mergePatch(ownedStatus(observed) ?? {}, status),
      ...withOps(statusPatchOps(ownedStatus(observed), status)),
      events: [...eventsFor(previous, status), ...(mesh?.events ?? [])],
      gauges: { peers: status.peerCount ?? 0, excluded: status.excludedCount ?? 0 },
    },
    ...(mesh?.meshChanged ? { meshChanged: true } : {}),
    ...recheck,
  };
}

const withOps = (ops: JsonPatchOp[] | undefined) => (ops ? { ops } : {});
