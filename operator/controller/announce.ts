import type { ClusterTopologyStatus, Peer } from '../api/types.generated.js';
import { conditionOf } from './conditions.js';

/**
 * The Events a written status deserves — what a person would want to hear about: peers
 * joining or leaving, a failure and the recovery from it, a refusal, a changed quorum verdict.
 * A pure function of the status before and after the write.
 */

export interface PlannedEvent {
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

const REFUSALS = ['CrossNamespaceDenied', 'InvalidSpec'];

export function eventsFor(
  before: ClusterTopologyStatus | undefined,
  after: ClusterTopologyStatus,
): PlannedEvent[] {
  const events: PlannedEvent[] = [];
  const { joined, left } = peerChanges(before?.peers, after.peers ?? []);
  if (joined.length || left.length) {
    const parts = [
      joined.length ? `joined: ${sample(joined)}` : '',
      left.length ? `left: ${sample(left)}` : '',
    ];
    events.push({
      type: 'Normal',
      reason: 'PeersChanged',
      message: `${after.peerCount} peers; ${parts.filter(Boolean).join('; ')}`,
    });
  }
  const degradedBefore = conditionOf(before?.conditions, 'Degraded');
  const degradedAfter = conditionOf(after.conditions, 'Degraded');
  if (
    degradedAfter?.status === 'True' &&
    (degradedBefore?.status !== 'True' || before?.lastResponse?.code !== after.lastResponse?.code)
  )
    events.push({ type: 'Warning', reason: degradedAfter.reason, message: degradedAfter.message });
  else if (degradedAfter?.status === 'False' && degradedBefore?.status === 'True')
    events.push({ type: 'Normal', reason: 'Recovered', message: 'Listing pods succeeds again.' });
  const readyAfter = conditionOf(after.conditions, 'Ready');
  if (
    readyAfter?.status === 'False' &&
    REFUSALS.includes(readyAfter.reason) &&
    conditionOf(before?.conditions, 'Ready')?.reason !== readyAfter.reason
  )
    events.push({ type: 'Warning', reason: readyAfter.reason, message: readyAfter.message });
  const verdictBefore = before?.failureDomains?.verdict;
  const verdictAfter = after.failureDomains?.verdict;
  if (verdictAfter && verdictBefore !== verdictAfter) {
    const q = conditionOf(after.conditions, 'QuorumAtRisk');
    events.push({
      type: verdictAfter === 'Survives' || verdictAfter === 'Off' ? 'Normal' : 'Warning',
      reason: 'QuorumVerdictChanged',
      message: `${verdictBefore ?? 'none'} → ${verdictAfter}. ${q?.message ?? ''}`,
    });
  }
  return events;
}

/** At most ten names, then how many more. */
function sample(names: readonly string[]): string {
  return `${names.slice(0, 10).join(', ')}${names.length > 10 ? ` (+${names.length - 10})` : ''}`;
}

/** What changed in the peer list: the node names that joined and those that left. */
export function peerChanges(
  before: readonly Peer[] | undefined,
  after: readonly Peer[],
): { joined: string[]; left: string[] } {
  const b = new Set((before ?? []).map((p) => p.nodeName));
  const a = new Set(after.map((p) => p.nodeName));
  return { joined: [...a].filter((n) => !b.has(n)), left: [...b].filter((n) => !a.has(n)) };
}
