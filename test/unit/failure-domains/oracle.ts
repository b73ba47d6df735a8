/**
 * A brute-force oracle for the failure-domain analysis, written from the definitions alone and
 * sharing no code with it: fill in every unknown label in every possible way (a value seen at
 * that key, or a new one), recount the votes of every scenario in every filling, and say Yes/No
 * when all fillings agree and Maybe when they do not. Small inputs only (exponential).
 */
import type { FailureDomainLevel, Member } from '../../../operator/failure-domains/index.js';

export interface OracleSettings {
  levels: FailureDomainLevel[];
  partitionLevel?: string;
  expectedVoters?: number;
}

type Three = 'Yes' | 'No' | 'Maybe';
type Verdict = 'Survives' | 'Breaks' | 'AtRisk';

export interface Oracle {
  W: number;
  Q: number;
  states: Record<string, 'Judged' | 'NotLabelled'>;
  /** `level\0domain` → verdict, verdictNow, for the domains placed in the input. */
  domains: Map<string, { verdict: Verdict; verdictNow: Verdict }>;
  /** Spatial levels: does every single loss survive, in every filling? */
  anySingle: Record<string, 'True' | 'False' | 'Unknown'>;
  partition?: {
    level: string;
    sides: Map<string, Three>;
    result: 'MajoritySide' | 'NoMajority' | 'Unknown';
    isolations: Map<string, { inside: Three; rest: Three }>;
  };
  links: Map<string, { cutOff: Map<string, Three>; rest: Three; verdict: Verdict }>;
  verdict: 'Survives' | 'Breaks' | 'AtRisk' | 'NoVoters';
  /** Over every filling and every cut: how many sides committed at once, at most. */
  mostSidesCommitting: number;
}

const NEW = '\u0001new';
const three = (seen: Set<boolean>): Three => (seen.size === 2 ? 'Maybe' : seen.has(true) ? 'Yes' : 'No');
const verdictOf = (seen: Set<boolean>): Verdict =>
  seen.size === 2 ? 'AtRisk' : seen.has(true) ? 'Survives' : 'Breaks';

interface Row {
  name: string;
  labels: Record<string, string> | undefined;
  votes: number;
  ready: boolean;
}

/** The number of fillings, to skip inputs too large to brute-force. */
export function fillingCount(members: readonly Member[], s: OracleSettings): number {
  return slotsOf(rows(members, s), s).reduce((n, slot) => n * slot.choices.length, 1);
}

