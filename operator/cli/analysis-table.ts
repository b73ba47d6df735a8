import { boundedList, levelDisplayNames, plural, pluralNoun, votes } from '../failure-domains/text.js';
import type {
  CanCommit,
  DomainAnalysis,
  FailureDomainAnalysis,
  LevelAnalysis,
  LinkAnalysis,
  PartitionAnalysis,
  PartitionSide,
} from '../failure-domains/index.js';

/**
 * The failure-domain table, for `ctopo analyze`: read each row as "if all of this disappears tonight,
 * can the survivors still commit a write?"
 *
 * 1. A header: voters, votes, learners, quorum, tolerance, verdict.
 * 2. `What disappears | Voters left | Writes still commit`, as a Markdown table (it pastes into a
 *    runbook): one row per domain of the judged levels, in the analysis's order (`site A
 *    (etcd-1, etcd-2)` | `1 of 3` | `No`); with three sites or more, one row per site cut off
 *    from the rest (`site A cut off from the rest` | `A: 2 of 5, rest: 3 of 5` | `Only in the
 *    rest`); when the partition level has two sides or more, one row for the cut between all of
 *    them (`the link between sites only` | `2 of 3 on one side` | `Only on the majority side`)
 *    and one row per side (`partition at site: side A` | `2 of 3` | `Yes`); one row per shared
 *    link (`the inter-site link vpn-1 only` | `2 of 3 on one side` | `Only on site A's side`).
 *    An `AtRisk` row gives the range of votes left and `Maybe (N votes of unknown placement)`.
 * 3. Per level: domains, whether any single loss is survived (or why the level is not judged:
 *    not labelled, shared by all), how many simultaneous losses are; below it, the two-domain
 *    advisories and who has unknown placement.
 * 4. The current state (members not ready counted as lost) and the warnings.
 *
 * A level is shown by its key's last segment (`zone` for `topology.kubernetes.io/zone`) unless
 * two levels share it; a row names at most {@link TABLE_MEMBER_CAP} members.
 */
export const TABLE_MEMBER_CAP = 6;

export function formatAnalysisTable(a: FailureDomainAnalysis): string {
  const names = levelDisplayNames(a.levels.map((l) => l.key));
  const levelName = (key: string): string => names.get(key) ?? key;
  const W = a.votingWeight;
  const out: string[] = [header(a), ''];

  if (W === 0) {
    out.push('No member holds a vote: there is no majority to keep, so no loss can be survived.');
  } else {
    const rows: string[][] = a.domains.map((d) => domainRow(d, a, levelName(d.level)));
    if (a.partition !== undefined) rows.push(...partitionRows(a.partition, a, levelName(a.partition.level)));
    for (const link of a.links ?? [])
      rows.push(linkRow(link, a, a.partition !== undefined ? levelName(a.partition.level) : undefined));
    out.push(...table(['What disappears', 'Voters left', 'Writes still commit'], rows), '');
    const notes: string[] = [];
    const levelRows = a.levels.map((l) => {
      const name = levelName(l.key);
      if (l.advisory !== undefined) notes.push(`- ${name}: ${l.advisory}`);
      if (l.state === 'SharedByAll')
        notes.push(
          `- ${name}: every placed voter is in ${l.sharedDomain ?? 'one domain'}; the default levels do not judge a level all voters share (configure levels to judge it)`,
        );
      if (l.state === 'NotLabelled') notes.push(`- ${name}: no voter's Node carries this label; not judged`);
      if (l.unknownPlacementWeight > 0)
        notes.push(
          `- ${name}: ${votes(l.unknownPlacementWeight)} of unknown placement ` +
            `(${boundedList(l.unknownPlacementMembers, TABLE_MEMBER_CAP, l.unknownPlacementMembersNotListed)})`,
        );
      return [name, String(l.domains), anySingle(l), String(l.maxSimultaneousFailures)];
    });
    out.push(
      ...table(['Level', 'Domains', 'Survives any single loss', 'Simultaneous losses survived'], levelRows),
      ...(notes.length > 0 ? ['', ...notes] : []),
      '',
    );
    out.push(...currentState(a, levelName));
  }

  if (a.warnings.length > 0) out.push('', 'Warnings:', ...a.warnings.map((w) => `- ${w}`));
  return out.join('\n') + '\n';
}

function anySingle(l: LevelAnalysis): string {
  if (l.state === 'NotLabelled') return 'not labelled (not judged)';
  if (l.state === 'SharedByAll') return 'shared by all (not judged)';
  return l.survivesAnySingle === 'True' ? 'Yes' : l.survivesAnySingle === 'False' ? 'No' : 'Unknown';
}

function header(a: FailureDomainAnalysis): string {
  const W = a.votingWeight;
  const tolerance =
    a.faultTolerance > 0
      ? `a majority survives the loss of ${votes(a.faultTolerance)}`
      : 'no vote may be lost';
  const verdict = {
    Survives: 'Survives — every single loss leaves a majority.',
    Breaks: 'Breaks — a single loss can cost the majority.',
    AtRisk: `AtRisk — it depends on where the ${a.unknownPlacementWeight === 1 ? 'vote of unknown placement is' : `${a.unknownPlacementWeight} votes of unknown placement are`}.`,
    NoVoters: 'NoVoters — no member holds a vote.',
  }[a.verdict];
  const ignored = a.ignoredPeers
    ? `, ${plural(a.ignoredPeers, 'peer', 'peers')} outside the declared voters`
    : '';
  const counts = `${plural(a.voters, 'voter', 'voters')} (${votes(W)}), ${plural(a.learners, 'learner', 'learners')}${ignored}`;
  if (W === 0) return `${counts}.\nVerdict: ${verdict}`;
  return `${counts}; quorum ${a.quorum} of ${W}; ${tolerance}.\nVerdict: ${verdict}`;
}

