import type { MeshStatus } from '../api/types.generated.js';
import { deepEqual } from '../api/json.js';
import { MESHED, type MeshAggregate, type MeshedCondition } from './aggregate.js';

/**
 * When the operator writes the mesh aggregate into a ClusterTopology's status, and which Events
 * go with it (docs/status-protocol.md §8.6). Every write of the status reaches every reader, and
 * during a rollout reports change often, so the aggregate is written only when it changed and at
 * most once per 15 s per topology — except that a status write that happens anyway (the peers
 * changed) carries the current aggregate for free. Pure: the controller keeps the time of the last
 * mesh write and asks.
 */

export const MESH_MIN_INTERVAL_MS = 15_000;

/** What the status holds of the mesh: the block and the Meshed condition (absent: no reports at all). */
export interface PublishedMesh {
  mesh?: MeshStatus;
  condition?: Pick<MeshedCondition, 'status' | 'reason' | 'message'>;
}

export type MeshDecision =
  /** Put `next` in the status now. */
  | { action: 'publish'; next: PublishedMesh }
  /** Keep what the status holds; decide again at `at` (the aggregate changed, its slot is not yet). */
  | { action: 'hold'; at: number }
  /** The status already holds the aggregate. */
  | { action: 'none' };

/**
 * What the status should hold: nothing while no member of the topology has ever reported (a
 * topology whose readers do not report shows no MESH at all), else the aggregate.
 */
export function publishedMesh(aggregate: MeshAggregate | undefined, anyReport: boolean): PublishedMesh {
  if (!aggregate || !anyReport) return {};
  const { status, reason, message } = aggregate.condition;
  return { mesh: aggregate.mesh, condition: { status, reason, message } };
}

export function planMeshWrite(
  written: PublishedMesh,
  next: PublishedMesh,
  lastWriteAt: number | undefined,
  now: number,
  /** The status is written now anyway (its other content changed). */
  writingAnyway: boolean,
): MeshDecision {
  if (deepEqual(written, next)) return { action: 'none' };
  const earliest = lastWriteAt === undefined ? now : lastWriteAt + MESH_MIN_INTERVAL_MS;
  if (writingAnyway || now >= earliest) return { action: 'publish', next };
  return { action: 'hold', at: earliest };
}

export interface MeshEvent {
  type: 'Normal' | 'Warning';
  reason: 'SelfCheckFailed' | 'Meshed' | 'NotMeshed' | 'MeshUnknown';
  message: string;
}

/**
 * The Events of a mesh write: one per member newly failing its self check (a pod, or the name it
 * runs as, not in the last written list), and one when `Meshed` flips.
 */
export function meshEvents(written: PublishedMesh, next: PublishedMesh): MeshEvent[] {
  const events: MeshEvent[] = [];
  const before = new Set((written.mesh?.selfCheckFailures ?? []).map((f) => `${f.pod}\n${f.actual}`));
  for (const f of next.mesh?.selfCheckFailures ?? [])
    if (!before.has(`${f.pod}\n${f.actual}`))
      events.push({
        type: 'Warning',
        reason: 'SelfCheckFailed',
        message: `${f.pod} runs as ${f.actual} but is listed as ${f.expected}: its peers dial a name nobody answers`,
      });
  const was = written.condition?.status;
  const is = next.condition?.status;
  if (is !== undefined && is !== was && !(was === undefined && is === 'Unknown')) {
    const reason = is === 'True' ? 'Meshed' : is === 'False' ? 'NotMeshed' : 'MeshUnknown';
    events.push({
      type: is === 'False' ? 'Warning' : 'Normal',
      reason,
      message: `${MESHED} ${was ?? '(none)'} → ${is} (${next.condition!.reason}): ${next.condition!.message}`,
    });
  }
  return events;
}
