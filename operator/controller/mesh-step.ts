import type { ClusterTopologyStatus } from '../api/types.generated.js';
import { aggregateMesh, MESHED } from '../mesh/aggregate.js';
import {
  meshEvents,
  planMeshWrite,
  publishedMesh,
  type MeshEvent,
  type PublishedMesh,
} from '../mesh/publish.js';
import type { MemberReportObject } from '../mesh/standing.js';
import { statusMeaning } from '../protocol/read.js';
import { shouldWrite } from '../protocol/publish.js';
import { conditionOf, setCondition } from './conditions.js';

/**
 * The mesh's part of one reconcile (docs/status-protocol.md §8.6): from the status the rest of the
 * plan computed, the status last written, the topology's member reports and the time, the status
 * with `mesh` and the `Meshed` condition as they should stand now — the new aggregate when its
 * write is due, else the written one — its Events, and when to look again (a held change, or the
 * next report to go stale). Pure.
 */

export interface MeshStepInput {
  topology: string;
  generation: number;
  /** The status the plan computed (its `mesh` and `Meshed` are replaced here). */
  status: ClusterTopologyStatus;
  /** The status last written (holds the mesh last written). */
  previous: ClusterTopologyStatus | undefined;
  /** The topology's reports; undefined while they are not known (not listed yet): the written mesh stays. */
  reports: readonly MemberReportObject[] | undefined;
  now: Date;
  /** When this process last wrote a changed mesh for the topology (ms); undefined: not since it started. */
  lastMeshWriteAt: number | undefined;
}

export interface MeshStep {
  status: ClusterTopologyStatus;
  events: MeshEvent[];
  /** The status carries a mesh different from the one written: note the time once it is written. */
  meshChanged: boolean;
  /** Reconcile again then (ms), for the mesh. */
  recheckAt?: number;
}

function writtenMesh(s: ClusterTopologyStatus | undefined): PublishedMesh {
  const c = conditionOf(s?.conditions, MESHED);
  return {
    ...(s?.mesh ? { mesh: s.mesh } : {}),
    ...(c ? { condition: { status: c.status, reason: c.reason as never, message: c.message } } : {}),
  };
}

/** `status` with `mesh` and the Meshed condition set to `m` (the condition's times kept by setCondition). */
function withMesh(
  status: ClusterTopologyStatus,
  m: PublishedMesh,
  written: ClusterTopologyStatus | undefined,
  now: Date,
  generation: number,
): ClusterTopologyStatus {
  const { mesh: _old, ...rest } = status;
  const base = status.conditions ?? [];
  let conditions = base.filter((c) => c.type !== MESHED);
  if (m.condition) {
    // The written condition, in its place, so order and lastTransitionTime move only when it flips.
    const before = conditionOf(written?.conditions, MESHED);
    const seeded = base.some((c) => c.type === MESHED)
      ? base.map((c) => (c.type === MESHED ? (before ?? c) : c))
      : before
        ? [...base, before]
        : base;
    conditions = setCondition(seeded, { type: MESHED, ...m.condition }, now, generation);
  }
  return {
    ...rest,
    ...(m.mesh ? { mesh: m.mesh } : {}),
    ...(conditions.length || status.conditions ? { conditions } : {}),
  };
}

export function meshStep(input: MeshStepInput): MeshStep {
  const { previous, now, generation } = input;
  const written = writtenMesh(previous);
  const keep = withMesh(input.status, written, previous, now, generation);
  if (input.reports === undefined) return { status: keep, events: [], meshChanged: false };
  // Read as a reader reads it only when there are reports to hold it against (~5 ms at 5,000 peers).
  const list = statusMeaning(input.status);
  if (list.kind !== 'current') return { status: keep, events: [], meshChanged: false };
  const anyReport = input.reports.some((r) => r.spec?.topology === input.topology);
  const aggregate = anyReport
    ? aggregateMesh({
        topology: input.topology,
        peers: list.peers,
        reports: input.reports,
        now: now.getTime(),
      })
    : undefined;
  const next = publishedMesh(aggregate, anyReport);
  const decision = planMeshWrite(
    written,
    next,
    input.lastMeshWriteAt,
    now.getTime(),
    shouldWrite(previous, keep),
  );
  const stale = aggregate?.nextChangeAt;
  switch (decision.action) {
    case 'none':
      return { status: keep, events: [], meshChanged: false, ...(stale ? { recheckAt: stale } : {}) };
    case 'hold':
      return {
        status: keep,
        events: [],
        meshChanged: false,
        recheckAt: stale ? Math.min(stale, decision.at) : decision.at,
      };
    case 'publish':
      return {
        status: withMesh(input.status, next, previous, now, generation),
        events: meshEvents(written, next),
        meshChanged: true,
        ...(stale ? { recheckAt: stale } : {}),
      };
  }
}
