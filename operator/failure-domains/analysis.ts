import {
  checkFailureDomainSettings,
  effectiveLevels,
  isDefaultLevels,
} from '../api/failure-domain-settings.js';
import { checkMembers, FailureDomainInputError } from './settings.js';
import { plural } from './text.js';
import {
  ANALYSIS_OFF,
  MEMBER_LIST_CAP,
  type CanCommit,
  type DomainAnalysis,
  type DomainVerdict,
  type FailureDomainAnalysis,
  type FailureDomainLevel,
  type FailureDomainSettings,
  type FailureDomainsResult,
  type LevelAnalysis,
  type LevelState,
  type LinkAnalysis,
  type Member,
  type OverallVerdict,
  type PartitionAnalysis,
  type PartitionIsolation,
  type PartitionResult,
  type Tristate,
} from './types.js';

/**
 * Failure-domain analysis: which single loss — a region, a zone, a host, a hypervisor, a rack,
 * a shared link — costs a quorum-based system its majority.
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
 * Placement is unknown when the member has no labels (unscheduled pod, Node gone), or a label of
 * the path is missing or empty. Unknown placement is never treated as independent: every answer
 * below is exact over every way the unknown labels could be filled in — with values seen or with
 * new ones — and says Maybe/AtRisk/Unknown exactly when the answer depends on them. A voter whose
 * known labels rule a domain out (rack `r1`, zone unknown, is never in `z2/r2`) does not count
 * against it (`mayAlsoHold` then gives the domain's own figure).
 *
 * # Which levels are judged (defaults that do not cry wolf)
 *
 * - A level whose label no voter's Node carries (while some voter is placed) is `NotLabelled`:
 *   said once in `warnings`, not judged — instead of every vote being "of unknown placement".
 * - With the default levels (region, zone, hostname), a level where every placed voter shares one
 *   domain, above the first level that separates the voters, is `SharedByAll` (`sharedDomain`):
 *   not judged. A one-region cluster is the normal case, not a warning. When no level separates
 *   the voters, the narrowest labelled one is judged (everything on one host does break).
 *   Levels that are configured are all judged: a hypervisor carrying every voter is the point.
 *
 * # Verdicts, per domain d holding L votes (U_d: the unknown votes that could be in d)
 *
 * - `verdict` (everybody up): `Breaks` if L > f; `Survives` if L + U_d ≤ f; else `AtRisk`.
 * - `verdictNow` (members not ready count as already lost; R ready votes, R_d of them in d,
 *   U_R,d ready unknown votes that could be in d): `Breaks` if R − R_d < Q; `Survives` if
 *   R − R_d − U_R,d ≥ Q; else `AtRisk`.
 *
 * # Per level
 *
 * - `survivesAnySingle`: `False` if some domain breaks however the unknown labels are filled in
 *   (a placed domain with L > f, or one unknown voter holding more than f); `True` if none can
 *   (every domain, and every domain the unknown voters could form, stays within f); else
 *   `Unknown`.
 * - `maxSimultaneousFailures`: losing any t domains survives iff the t largest plus U stay within
 *   f (worst case); the largest such t (0 when W = 0).
 * - `advisory`: when no vote is of unknown placement and exactly two domains hold all votes:
 *   L_A ≤ f and L_B ≤ f would give W ≤ 2f < W, so one of the two always breaks quorum.
 *
 * # Partition
 *
 * At `partitionLevel` (default: the first judged level whose voters sit in two or more domains):
 * every domain cut off from every other (`sides`, `result`), and, with three or more sides, each
 * domain cut off from the rest, which stay connected (`isolations`). A side commits `Yes` if it
 * holds ≥ Q votes whatever the unknown ones do, `No` if it cannot, else `Maybe`; as 2Q > W at most
 * one side says Yes. `result`: `MajoritySide` if a side always commits (it is named), `NoMajority`
 * if no side — nor a group of unknown voters — can, else `Unknown`.
 *
 * # Shared links (transport levels)
 *
 * A level marked `transport` names, per member, the link (VPN, inter-site line, concentrator) its
 * site reaches the others through; no label = behind no shared link. Losing link X cuts every
 * member behind X off: those of each site form one side, the members not behind X stay together.
 * It removes no vote. Per link: `cutOff`, the rest, `result` as for a partition, `verdict`
 * `Survives`/`Breaks`/`AtRisk` as `result` is MajoritySide/NoMajority/Unknown. A transport level
 * counts toward the verdict: a tunnel whose loss stops every write is a single loss.
 *
 * # Output
 *
 * Deterministic and independent of the order of the members: levels in their order, domains
 * sorted by code unit (not by locale), member lists capped at {@link MEMBER_LIST_CAP}. The
 * overall `verdict`: `NoVoters` if W = 0; else, over the judged levels, `Breaks` if one says
 * False, `AtRisk` if one says Unknown (or none is judged), else `Survives`.
 *
 * Invalid input (see `settings.ts` and `api/failure-domain-settings.ts`) throws {@link FailureDomainInputError}; everything else is a
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
      `expectedVoters is ${expected} but ${plural(votersFound, 'voter was', 'voters were')} found: ` +
        `${missingVoters} more ${missingVoters === 1 ? 'is counted as a voter' : 'are counted as voters'} of unknown placement, not ready`,
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
  const world: World = { W, Q, f, R };
  const someVoterPlaced = voters.some((m) => m.labels !== undefined);

  const byKey = new Map(levels.map((l) => [l.key, l]));
  const spatial = levels.filter((l) => l.transport !== true);
  const tallies = new Map(spatial.map((l) => [l.key, tallyLevel(found, chainOf(l.key, byKey), l)]));

  // Which levels are judged.
  const states = new Map<string, LevelState>();
  const carried = (key: string): boolean => voters.some((v) => valueOf(v, key) !== undefined);
  for (const l of levels)
    states.set(l.key, W > 0 && someVoterPlaced && !carried(l.key) ? 'NotLabelled' : 'Judged');
  const shared = new Map<string, string>();
  if (isDefaultLevels(levels)) {
    const labelled = spatial.filter((l) => states.get(l.key) !== 'NotLabelled');
    const voting = (l: FailureDomainLevel) =>
      [...tallies.get(l.key)!.domains.values()].filter((d) => d.votes > 0);
    const separating = labelled.findIndex((l) => voting(l).length >= 2);
    const judgedFrom = separating >= 0 ? separating : labelled.length - 1;
    for (const l of labelled.slice(0, Math.max(0, judgedFrom))) {
      const holding = voting(l);
      if (holding.length !== 1) continue;
      states.set(l.key, 'SharedByAll');
      shared.set(l.key, holding[0]!.name);
    }
  }

  const levelResults: LevelAnalysis[] = [];
  const domains: DomainAnalysis[] = [];
  const unknownSomewhere = new Set<number>();
  const links: LinkAnalysis[] = [];
  const partitionKey =
    settings.partitionLevel ??
    spatial.find(
      (l) =>
        states.get(l.key) === 'Judged' &&
        [...tallies.get(l.key)!.domains.values()].filter((d) => d.votes > 0).length >= 2,
    )?.key;
  const siteKey = partitionKey ?? spatial[0]?.key;

  for (const level of levels) {
    const state = states.get(level.key)!;
    if (level.transport === true) {
      const r = analyzeLinks(found, level.key, siteKey ? chainOf(siteKey, byKey) : [], world);
      r.unknownIndexes.forEach((i) => unknownSomewhere.add(i));
      if (state === 'Judged') links.push(...r.links);
      levelResults.push({
        key: level.key,
        transport: true,
        state,
        domains: r.links.length,
        survivesAnySingle: W === 0 ? 'False' : worstTristate(r.links.map((l) => tristateOf(l.verdict))),
        maxSimultaneousFailures: W > 0 && r.links.every((l) => l.verdict === 'Survives') ? 1 : 0,
        unknownPlacementWeight: r.unknownVotes,
        ...cappedNames(r.unknownNames, 'unknownPlacementMembers', 'unknownPlacementMembersNotListed'),
      });
      if (state === 'NotLabelled') warnings.push(notLabelled(level.key));
      continue;
    }
    const tally = tallies.get(level.key)!;
    tally.unknown.forEach((u) => unknownSomewhere.add(u.index));
    const U = sum(tally.unknown.map((u) => u.votes));
    const reach = unknownReach(tally.unknown);

    const sorted = [...tally.domains.values()].sort(
      (a, b) => compare(a.name, b.name) || compare(a.key, b.key),
    );
    const levelDomains: DomainAnalysis[] = sorted.map((d) => {
      const { votes: Ud, readyVotes: URd } = reach.into(d.path);
      const out: DomainAnalysis = {
        level: level.key,
        domain: d.name,
        voters: d.voters,
        votingWeight: d.votes,
        learners: d.learners,
        votesLeftIfLost: W - d.votes,
        verdict: d.votes > f ? 'Breaks' : d.votes + Ud <= f ? 'Survives' : 'AtRisk',
        verdictNow: R - d.readyVotes < Q ? 'Breaks' : R - d.readyVotes - URd >= Q ? 'Survives' : 'AtRisk',
        ...cappedNames(d.members, 'members', 'membersNotListed'),
      };
      if (Ud !== U) out.mayAlsoHold = Ud;
      return out;
    });
    if (state === 'Judged') domains.push(...levelDomains);

    const result: LevelAnalysis = {
      key: level.key,
      ...(level.within !== undefined ? { within: level.within } : {}),
      state,
      ...(shared.has(level.key) ? { sharedDomain: shared.get(level.key)! } : {}),
      domains: levelDomains.length,
      survivesAnySingle: survivesAnySingle(world, levelDomains, tally.unknown, reach),
      maxSimultaneousFailures: maxSimultaneousFailures(
        levelDomains.map((d) => d.votingWeight),
        U,
        f,
      ),
      unknownPlacementWeight: U,
      ...cappedNames(
        tally.unknown.map((u) => u.name),
        'unknownPlacementMembers',
        'unknownPlacementMembersNotListed',
      ),
    };
    const advisory = state === 'Judged' ? twoDomainAdvisory(levelDomains, U, f, W) : undefined;
    if (advisory !== undefined) result.advisory = advisory;
    levelResults.push(result);

    warnings.push(...hierarchyWarnings(level, tally.parentsOfValue));
    if (state === 'NotLabelled') warnings.push(notLabelled(level.key));
  }

  let partition: PartitionAnalysis | undefined;
  if (partitionKey !== undefined) {
    const tally = tallies.get(partitionKey)!;
    partition = partitionAt(partitionKey, tally, unknownReach(tally.unknown), world);
  }

  const judged = levelResults.filter((l) => l.state === 'Judged');
  return {
    voters: voters.length,
    votingWeight: W,
    learners: found.length - voters.length,
    quorum: Q,
    faultTolerance: f,
    unknownPlacementWeight: sum([...unknownSomewhere].map((i) => found[i]!.votes)),
    missingVoters,
    readyVotingWeight: R,
    currentFaultTolerance: R - Q,
    verdict: overallVerdict(W, judged),
    levels: levelResults,
    domains,
    ...(partition !== undefined ? { partition } : {}),
    ...(links.length > 0 ? { links } : {}),
    warnings,
  };
}

/**
 * `status.failureDomains` for a topology: `{verdict: 'Off'}` when its `analysis` is Off (the
 * cluster declares no quorum), else the analysis.
 */
