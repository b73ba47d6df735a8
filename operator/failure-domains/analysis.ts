import {
  checkFailureDomainSettings,
  checkMembers,
  effectiveLevels,
  FailureDomainInputError,
} from './settings.js';
import {
  MEMBER_LIST_CAP,
  type CanCommit,
  type DomainAnalysis,
  type DomainVerdict,
  type FailureDomainAnalysis,
  type FailureDomainLevel,
  type FailureDomainSettings,
  type LevelAnalysis,
  type Member,
  type OverallVerdict,
  type PartitionAnalysis,
  type PartitionResult,
  type Tristate,
} from './types.js';

/**
 * Failure-domain analysis: which single loss — a region, a zone, a host, a hypervisor, a rack —
 * costs a quorum-based system its majority.
 *
 * # Votes
 *
 * Every member carries `votes` (default 1). A member with 0 votes (a learner, an observer) is
 * listed where it sits but is never counted, neither in the total nor among the votes left:
 * promoting it is itself a change that needs the old majority. W is the sum of the votes,
 * Q = floor(W/2) + 1 the majority, f = W − Q the votes that may be lost. W = 0 gives the verdict
 * `NoVoters`, never "survives": f is then −1 and every domain breaks (no majority can form).
 *
 * `expectedVoters` states the application's own voter count. When it exceeds the voters found,
 * the difference is added as voters of one vote each, of unknown placement and not ready — a
 * count taken from found pods alone would lower Q and make verdicts falsely safe. When it is
 * lower than the voters found, the found ones are counted and a warning says so.
 *
 * # Placement
 *
 * A level is a label key. A member's domain at a level is the value of that label, or, for a
 * level declared `within` a parent level, the parent's path and the value (`zone-a/rack-1`).
 * Placement is unknown when the member has no labels (unscheduled pod, Node gone), the label is
 * missing or empty, or the parent's placement is unknown. Unknown placement is never treated as
 * independent: at a level, U is the votes of unknown placement, and every verdict takes the worst
 * and the best place those votes could be in.
 *
 * # Verdicts, per domain d holding L votes
 *
 * - `verdict` (structural, everybody up): `Breaks` if L > f; `Survives` if L + U ≤ f;
 *   else `AtRisk` (it depends on where the unknown votes are).
 * - `verdictNow` (members not ready count as already lost; R ready votes, R_d of them in d,
 *   U_R ready votes of unknown placement): `Breaks` if R − R_d < Q (so every domain breaks when
 *   quorum is already lost); `Survives` if R − R_d − U_R ≥ Q; else `AtRisk`.
 *
 * # Per level
 *
 * - `survivesAnySingle`: `False` if a domain breaks, `Unknown` if one is at risk or the unknown
 *   votes alone exceed f (they might all share one domain), else `True`. `False` when W = 0.
 * - `maxSimultaneousFailures`: the domains of one level are disjoint, so losing any t of them
 *   survives iff the t largest plus U stay within f; the largest such t (0 when W = 0).
 * - `advisory`: when no vote is of unknown placement and exactly two domains hold all votes.
 *   Surviving the loss of either would need L_A ≤ f and L_B ≤ f, so W = L_A + L_B ≤ 2f < W:
 *   at least one of the two (the one holding half or more) breaks quorum, whatever the split.
 *
 * # Partition
 *
 * The cut between the domains of `partitionLevel` (default: the first level whose voters sit in
 * two or more domains; no partition is reported when there is none), each domain on its own
 * side. A side can commit — `Yes` if it holds ≥ Q votes, `Maybe` if it does with the unknown
 * votes, else `No`. As 2Q > W at most one side says `Yes`. Result: `MajoritySide` when one does,
 * `Unknown` when a side (or the unknown votes by themselves) may, else `NoMajority` — an equal
 * split leaves no side able to commit.
 *
 * # Hierarchy
 *
 * For a level `within` a parent, a value seen under two parents is counted as two domains and
 * reported in `warnings`.
 *
 * # Output
 *
 * Deterministic and independent of the order of the members: domains by level order then
 * domain name, names sorted by code unit (not by locale), member lists capped at
 * {@link MEMBER_LIST_CAP} names plus a count. The overall `verdict` is `Breaks` if any domain
 * breaks, else `AtRisk` if any level's answer is unknown, else `Survives` (`NoVoters` first).
 *
 * Invalid input (see `settings.ts`) throws {@link FailureDomainInputError}; everything else is a
 * total, pure function of its arguments.
 */