export function oracle(members: readonly Member[], s: OracleSettings): Oracle {
  const all = rows(members, s);
  const voters = all.filter((r) => r.votes > 0);
  const W = voters.reduce((a, r) => a + r.votes, 0);
  const Q = Math.floor(W / 2) + 1;
  const R = voters.filter((r) => r.ready).reduce((a, r) => a + r.votes, 0);
  const has = (r: Row, k: string) =>
    r.labels !== undefined && Object.hasOwn(r.labels, k) && r.labels[k] !== '';
  const byKey = new Map(s.levels.map((l) => [l.key, l]));
  const chain = (k: string): string[] => {
    const c = [k];
    for (let p = byKey.get(k)?.within; p !== undefined; p = byKey.get(p)?.within) c.unshift(p);
    return c;
  };
  const pathIn = (r: Row, k: string): string | undefined =>
    chain(k).every((c) => has(r, c))
      ? chain(k)
          .map((c) => r.labels![c])
          .join('/')
      : undefined;

  const states: Oracle['states'] = {};
  const somePlaced = voters.some((r) => r.labels !== undefined);
  for (const l of s.levels)
    states[l.key] = W > 0 && somePlaced && !voters.some((r) => has(r, l.key)) ? 'NotLabelled' : 'Judged';
  const spatial = s.levels.filter((l) => l.transport !== true);
  const transport = s.levels.filter((l) => l.transport === true);

  // Domains placed in the input, and the partition level.
  const placed = new Map<string, Set<string>>();
  for (const l of spatial)
    placed.set(l.key, new Set(all.map((r) => pathIn(r, l.key)).filter((p): p is string => p !== undefined)));
  const votingDomains = (k: string) =>
    new Set(voters.map((r) => pathIn(r, k)).filter((p) => p !== undefined)).size;
  const partitionLevel =
    s.partitionLevel ?? spatial.find((l) => states[l.key] === 'Judged' && votingDomains(l.key) >= 2)?.key;
  const siteKey = partitionLevel ?? spatial[0]?.key;
  const links = new Map<string, string[]>();
  for (const t of transport)
    links.set(t.key, [...new Set(voters.filter((r) => has(r, t.key)).map((r) => r.labels![t.key]!))]);

  // Outcome sets, filled over every filling.
  const seen = new Map<string, Set<boolean>>();
  const note = (key: string, v: boolean) => {
    const set = seen.get(key) ?? new Set<boolean>();
    set.add(v);
    seen.set(key, set);
  };
  let mostSidesCommitting = 0;
  const slots = slotsOf(all, s);
  const filling: string[] = [];
  const visit = (): void => {
    if (filling.length < slots.length) {
      for (const c of slots[filling.length]!.choices) {
        filling.push(c);
        visit();
        filling.pop();
      }
      return;
    }
    const filled = all.map((r) => ({ ...r, labels: { ...(r.labels ?? {}) } }));
    slots.forEach((slot, i) => {
      if (filling[i] === '') delete filled[slot.row]!.labels[slot.key];
      else filled[slot.row]!.labels[slot.key] = filling[i]!;
    });
    const fv = filled.filter((r) => r.votes > 0);
    const path = (r: Row, k: string) =>
      chain(k)
        .map((c) => r.labels![c])
        .join('/');
    const weigh = (k: string) => {
      const w = new Map<string, { votes: number; ready: number }>();
      for (const r of fv) {
        const p = path(r, k);
        const x = w.get(p) ?? { votes: 0, ready: 0 };
        x.votes += r.votes;
        if (r.ready) x.ready += r.votes;
        w.set(p, x);
      }
      return w;
    };
    for (const l of spatial) {
      const w = weigh(l.key);
      for (const d of placed.get(l.key)!) {
        const x = w.get(d) ?? { votes: 0, ready: 0 };
        note(`v\0${l.key}\0${d}`, W - x.votes >= Q);
        note(`n\0${l.key}\0${d}`, R - x.ready >= Q);
      }
      note(
        `any\0${l.key}`,
        [...w.values()].every((x) => W - x.votes >= Q),
      );
    }
    if (partitionLevel !== undefined) {
      const w = weigh(partitionLevel);
      let committing = 0;
      for (const d of placed.get(partitionLevel)!) note(`side\0${d}`, (w.get(d)?.votes ?? 0) >= Q);
      for (const [d, x] of w) {
        if (x.votes >= Q) committing++;
        if (placed.get(partitionLevel)!.has(d)) {
          note(`in\0${d}`, x.votes >= Q);
          note(`rest\0${d}`, W - x.votes >= Q);
          mostSidesCommitting = Math.max(
            mostSidesCommitting,
            Number(x.votes >= Q) + Number(W - x.votes >= Q),
          );
        }
      }
      for (const d of placed.get(partitionLevel)!)
        if (!w.has(d)) {
          note(`rest\0${d}`, W >= Q);
          note(`in\0${d}`, false);
        }
      note('any-side', committing > 0);
      mostSidesCommitting = Math.max(mostSidesCommitting, committing);
    }
    for (const t of transport)
      for (const x of links.get(t.key)!) {
        const groups = new Map<string, number>();
        let rest = 0;
        for (const r of fv) {
          if (r.labels[t.key] === x) {
            const site = siteKey === undefined ? '' : path(r, siteKey);
            groups.set(site, (groups.get(site) ?? 0) + r.votes);
          } else rest += r.votes;
        }
        const committing = [...groups.values(), rest].filter((v) => v >= Q).length;
        mostSidesCommitting = Math.max(mostSidesCommitting, committing);
        note(`link\0${t.key}\0${x}`, committing > 0);
        note(`linkrest\0${t.key}\0${x}`, rest >= Q);
        // The sites the input names behind the link.
        for (const r of voters)
          if (
            has(r, t.key) &&
            r.labels![t.key] === x &&
            siteKey !== undefined &&
            pathIn(r, siteKey) !== undefined
          )
            note(`cut\0${t.key}\0${x}\0${pathIn(r, siteKey)}`, (groups.get(pathIn(r, siteKey)!) ?? 0) >= Q);
      }
  };
  visit();
  const get = (k: string) => seen.get(k) ?? new Set<boolean>();

  const domains: Oracle['domains'] = new Map();
  const anySingle: Oracle['anySingle'] = {};
  for (const l of spatial) {
    for (const d of placed.get(l.key)!)
      domains.set(`${l.key}\0${d}`, {
        verdict: verdictOf(get(`v\0${l.key}\0${d}`)),
        verdictNow: verdictOf(get(`n\0${l.key}\0${d}`)),
      });
    const a = get(`any\0${l.key}`);
    anySingle[l.key] = W === 0 ? 'False' : a.size === 2 ? 'Unknown' : a.has(true) ? 'True' : 'False';
  }
  let partition: Oracle['partition'];
  if (partitionLevel !== undefined) {
    const sides = new Map([...placed.get(partitionLevel)!].map((d) => [d, three(get(`side\0${d}`))]));
    const result = [...sides.values()].includes('Yes')
      ? 'MajoritySide'
      : get('any-side').has(true)
        ? 'Unknown'
        : 'NoMajority';
    const isolations = new Map(
      [...placed.get(partitionLevel)!].map((d) => [
        d,
        { inside: three(get(`in\0${d}`)), rest: three(get(`rest\0${d}`)) },
      ]),
    );
    partition = { level: partitionLevel, sides, result, isolations };
  }
  const linkResults: Oracle['links'] = new Map();
  for (const t of transport) {
    if (states[t.key] !== 'Judged') continue;
    for (const x of links.get(t.key)!) {
      const cutOff = new Map<string, Three>();
      for (const [k, v] of seen)
        if (k.startsWith(`cut\0${t.key}\0${x}\0`)) cutOff.set(k.split('\0')[3]!, three(v));
      const rest = three(get(`linkrest\0${t.key}\0${x}`));
      const named = rest === 'Yes' || [...cutOff.values()].includes('Yes');
      const any = get(`link\0${t.key}\0${x}`);
      linkResults.set(`${t.key}\0${x}`, {
        cutOff,
        rest,
        verdict: named ? 'Survives' : any.has(true) ? 'AtRisk' : 'Breaks',
      });
    }
  }
  const tristates: string[] = [];
  for (const l of spatial) if (states[l.key] === 'Judged') tristates.push(anySingle[l.key]!);
  for (const t of transport)
    if (states[t.key] === 'Judged') {
      const vs = [...linkResults.entries()]
        .filter(([k]) => k.startsWith(`${t.key}\0`))
        .map(([, v]) => v.verdict);
      tristates.push(
        W === 0 ? 'False' : vs.includes('Breaks') ? 'False' : vs.includes('AtRisk') ? 'Unknown' : 'True',
      );
    }
  const verdict =
    W === 0
      ? 'NoVoters'
      : tristates.includes('False')
        ? 'Breaks'
        : tristates.length === 0 || tristates.includes('Unknown')
          ? 'AtRisk'
          : 'Survives';
  return { W, Q, states, domains, anySingle, partition, links: linkResults, verdict, mostSidesCommitting };
}