export function failureDomainsResult(
  members: readonly Member[],
  settings: FailureDomainSettings = {},
): FailureDomainsResult {
  if (settings.analysis === 'Off') return { ...ANALYSIS_OFF };
  return analyzeFailureDomains(members, settings);
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

interface World {
  W: number;
  Q: number;
  f: number;
  R: number;
}

interface Normalized {
  name: string;
  labels: Readonly<Record<string, string>> | undefined;
  votes: number;
  ready: boolean;
}

/** A label's value when it names a domain: an own, non-empty string property. */
function valueOf(
  m: { labels: Readonly<Record<string, string>> | undefined },
  key: string,
): string | undefined {
  // Own property only: a label named like an Object.prototype member must not resolve.
  if (m.labels === undefined || !Object.hasOwn(m.labels, key)) return undefined;
  const v = m.labels[key];
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/** The keys of a level's path, outermost first (`[zone, rack]` for rack within zone). */
function chainOf(key: string, byKey: ReadonlyMap<string, FailureDomainLevel>): string[] {
  const chain = [key];
  for (let p = byKey.get(key)?.within; p !== undefined; p = byKey.get(p)?.within) chain.unshift(p);
  return chain;
}

interface DomainTally {
  key: string;
  name: string;
  path: readonly string[];
  voters: number;
  votes: number;
  readyVotes: number;
  learners: number;
  members: string[];
}

/** A voter of unknown placement at a level: the parts of its path that are known. */
interface Unknown {
  index: number;
  name: string;
  votes: number;
  ready: boolean;
  parts: readonly (string | undefined)[];
}

interface LevelTally {
  domains: Map<string, DomainTally>;
  unknown: Unknown[];
  /** For a `within` level: each raw value and the parent paths it was seen under. */
  parentsOfValue: Map<string, Set<string>>;
}

function tallyLevel(
  found: readonly Normalized[],
  chain: readonly string[],
  level: FailureDomainLevel,
): LevelTally {
  const t: LevelTally = { domains: new Map(), unknown: [], parentsOfValue: new Map() };
  found.forEach((m, index) => {
    const parts = chain.map((k) => valueOf(m, k));
    if (parts.some((p) => p === undefined)) {
      // A learner of unknown placement costs nothing wherever it is.
      if (m.votes > 0) t.unknown.push({ index, name: m.name, votes: m.votes, ready: m.ready, parts });
      return;
    }
    const path = parts as string[];
    // NUL cannot occur in a label value, so the key keeps path components apart even where a
    // value (in a layout file) contains the '/' of the display name.
    const key = path.join('\u0000');
    let d = t.domains.get(key);
    if (d === undefined) {
      d = { key, name: path.join('/'), path, voters: 0, votes: 0, readyVotes: 0, learners: 0, members: [] };
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
      const parents = t.parentsOfValue.get(path[path.length - 1]!) ?? new Set<string>();
      parents.add(path.slice(0, -1).join('/'));
      t.parentsOfValue.set(path[path.length - 1]!, parents);
    }
  });
  return t;
}

/** Above this many candidate paths, the unknown voters' worst grouping is taken to be all of them. */
const CANDIDATE_PATH_CAP = 4096;

interface Reach {
  /** The unknown votes (all, and ready) that could sit in the domain with this path. */
  into(path: readonly string[]): { votes: number; readyVotes: number };
  /** The most unknown votes that could share one domain none of the placed voters is in. */
  worstGroup: number;
}

/**
 * Where the voters of unknown placement could be. A voter none of whose path is known can be
 * anywhere; one with some parts known only where those parts match.
 */
function unknownReach(unknown: readonly Unknown[]): Reach {
  const free = unknown.filter((u) => u.parts.every((p) => p === undefined));
  const partial = unknown.filter((u) => u.parts.some((p) => p !== undefined));
  const freeVotes = sum(free.map((u) => u.votes));
  const freeReady = sum(free.filter((u) => u.ready).map((u) => u.votes));
  const fits = (u: Unknown, path: readonly (string | undefined)[]) =>
    u.parts.every((p, i) => p === undefined || p === path[i]);
  const into = (path: readonly (string | undefined)[]) => {
    const inside = partial.filter((u) => fits(u, path));
    return {
      votes: freeVotes + sum(inside.map((u) => u.votes)),
      readyVotes: freeReady + sum(inside.filter((u) => u.ready).map((u) => u.votes)),
    };
  };
  let worstGroup = freeVotes + sum(partial.map((u) => u.votes));
  if (partial.length > 0) {
    // Candidate paths: at each position a value some partial voter has there, or a new value
    // (undefined here, which only the voters not knowing that part fit).
    const depth = partial[0]!.parts.length;
    const options = Array.from({ length: depth }, (_, i) => [
      undefined,
      ...new Set(partial.map((u) => u.parts[i]).filter((p) => p !== undefined)),
    ]);
    const count = options.reduce((n, o) => n * o.length, 1);
    if (count <= CANDIDATE_PATH_CAP) {
      worstGroup = 0;
      const walk = (prefix: (string | undefined)[]): void => {
        if (prefix.length === depth) {
          worstGroup = Math.max(worstGroup, into(prefix).votes);
          return;
        }
        for (const o of options[prefix.length]!) walk([...prefix, o]);
      };
      walk([]);
    }
  }
  return { into, worstGroup };
}

function survivesAnySingle(
  { W, f }: World,
  domains: readonly DomainAnalysis[],
  unknown: readonly Unknown[],
  reach: Reach,
): Tristate {
  if (W === 0) return 'False';
  // Breaks however the unknown labels are filled in: a placed domain over f, or one unknown
  // voter over f (wherever it is, its domain holds its votes).
  if (domains.some((d) => d.verdict === 'Breaks') || unknown.some((u) => u.votes > f)) return 'False';
  if (domains.some((d) => d.verdict === 'AtRisk') || reach.worstGroup > f) return 'Unknown';
  return 'True';
}

function partitionAt(key: string, tally: LevelTally, reach: Reach, { W, Q }: World): PartitionAnalysis {
  const sorted = [...tally.domains.values()].sort((a, b) => compare(a.name, b.name) || compare(a.key, b.key));
  const commit = (least: number, most: number): CanCommit =>
    least >= Q ? 'Yes' : most >= Q ? 'Maybe' : 'No';
  const U = sum(tally.unknown.map((u) => u.votes));
  const sides = sorted.map((d) => ({
    domain: d.name,
    votingWeight: d.votes,
    canCommit: commit(d.votes, d.votes + reach.into(d.path).votes),
  }));
  // MajoritySide names the side: a voter of unknown placement holding a majority by itself
  // commits wherever it is, but where that is stays Unknown.
  const result: PartitionResult = sides.some((s) => s.canCommit === 'Yes')
    ? 'MajoritySide'
    : sides.some((s) => s.canCommit === 'Maybe') || reach.worstGroup >= Q
      ? 'Unknown'
      : 'NoMajority';
  const out: PartitionAnalysis = { level: key, result, sides };
  if (sides.length >= 3)
    out.isolations = sorted.map((d): PartitionIsolation => {
      const Ud = reach.into(d.path).votes;
      return {
        domain: d.name,
        votingWeight: d.votes,
        canCommit: commit(d.votes, d.votes + Ud),
        restVotingWeight: W - d.votes - U,
        restCanCommit: commit(W - d.votes - Ud, W - d.votes),
      };
    });
  return out;
}

/** Every link of one transport level: what its loss alone leaves on each side. */
function analyzeLinks(
  found: readonly Normalized[],
  key: string,
  siteChain: readonly string[],
  { Q }: World,
): { links: LinkAnalysis[]; unknownVotes: number; unknownNames: string[]; unknownIndexes: number[] } {
  const nowhere = found.map((m, i) => ({ m, i })).filter(({ m }) => m.labels === undefined && m.votes > 0);
  const nowhereVotes = sum(nowhere.map(({ m }) => m.votes));
  // A link only learners sit behind holds no vote on either side of it: not a row.
  const values = [
    ...new Set(
      found
        .filter((m) => m.votes > 0)
        .map((m) => valueOf(m, key))
        .filter((v) => v !== undefined),
    ),
  ].sort(compare);
  const commit = (least: number, most: number): CanCommit =>
    least >= Q ? 'Yes' : most >= Q ? 'Maybe' : 'No';
  const links = values.map((link): LinkAnalysis => {
    const behind = found.filter((m) => valueOf(m, key) === link);
    const groups = new Map<string, { path: string[]; votes: number }>();
    // Voters that may be behind it in a site not known: those without labels, and those behind
    // it whose site label is missing (they fit only the sites their known labels allow).
    const unknown: Unknown[] = nowhere.map(({ m, i }) => ({
      index: i,
      name: m.name,
      votes: m.votes,
      ready: m.ready,
      parts: siteChain.map(() => undefined),
    }));
    for (const m of behind) {
      if (m.votes === 0) continue;
      const parts = siteChain.map((k) => valueOf(m, k));
      if (parts.some((p) => p === undefined)) {
        unknown.push({ index: -1, name: m.name, votes: m.votes, ready: m.ready, parts });
        continue;
      }
      const site = parts.join('/');
      const g = groups.get(site) ?? { path: parts as string[], votes: 0 };
      g.votes += m.votes;
      groups.set(site, g);
    }
    const reach = unknownReach(unknown);
    const cutOff = [...groups.entries()]
      .sort(([a], [b]) => compare(a, b))
      .map(([domain, g]) => ({
        domain,
        votingWeight: g.votes,
        canCommit: commit(g.votes, g.votes + reach.into(g.path).votes),
      }));
    const rest = sum(
      found.filter((m) => m.labels !== undefined && valueOf(m, key) !== link).map((m) => m.votes),
    );
    const restCanCommit = commit(rest, rest + nowhereVotes);
    const result: PartitionResult =
      restCanCommit === 'Yes' || cutOff.some((s) => s.canCommit === 'Yes')
        ? 'MajoritySide'
        : restCanCommit === 'Maybe' || cutOff.some((s) => s.canCommit === 'Maybe') || reach.worstGroup >= Q
          ? 'Unknown'
          : 'NoMajority';
    return {
      level: key,
      link,
      ...cappedNames(
        behind.map((m) => m.name),
        'members',
        'membersNotListed',
      ),
      cutOff,
      restVotingWeight: rest,
      restCanCommit,
      unknownPlacementWeight: sum(unknown.map((u) => u.votes)),
      result,
      verdict: result === 'MajoritySide' ? 'Survives' : result === 'NoMajority' ? 'Breaks' : 'AtRisk',
    };
  });
  return {
    links,
    unknownVotes: nowhereVotes,
    unknownNames: nowhere.map(({ m }) => m.name),
    unknownIndexes: nowhere.map(({ i }) => i),
  };
}

function tristateOf(v: DomainVerdict): Tristate {
  return v === 'Survives' ? 'True' : v === 'Breaks' ? 'False' : 'Unknown';
}

function worstTristate(ts: readonly Tristate[]): Tristate {
  return ts.includes('False') ? 'False' : ts.includes('Unknown') ? 'Unknown' : 'True';
}

function notLabelled(key: string): string {
  return `level ${quote(key)}: no voter's Node carries this label, so it is not labelled and not judged (is the label key right?)`;
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

function overallVerdict(W: number, judged: readonly LevelAnalysis[]): OverallVerdict {
  if (W === 0) return 'NoVoters';
  if (judged.some((l) => l.survivesAnySingle === 'False')) return 'Breaks';
  if (judged.length === 0 || judged.some((l) => l.survivesAnySingle === 'Unknown')) return 'AtRisk';
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

function quote(s: string): string {
  return JSON.stringify(s);
}