export function analyzeFailureDomains(
  members: readonly Member[],
  settings: FailureDomainSettings = {},
): FailureDomainAnalysis {
  const problems = [...checkFailureDomainSettings(settings), ...checkMembers(members)];
  if (problems.length > 0) throw new FailureDomainInputError(problems);

  const levels = effectiveLevels(settings);
  const warnings: string[] = [];

  const found: Normalized[] = members.map((m) => ({
    name: m.name,
    labels: m.labels,
    votes: m.votes ?? 1,
    ready: m.ready ?? true,
  }));
  const votersFound = found.filter((m) => m.votes > 0).length;
  const expected = settings.expectedVoters;
  const missingVoters = expected !== undefined && expected > votersFound ? expected - votersFound : 0;
  if (missingVoters > 0)
    warnings.push(
      `expectedVoters is ${expected} but ${votersFound} ${plural(votersFound, 'voter was', 'voters were')} found: ` +
        `${missingVoters} more ${plural(missingVoters, 'is', 'are')} counted as ${plural(missingVoters, 'a voter', 'voters')} of unknown placement, not ready`,
    );
  else if (expected !== undefined && expected < votersFound)
    warnings.push(
      `expectedVoters is ${expected} but ${votersFound} voters were found: the ${votersFound} found are counted`,
    );
  // Stand-ins for the missing voters; parenthesised so they can never be taken for a pod name.
  for (let i = 1; i <= missingVoters; i++)
    found.push({ name: `(missing voter ${i})`, labels: undefined, votes: 1, ready: false });

  const voters = found.filter((m) => m.votes > 0);
  const W = sum(voters.map((m) => m.votes));
  const Q = quorumOf(W);
  const f = W - Q;
  const R = sum(voters.filter((m) => m.ready).map((m) => m.votes));

  const placements = found.map((m) => placementResolver(m.labels, levels));
  const unknownSomewhere = new Set<number>();
  const levelResults: LevelAnalysis[] = [];
  const domains: DomainAnalysis[] = [];
  const perLevelDomains = new Map<string, DomainAnalysis[]>();

  for (const level of levels) {
    const tally = tallyLevel(found, placements, level);
    tally.unknownIndexes.forEach((i) => unknownSomewhere.add(i));
    const U = tally.unknownVotes;
    const UR = tally.unknownReadyVotes;

    const levelDomains: DomainAnalysis[] = [...tally.domains.values()]
      .sort((a, b) => compare(a.name, b.name) || compare(a.key, b.key))
      .map((d) => ({
        level: level.key,
        domain: d.name,
        voters: d.voters,
        votingWeight: d.votes,
        learners: d.learners,
        votesLeftIfLost: W - d.votes,
        verdict: d.votes > f ? 'Breaks' : d.votes + U <= f ? 'Survives' : 'AtRisk',
        verdictNow: R - d.readyVotes < Q ? 'Breaks' : R - d.readyVotes - UR >= Q ? 'Survives' : 'AtRisk',
        ...cappedNames(d.members, 'members', 'membersNotListed'),
      }));
    domains.push(...levelDomains);
    perLevelDomains.set(level.key, levelDomains);

    const weights = levelDomains.map((d) => d.votingWeight);
    const result: LevelAnalysis = {
      key: level.key,
      ...(level.within !== undefined ? { within: level.within } : {}),
      domains: levelDomains.length,
      survivesAnySingle: survivesAnySingle(
        W,
        f,
        U,
        levelDomains.map((d) => d.verdict),
      ),
      maxSimultaneousFailures: maxSimultaneousFailures(weights, U, f),
      unknownPlacementWeight: U,
      ...cappedNames(tally.unknownVoterNames, 'unknownPlacementMembers', 'unknownPlacementMembersNotListed'),
    };
    const advisory = twoDomainAdvisory(levelDomains, U, f, W);
    if (advisory !== undefined) result.advisory = advisory;
    levelResults.push(result);

    warnings.push(...hierarchyWarnings(level, tally.parentsOfValue));
    if (
      W > 0 &&
      levelDomains.every((d) => d.votingWeight === 0) &&
      voters.some((m) => m.labels !== undefined)
    )
      warnings.push(
        `level ${quote(level.key)}: no voter's placement is known at this level (is the label key right?)`,
      );
  }

  const partition = partitionAt(settings.partitionLevel, levels, perLevelDomains, levelResults, Q);
  const analysis: FailureDomainAnalysis = {
    voters: voters.length,
    votingWeight: W,
    learners: found.length - voters.length,
    quorum: Q,
    faultTolerance: f,
    unknownPlacementWeight: sum([...unknownSomewhere].map((i) => found[i]!.votes)),
    missingVoters,
    readyVotingWeight: R,
    currentFaultTolerance: R - Q,
    verdict: overallVerdict(W, levelResults),
    levels: levelResults,
    domains,
    ...(partition !== undefined ? { partition } : {}),
    warnings,
  };
  return analysis;
}