function domainRow(d: DomainAnalysis, a: FailureDomainAnalysis, level: string): string[] {
  const W = a.votingWeight;
  const what = `${level} ${d.domain} (${boundedList(d.members, TABLE_MEMBER_CAP, d.membersNotListed)})`;
  if (d.verdict === 'AtRisk') {
    const U = d.mayAlsoHold ?? a.levels.find((l) => l.key === d.level)?.unknownPlacementWeight ?? 0;
    const worst = Math.max(0, d.votesLeftIfLost - U);
    return [what, `${worst} to ${d.votesLeftIfLost} of ${W}`, `Maybe (${votes(U)} of unknown placement)`];
  }
  return [what, `${d.votesLeftIfLost} of ${W}`, d.verdict === 'Survives' ? 'Yes' : 'No'];
}

function partitionRows(p: PartitionAnalysis, a: FailureDomainAnalysis, level: string): string[][] {
  const W = a.votingWeight;
  const U = a.levels.find((l) => l.key === p.level)?.unknownPlacementWeight ?? 0;
  const maybe = `Maybe (${votes(U)} of unknown placement)`;
  const rows: string[][] = [];
  for (const i of p.isolations ?? []) {
    const inside = i.canCommit;
    const rest = i.restCanCommit;
    const commits =
      inside === 'Yes'
        ? `Only inside ${i.domain}`
        : rest === 'Yes'
          ? 'Only in the rest'
          : inside === 'No' && rest === 'No'
            ? 'No (neither side holds a majority)'
            : maybe;
    rows.push([
      `${level} ${i.domain} cut off from the rest`,
      `${i.domain}: ${i.votingWeight} of ${W}, rest: ${i.restVotingWeight} of ${W}`,
      commits,
    ]);
  }
  if (p.sides.length >= 2) {
    const largest = Math.max(...p.sides.map((s) => s.votingWeight));
    const what = `the ${p.sides.length === 2 ? 'link' : 'links'} between ${pluralNoun(level)} only`;
    if (p.result === 'MajoritySide')
      rows.push([what, `${largest} of ${W} on one side`, 'Only on the majority side']);
    else if (p.result === 'NoMajority')
      rows.push([what, `at most ${largest} of ${W} on any side`, 'No (no side holds a majority)']);
    else rows.push([what, `at most ${largest} of ${W} on one side, ${votes(U)} unplaced`, maybe]);
  }
  const commit = (s: PartitionSide): string => (s.canCommit === 'Maybe' ? maybe : s.canCommit);
  for (const s of p.sides)
    rows.push([`partition at ${level}: side ${s.domain}`, `${s.votingWeight} of ${W}`, commit(s)]);
  return rows;
}

function linkRow(link: LinkAnalysis, a: FailureDomainAnalysis, site: string | undefined): string[] {
  const W = a.votingWeight;
  const what = `the inter-site link ${link.link} only`;
  const sides: { name: string; votes: number; commit: CanCommit }[] = [
    ...link.cutOff.map((s) => ({
      name: site !== undefined ? `${site} ${s.domain}` : 'the members behind it',
      votes: s.votingWeight,
      commit: s.canCommit,
    })),
    { name: 'the members not behind it', votes: link.restVotingWeight, commit: link.restCanCommit },
  ];
  const largest = Math.max(...sides.map((s) => s.votes));
  if (link.result === 'MajoritySide') {
    const yes = sides.find((s) => s.commit === 'Yes')!;
    const where = yes.name.startsWith('the ') ? yes.name : `${yes.name}'s side`;
    return [what, `${yes.votes} of ${W} on one side`, `Only on ${where}`];
  }
  if (link.result === 'NoMajority')
    return [what, `at most ${largest} of ${W} on any side`, 'No (no side holds a majority)'];
  return [
    what,
    `at most ${largest} of ${W} on one side, ${votes(link.unknownPlacementWeight)} unplaced`,
    `Maybe (${votes(link.unknownPlacementWeight)} of unknown placement)`,
  ];
}

function currentState(a: FailureDomainAnalysis, levelName: (key: string) => string): string[] {
  const W = a.votingWeight;
  const ready = `${a.readyVotingWeight} of ${W} ${W === 1 ? 'vote' : 'votes'} ready (quorum ${a.quorum})`;
  if (a.currentFaultTolerance < 0) return [`Now: quorum is lost: ${ready}; writes cannot commit.`];
  const lines = [
    `Now: ${ready}; ${a.currentFaultTolerance > 0 ? `${a.currentFaultTolerance} more ${a.currentFaultTolerance === 1 ? 'vote' : 'votes'} may be lost` : 'no further vote may be lost'}.`,
  ];
  // "Now" is never better than the structural verdict, so only the rows that got worse are news.
  const worse = a.domains.filter((d) => d.verdictNow !== d.verdict);
  if (worse.length > 0)
    lines.push(
      'With the members that are not ready counted as lost:',
      ...worse.map(
        (d) =>
          `- losing ${levelName(d.level)} ${d.domain} ${d.verdictNow === 'Breaks' ? 'breaks quorum' : 'may break quorum'}`,
      ),
    );
  return lines;
}

/** A Markdown table with padded columns; `|` inside a cell is escaped. */
function table(head: readonly string[], rows: readonly (readonly string[])[]): string[] {
  const esc = (s: string): string => s.replace(/\|/g, '\\|');
  const all = [head, ...rows].map((r) => r.map(esc));
  const widths = head.map((_, i) => Math.max(3, ...all.map((r) => (r[i] ?? '').length)));
  const line = (r: readonly string[]): string => `| ${r.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(all[0]!), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...all.slice(1).map(line)];
}