function rows(members: readonly Member[], s: OracleSettings): Row[] {
  const out: Row[] = members.map((m) => ({
    name: m.name,
    labels: m.labels === undefined ? undefined : { ...m.labels },
    votes: m.votes ?? 1,
    ready: m.ready ?? true,
  }));
  const found = out.filter((r) => r.votes > 0).length;
  for (let i = 0; i < (s.expectedVoters ?? 0) - found; i++)
    out.push({ name: `(missing ${i})`, labels: undefined, votes: 1, ready: false });
  return out;
}

/** Every unknown label: a member without labels lacks them all; a transport label may be absent. */
function slotsOf(all: readonly Row[], s: OracleSettings): { row: number; key: string; choices: string[] }[] {
  const slots: { row: number; key: string; choices: string[] }[] = [];
  for (const l of s.levels) {
    const values = [...new Set(all.map((r) => r.labels?.[l.key]).filter((v): v is string => !!v))];
    // New values: the n-th unknown label here may take any of n + 1 new ones, so unknown voters
    // may share a new domain or not (without trying every renaming of the same grouping).
    let n = 0;
    all.forEach((r, row) => {
      if (r.votes === 0) return; // a learner's place changes no count
      const known = r.labels !== undefined && Object.hasOwn(r.labels, l.key) && r.labels[l.key] !== '';
      if (known) return;
      if (l.transport === true) {
        if (r.labels === undefined) slots.push({ row, key: l.key, choices: ['', ...values, NEW] });
        return;
      }
      const fresh = Array.from({ length: ++n }, (_, i) => `${NEW}${i}`);
      slots.push({ row, key: l.key, choices: [...values, ...fresh] });
    });
  }
  return slots;
}