/** Q = floor(W/2) + 1: a strict majority of the votes. */
export function quorumOf(votingWeight: number): number {
  return Math.floor(votingWeight / 2) + 1;
}

/** f = W − Q: how many votes may be lost with a majority left (−1 for W = 0). */
export function faultToleranceOf(votingWeight: number): number {
  return votingWeight - quorumOf(votingWeight);
}

/**
 * The largest t such that the t largest `weights` plus `unknown` stay within `f`. Zero-weight
 * domains count too: losing a domain of learners only costs nothing.
 */
export function maxSimultaneousFailures(weights: readonly number[], unknown: number, f: number): number {
  const sorted = [...weights].sort((a, b) => b - a);
  let lost = unknown;
  let t = 0;
  for (const w of sorted) {
    if (lost + w > f) break;
    lost += w;
    t++;
  }
  return t;
}

interface Normalized {
  name: string;
  labels: Readonly<Record<string, string>> | undefined;
  votes: number;
  ready: boolean;
}

/** The path of a member's domain at a level, or undefined when unknown; memoised per level key. */
type Placement = (key: string) => readonly string[] | undefined;

function placementResolver(
  labels: Readonly<Record<string, string>> | undefined,
  levels: readonly FailureDomainLevel[],
): Placement {
  const byKey = new Map(levels.map((l) => [l.key, l]));
  const memo = new Map<string, readonly string[] | undefined>();
  const resolve = (key: string): readonly string[] | undefined => {
    if (memo.has(key)) return memo.get(key);
    // Own property only: a label named like an Object.prototype member must not resolve.
    const value = labels !== undefined && Object.hasOwn(labels, key) ? labels[key] : undefined;
    let path: readonly string[] | undefined;
    if (typeof value === 'string' && value !== '') {
      const parent = byKey.get(key)?.within;
      if (parent === undefined) path = [value];
      else {
        const parentPath = resolve(parent);
        path = parentPath === undefined ? undefined : [...parentPath, value];
      }
    }
    memo.set(key, path);
    return path;
  };
  return resolve;
}

interface DomainTally {
  key: string;
  name: string;
  voters: number;
  votes: number;
  readyVotes: number;
  learners: number;
  members: string[];
}

interface LevelTally {
  domains: Map<string, DomainTally>;
  unknownVotes: number;
  unknownReadyVotes: number;
  unknownVoterNames: string[];
  unknownIndexes: number[];
  /** For a `within` level: each raw value and the parent paths it was seen under. */
  parentsOfValue: Map<string, Set<string>>;
}

function tallyLevel(
  found: readonly Normalized[],
  placements: readonly Placement[],
  level: FailureDomainLevel,
): LevelTally {
  const t: LevelTally = {
    domains: new Map(),
    unknownVotes: 0,
    unknownReadyVotes: 0,
    unknownVoterNames: [],
    unknownIndexes: [],
    parentsOfValue: new Map(),
  };
  found.forEach((m, i) => {
    const path = placements[i]!(level.key);
    if (path === undefined) {
      // A learner of unknown placement costs nothing wherever it is.
      if (m.votes === 0) return;
      t.unknownVotes += m.votes;
      if (m.ready) t.unknownReadyVotes += m.votes;
      t.unknownVoterNames.push(m.name);
      t.unknownIndexes.push(i);
      return;
    }
    // NUL cannot occur in a label value, so the key keeps path components apart even where a
    // value (in a layout file) contains the '/' of the display name.
    const key = path.join('\u0000');
    let d = t.domains.get(key);
    if (d === undefined) {
      d = { key, name: path.join('/'), voters: 0, votes: 0, readyVotes: 0, learners: 0, members: [] };
      t.domains.set(key, d);
    }
    d.members.push(m.name);
    if (m.votes === 0) d.learners++;
    else {
      d.voters++;
      d.votes += m.votes;
      if (m.ready) d.readyVotes += m.votes;
    }
    if (level.within !== undefined) {
      const value = path[path.length - 1]!;
      const parents = t.parentsOfValue.get(value) ?? new Set<string>();
      parents.add(path.slice(0, -1).join('/'));
      t.parentsOfValue.set(value, parents);
    }
  });
  return t;
}

