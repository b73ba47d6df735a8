import type { FailureDomainAnalysis, FailureDomainSettings, Member } from '../failure-domains/index.js';

/**
 * "Confirm the membership you think you have; diagrams drift": a layout file (the diagram)
 * against the live analysis of a ClusterTopology. Lists, in this order:
 *
 * - members in one and not the other (by name: in the live topology, pod names);
 * - for each level both name (same key), each shared member whose domain differs — the live one
 *   read from the domains the operator listed it in, "unknown" when it is of unknown placement;
 * - the voter, learner and vote totals when they differ;
 * - levels only one side has (not compared), and live lists cut at 20 names (not comparable).
 *
 * Pure: the live side is the status the operator wrote, so no extra access is needed.
 */
export interface LayoutComparison {
  differences: string[];
  notes: string[];
}

export function compareLayout(
  layout: { members: readonly Member[]; settings: FailureDomainSettings },
  live: FailureDomainAnalysis,
): LayoutComparison {
  const differences: string[] = [];
  const notes: string[] = [];
  const liveMembers = new Set<string>();
  let capped = false;
  for (const d of live.domains) {
    d.members.forEach((n) => liveMembers.add(n));
    if (d.membersNotListed) capped = true;
  }
  for (const l of live.levels) {
    l.unknownPlacementMembers.forEach((n) => liveMembers.add(n));
    if (l.unknownPlacementMembersNotListed) capped = true;
  }
  // Stand-ins for expectedVoters are no members of anyone's diagram.
  for (const n of [...liveMembers]) if (n.startsWith('(missing voter')) liveMembers.delete(n);
  if (capped)
    notes.push('the live status lists at most 20 members per domain: members beyond that are not compared');

  const layoutNames = new Set(layout.members.map((m) => m.name));
  const onlyLayout = [...layoutNames].filter((n) => !liveMembers.has(n)).sort();
  const onlyLive = [...liveMembers].filter((n) => !layoutNames.has(n)).sort();
  if (onlyLayout.length > 0 && !capped) differences.push(`in the layout, not live: ${onlyLayout.join(', ')}`);
  if (onlyLive.length > 0) differences.push(`live, not in the layout: ${onlyLive.join(', ')}`);

  const layoutLevels = layout.settings.levels ?? [];
  const liveKeys = new Set(live.levels.map((l) => l.key));
  for (const level of layoutLevels) {
    if (!liveKeys.has(level.key)) {
      notes.push(`level ${level.key} is only in the layout: not compared`);
      continue;
    }
    const liveLevel = live.levels.find((l) => l.key === level.key)!;
    if (liveLevel.state !== 'Judged') {
      notes.push(
        `level ${level.key} is ${liveLevel.state === 'NotLabelled' ? 'not labelled' : 'shared by all'} live: not compared`,
      );
      continue;
    }
    const liveDomain = new Map<string, string>();
    for (const d of live.domains.filter((x) => x.level === level.key))
      for (const n of d.members) liveDomain.set(n, d.domain);
    const byKey = new Map(layoutLevels.map((l) => [l.key, l]));
    for (const m of [...layout.members].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      if (!liveMembers.has(m.name)) continue;
      const paper = pathOf(m, level.key, byKey) ?? 'unknown';
      const seen = liveDomain.get(m.name) ?? 'unknown';
      if (paper !== seen) differences.push(`${m.name}: ${level.key} is ${paper} in the layout, ${seen} live`);
    }
  }
  for (const l of live.levels)
    if (!layoutLevels.some((x) => x.key === l.key)) notes.push(`level ${l.key} is only live: not compared`);

  const voters = layout.members.filter((m) => (m.votes ?? 1) > 0);
  const missing = Math.max(0, (layout.settings.expectedVoters ?? 0) - voters.length);
  const W = voters.reduce((s, m) => s + (m.votes ?? 1), 0) + missing;
  const paperTotals = `${voters.length + missing} voters, ${layout.members.length - voters.length} learners, ${W} votes`;
  const liveTotals = `${live.voters} voters, ${live.learners} learners, ${live.votingWeight} votes`;
  if (paperTotals !== liveTotals) differences.push(`the layout has ${paperTotals}; live: ${liveTotals}`);
  return { differences, notes };
}

function pathOf(
  m: Member,
  key: string,
  byKey: ReadonlyMap<string, { key: string; within?: string }>,
): string | undefined {
  const parts: string[] = [];
  for (let k: string | undefined = key; k !== undefined; k = byKey.get(k)?.within) {
    const v = m.labels !== undefined && Object.hasOwn(m.labels, k) ? m.labels[k] : undefined;
    if (typeof v !== 'string' || v === '') return undefined;
    parts.unshift(v);
  }
  return parts.join('/');
}
