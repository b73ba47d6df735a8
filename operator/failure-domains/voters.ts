import { VOTES_ANNOTATION } from '../api/schema.js';
import { failureDomainsResult } from './analysis.js';
import {
  matchesNothing,
  matchesSelector,
  parseLabelSelector,
  type LabelSelector,
} from '../api/label-selector.js';
import type { FailureDomainSettings, FailureDomainsResult, Member } from './types.js';

/**
 * Declared voters: which peers of a topology vote, and with how many votes.
 *
 * - a peer matching `voters.learnerSelector` is a learner: listed, 0 votes;
 * - else a peer matching `voters.selector` (default: every peer) is a voter, with the votes its
 *   pod annotation `netzlive/votes` gives (an integer 0–10000; 0 makes it a learner), default 1;
 *   an annotation that is not such an integer is reported and the voter keeps 1 vote;
 * - any other peer is not a member of the quorum (`ignoredPeers`).
 *
 * The annotation is the pod's own to set (a Ra/Khepri or etcd operator knows its members'
 * roles); it is only parsed as a number, never evaluated.
 */
export interface PeerForAnalysis {
  name: string;
  /** The labels of the Node the pod runs on; undefined when unscheduled or the Node is unknown. */
  nodeLabels: Readonly<Record<string, string>> | undefined;
  ready: boolean;
  /** The pod's labels; undefined when not known (then only the defaults apply). */
  podLabels?: Readonly<Record<string, string>> | undefined;
  /** The pod's `netzlive/votes` annotation, when set. */
  votes?: string | undefined;
}

export const MAX_VOTES_PER_MEMBER = 10_000;

export function analyzePeers(
  peers: readonly PeerForAnalysis[],
  settings: FailureDomainSettings | undefined,
): FailureDomainsResult {
  const s = settings ?? {};
  if (s.analysis === 'Off') return failureDomainsResult([], s);
  const voterSelector = compiled(s.voters?.selector);
  const learnerSelector = compiled(s.voters?.learnerSelector);
  const members: Member[] = [];
  const problems: string[] = [];
  let ignored = 0;
  for (const p of peers) {
    const base = { name: p.name, labels: p.nodeLabels, ready: p.ready };
    if (learnerSelector !== undefined && matchesSelector(learnerSelector, p.podLabels)) {
      members.push({ ...base, votes: 0 });
      continue;
    }
    if (voterSelector !== undefined && !matchesSelector(voterSelector, p.podLabels)) {
      ignored++;
      continue;
    }
    let votes = 1;
    if (p.votes !== undefined) {
      const n = /^\d{1,5}$/.test(p.votes.trim()) ? Number(p.votes.trim()) : NaN;
      if (Number.isSafeInteger(n) && n <= MAX_VOTES_PER_MEMBER) votes = n;
      else
        problems.push(
          `pod ${JSON.stringify(p.name)}: annotation ${VOTES_ANNOTATION} ${JSON.stringify(p.votes.slice(0, 40))} is not an integer from 0 to ${MAX_VOTES_PER_MEMBER}; counted with 1 vote`,
        );
    }
    members.push({ ...base, votes });
  }
  const result = failureDomainsResult(members, s);
  if (result.verdict === 'Off') return result;
  return {
    ...result,
    ...(s.voters !== undefined ? { ignoredPeers: ignored } : {}),
    warnings: [
      ...problems.slice(0, 5),
      ...(problems.length > 5 ? [`+${problems.length - 5} more pods with a bad ${VOTES_ANNOTATION}`] : []),
      ...result.warnings,
    ],
  };
}

/** Settings were validated (the selectors parse); an unparsable one here selects nothing. */
function compiled(text: string | undefined): LabelSelector | undefined {
  if (text === undefined) return undefined;
  const r = parseLabelSelector(text);
  return r.ok ? r.selector : matchesNothing;
}