function survivesAnySingle(W: number, f: number, U: number, verdicts: readonly DomainVerdict[]): Tristate {
  if (W === 0 || verdicts.includes('Breaks')) return 'False';
  // U > f with no domain at risk happens only when no voter is placed at all: the unknown
  // votes might share one domain.
  if (verdicts.includes('AtRisk') || U > f) return 'Unknown';
  return 'True';
}

function twoDomainAdvisory(
  domains: readonly DomainAnalysis[],
  U: number,
  f: number,
  W: number,
): string | undefined {
  const holding = domains.filter((d) => d.votingWeight > 0);
  if (U > 0 || holding.length !== 2) return undefined;
  const breaking = holding.filter((d) => d.votingWeight > f).map((d) => d.domain);
  const split = holding.map((d) => `${d.domain}: ${d.votingWeight} of ${W}`).join(', ');
  const loss = breaking.length === 2 ? 'losing either breaks quorum' : `losing ${breaking[0]} breaks quorum`;
  return (
    `all votes sit in exactly two domains (${split}); a majority split over two domains can never ` +
    `survive the loss of either: ${loss}. Add a voter in a third, independent domain`
  );
}

function hierarchyWarnings(
  level: FailureDomainLevel,
  parentsOfValue: ReadonlyMap<string, ReadonlySet<string>>,
): string[] {
  if (level.within === undefined) return [];
  return [...parentsOfValue.entries()]
    .filter(([, parents]) => parents.size > 1)
    .sort(([a], [b]) => compare(a, b))
    .map(([value, parents]) => {
      const ps = [...parents].sort(compare);
      return (
        `hierarchy: ${quote(level.key)} value ${quote(value)} is seen under ${ps.length} ${quote(level.within!)} ` +
        `values (${ps.join(', ')}); counted as separate domains ${ps.map((p) => `${p}/${value}`).join(', ')}`
      );
    });
}

function partitionAt(
  configured: string | undefined,
  levels: readonly FailureDomainLevel[],
  perLevelDomains: ReadonlyMap<string, readonly DomainAnalysis[]>,
  levelResults: readonly LevelAnalysis[],
  Q: number,
): PartitionAnalysis | undefined {
  const key =
    configured ??
    levels.find((l) => (perLevelDomains.get(l.key) ?? []).filter((d) => d.votingWeight > 0).length >= 2)?.key;
  if (key === undefined) return undefined;
  const U = levelResults.find((l) => l.key === key)!.unknownPlacementWeight;
  const sides = (perLevelDomains.get(key) ?? []).map((d) => {
    const canCommit: CanCommit = d.votingWeight >= Q ? 'Yes' : d.votingWeight + U >= Q ? 'Maybe' : 'No';
    return { domain: d.domain, votingWeight: d.votingWeight, canCommit };
  });
  const result: PartitionResult = sides.some((s) => s.canCommit === 'Yes')
    ? 'MajoritySide'
    : sides.some((s) => s.canCommit === 'Maybe') || U >= Q
      ? 'Unknown'
      : 'NoMajority';
  return { level: key, result, sides };
}

function overallVerdict(W: number, levels: readonly LevelAnalysis[]): OverallVerdict {
  if (W === 0) return 'NoVoters';
  if (levels.some((l) => l.survivesAnySingle === 'False')) return 'Breaks';
  if (levels.some((l) => l.survivesAnySingle === 'Unknown')) return 'AtRisk';
  return 'Survives';
}

function cappedNames<K extends string, C extends string>(
  names: readonly string[],
  listKey: K,
  countKey: C,
): Record<K, string[]> & Partial<Record<C, number>> {
  const sorted = [...names].sort(compare);
  const out = { [listKey]: sorted.slice(0, MEMBER_LIST_CAP) } as Record<K, string[]> &
    Partial<Record<C, number>>;
  if (sorted.length > MEMBER_LIST_CAP) (out as Record<C, number>)[countKey] = sorted.length - MEMBER_LIST_CAP;
  return out;
}

/** Code-unit order: the same on every machine, whatever its locale. */
export function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function sum(xs: readonly number[]): number {
  return xs.reduce((a, b) => a + b, 0);
}

function plural(n: number, one: string, many: string): string {
  return n === 1 ? one : many;
}

function quote(s: string): string {
  return JSON.stringify(s);
}
