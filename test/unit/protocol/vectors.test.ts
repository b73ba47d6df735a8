import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  livenessOf,
  peerNodeNames,
  readTopology,
  statusMeaning,
  type LeaseRead,
  type LeaseView,
  type TopologyObject,
} from '../../../operator/protocol/read.js';
import { planRound } from '../../../operator/agent/round.js';
import type { Peer } from '../../../operator/api/types.generated.js';

/**
 * The status protocol's shared vectors (test/protocol-vectors/, README there), run with the
 * TypeScript reader's own pure functions. The OTP library runs the same files
 * (clients/cluster_topology/test/cluster_topology_vectors_tests.erl).
 */

/** From the compiled test (dist/test/unit/protocol/) to the repository's folder. */
export const VECTORS_DIR = resolve(
  dirname(fileURLToPath(import.meta.url)),
  '..',
  '..',
  '..',
  '..',
  'test',
  'protocol-vectors',
);

const CASE_KEYS = ['description', 'doc', 'topology', 'lease', 'now', 'reader', 'expect'];
const READER_KEYS = ['self', 'pod', 'remembered', 'maxPeers'];
const EXPECT_KEYS = ['status', 'liveness', 'act', 'round', 'flags'];

interface Vector {
  topology: TopologyObject;
  lease: LeaseView | 'missing' | { unreadable: string };
  now: string;
  reader: { self: string; pod: string; remembered: string[]; maxPeers?: number };
  expect: {
    status?: { kind: string; names?: string[]; invalid?: { node: string; problem: string }[] };
    liveness?: string;
    act?: boolean;
    round?: { connect: string[]; disconnect: string[] };
    flags?: { node: string; terminating: Flag; ready: Flag; serving: Flag }[];
  };
}

type Flag = boolean | 'unknown';

function leaseRead(lease: Vector['lease']): LeaseRead {
  if (lease === 'missing') return { kind: 'missing' };
  if ('unreadable' in lease) return { kind: 'unreadable', message: lease.unreadable };
  return { kind: 'found', lease };
}

const sorted = (xs: readonly string[]) => [...xs].sort();

/** What the TypeScript reader makes of a vector, in the vector's own terms (only the fields it gives). */
export function outcomeOf(v: Vector): Record<string, unknown> {
  const now = new Date(v.now);
  const limits = v.reader.maxPeers === undefined ? {} : { maxPeers: v.reader.maxPeers };
  const lease = leaseRead(v.lease);
  const out: Record<string, unknown> = {};
  if (v.expect.status !== undefined) {
    const s = statusMeaning(v.topology.status, limits);
    out.status =
      s.kind === 'current'
        ? { kind: s.kind, names: [...s.names], invalid: s.invalid.map((i) => ({ ...i })) }
        : { kind: s.kind };
  }
  if (v.expect.flags !== undefined) {
    const s = statusMeaning(v.topology.status, limits);
    const first = new Map<string, Peer>();
    if (s.kind === 'current') for (const p of s.peers) if (!first.has(p.nodeName)) first.set(p.nodeName, p);
    out.flags =
      s.kind === 'current'
        ? s.names.map((node) => {
            const p = first.get(node)!;
            return {
              node,
              terminating: p.terminating ?? 'unknown',
              ready: p.ready ?? 'unknown',
              serving: p.serving ?? 'unknown',
            };
          })
        : s.kind;
  }
  if (v.expect.liveness !== undefined) out.liveness = livenessOf(lease, now).state;
  const reading = readTopology({ kind: 'read', object: v.topology }, lease, now, limits);
  if (v.expect.act !== undefined) out.act = reading.act;
  if (v.expect.round !== undefined && reading.act) {
    const plan = planRound(
      v.reader.remembered,
      peerNodeNames(reading.list.peers, v.reader.pod),
      v.reader.self,
    );
    out.round = { connect: sorted(plan.connect), disconnect: sorted(plan.disconnect) };
  }
  return out;
}

/** The vector's expectation as compared: the round's lists as sets. */
function expected(v: Vector): Record<string, unknown> {
  const e: Record<string, unknown> = { ...v.expect };
  if (v.expect.round)
    e.round = { connect: sorted(v.expect.round.connect), disconnect: sorted(v.expect.round.disconnect) };
  return e;
}

/** A vector this runner cannot read fails: it never passes by checking nothing. */
function formProblems(v: Record<string, unknown>): string[] {
  const problems: string[] = [];
  const unknown = (where: string, o: unknown, keys: string[]) => {
    if (typeof o !== 'object' || o === null) return problems.push(`${where} is not an object`);
    for (const k of Object.keys(o)) if (!keys.includes(k)) problems.push(`${where} has an unknown key ${k}`);
  };
  unknown('the case', v, CASE_KEYS);
  unknown('reader', v.reader, READER_KEYS);
  unknown('expect', v.expect, EXPECT_KEYS);
  for (const k of ['topology', 'lease', 'now', 'reader', 'expect'])
    if (v[k] === undefined) problems.push(`no ${k}`);
  if (Number.isNaN(Date.parse(String(v.now)))) problems.push(`now ${JSON.stringify(v.now)} is not a time`);
  const e = (v.expect ?? {}) as Record<string, unknown>;
  if (!EXPECT_KEYS.some((k) => e[k] !== undefined)) problems.push('expect gives nothing to compare');
  if (e.round !== undefined && e.act !== true) problems.push('a round is expected only with act: true');
  return problems;
}

const files = readdirSync(VECTORS_DIR)
  .filter((f) => f.endsWith('.json'))
  .sort();

describe('the status protocol vectors (test/protocol-vectors/)', () => {
  it('are there', () => {
    expect(files.length).toBeGreaterThanOrEqual(15);
  });

  it.each(files)('%s', (file) => {
    const v = JSON.parse(readFileSync(join(VECTORS_DIR, file), 'utf8')) as Record<string, unknown>;
    expect(formProblems(v)).toEqual([]);
    const vector = v as unknown as Vector;
    expect(outcomeOf(vector)).toEqual(expected(vector));
  });
});
