/**
 * The chaos run's script: a pure function of a seed and a length, so a run can be repeated
 * exactly (same faults, same order, same timing) from the seed its report prints.
 */

export type ChaosAction =
  | { kind: 'status5xx'; code: 500 | 503; forMs: number }
  | { kind: 'dropConnections' }
  | { kind: 'hangLists'; forMs: number }
  | { kind: 'rbacOperator'; forMs: number }
  | { kind: 'rbacAgent'; forMs: number }
  | { kind: 'killOperator'; restartAfterMs: number }
  | { kind: 'failover' }
  | { kind: 'killAgent'; member: number; restartAfterMs: number }
  | { kind: 'createMember' }
  | { kind: 'deleteMember'; member: number }
  | { kind: 'reIp'; ghost: number; ip: number };

export type ChaosKind = ChaosAction['kind'];

export const CHAOS_KINDS: readonly ChaosKind[] = [
  'status5xx',
  'dropConnections',
  'hangLists',
  'rbacOperator',
  'rbacAgent',
  'killOperator',
  'failover',
  'killAgent',
  'createMember',
  'deleteMember',
  'reIp',
];

export interface ScheduledAction {
  /** Milliseconds after the start of the run. */
  at: number;
  action: ChaosAction;
}

/** mulberry32: a small, well-known 32-bit PRNG; enough to make a script repeatable. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface ScheduleOptions {
  seed: number;
  durationMs: number;
  /** Gap between two actions, drawn uniformly in [min, max]. */
  gapMs?: [number, number];
  /** Indexes `member` and `ghost` refer to are taken modulo the live count when run. */
  ghosts?: number;
}

/**
 * Actions in time order. The first round goes through every kind once (in a seeded order), so
 * even a short run covers them all; after that kinds are drawn at random.
 */
export function chaosSchedule(o: ScheduleOptions): ScheduledAction[] {
  const rand = prng(o.seed);
  const [gMin, gMax] = o.gapMs ?? [6_000, 12_000];
  const ghosts = o.ghosts ?? 2;
  const int = (lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo + 1));
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const make = (kind: ChaosKind): ChaosAction => {
    switch (kind) {
      case 'status5xx':
        return { kind, code: pick([500, 503] as const), forMs: int(2_000, 6_000) };
      case 'dropConnections':
        return { kind };
      case 'hangLists':
        return { kind, forMs: int(2_000, 5_000) };
      case 'rbacOperator':
        return { kind, forMs: int(2_000, 6_000) };
      case 'rbacAgent':
        return { kind, forMs: int(2_000, 6_000) };
      case 'killOperator':
        return { kind, restartAfterMs: int(500, 3_000) };
      case 'failover':
        return { kind };
      case 'killAgent':
        return { kind, member: int(0, 99), restartAfterMs: int(500, 3_000) };
      case 'createMember':
        return { kind };
      case 'deleteMember':
        return { kind, member: int(0, 99) };
      case 'reIp':
        return { kind, ghost: int(0, ghosts - 1), ip: int(2, 250) };
    }
  };
  const firstRound = [...CHAOS_KINDS];
  for (let i = firstRound.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [firstRound[i], firstRound[j]] = [firstRound[j]!, firstRound[i]!];
  }
  const out: ScheduledAction[] = [];
  let at = int(gMin, gMax);
  for (let k = 0; at < o.durationMs; k++) {
    const kind = k < firstRound.length ? firstRound[k]! : pick(CHAOS_KINDS);
    out.push({ at, action: make(kind) });
    at += int(gMin, gMax);
  }
  return out;
}
