import type { ClusterTopologyStatus } from '../api/types.generated.js';
import { deepEqual } from '../api/json.js';

/**
 * A status write as a JSON Patch (RFC 6902) of what changed, instead of a merge patch, which
 * can only replace an array whole: one pod's change to a 5,000-peer status is then a few hundred
 * bytes for the API server to apply, not the whole peer list (1.25 MB) to decode and merge. The
 * peer and excluded lists are patched element by element, by their sort key (nodeName, pod). Pure.
 */

export type JsonPatchOp =
  { op: 'add' | 'replace'; path: string; value: unknown } | { op: 'remove'; path: string };

/** The lists patched element by element, and the key each is sorted by and unique in. */
const KEYED: Record<string, string> = { peers: 'nodeName', excluded: 'pod' };

/** Ops turning `before` into `after` under `/status`; undefined when there is no status to patch. */
export function statusPatchOps(
  before: ClusterTopologyStatus | undefined,
  after: ClusterTopologyStatus,
): JsonPatchOp[] | undefined {
  if (!before) return undefined;
  const b = before as Record<string, unknown>;
  const a = after as Record<string, unknown>;
  const ops: JsonPatchOp[] = [];
  for (const k of new Set([...Object.keys(b), ...Object.keys(a)])) {
    const path = `/status/${pointer(k)}`;
    if (!(k in a)) ops.push({ op: 'remove', path });
    else if (!(k in b)) ops.push({ op: 'add', path, value: a[k] });
    else if (deepEqual(b[k], a[k])) continue;
    else {
      const by = KEYED[k];
      const list = by ? listOps(path, b[k], a[k], by) : undefined;
      ops.push(...(list ?? [{ op: 'replace' as const, path, value: a[k] }]));
    }
  }
  return ops;
}

/**
 * Element ops from list `before` to `after`, both sorted by `key` and unique in it: the removals
 * from the end, then the additions in the new order, then the replacements at their new places.
 * Undefined (replace the list whole) when the lists are not such lists, or when most of it changed.
 */
function listOps(path: string, before: unknown, after: unknown, key: string): JsonPatchOp[] | undefined {
  if (!Array.isArray(before) || !Array.isArray(after)) return undefined;
  const keyOf = (e: unknown) =>
    e && typeof e === 'object' ? (e as Record<string, unknown>)[key] : undefined;
  const at = new Map<unknown, number>();
  for (const [i, e] of before.entries()) {
    const k = keyOf(e);
    if (typeof k !== 'string' || at.has(k)) return undefined;
    at.set(k, i);
  }
  const kept = new Set<unknown>();
  let last = -1;
  const adds: JsonPatchOp[] = [];
  const replaces: JsonPatchOp[] = [];
  for (const [j, e] of after.entries()) {
    const k = keyOf(e);
    if (typeof k !== 'string' || kept.has(k)) return undefined;
    const i = at.get(k);
    if (i === undefined) {
      adds.push({ op: 'add', path: `${path}/${j}`, value: e });
      continue;
    }
    // The elements kept must keep their order, or the new places would not be where they land.
    if (i < last) return undefined;
    last = i;
    kept.add(k);
    if (!deepEqual(before[i], e)) replaces.push({ op: 'replace', path: `${path}/${j}`, value: e });
  }
  const removes: JsonPatchOp[] = [];
  for (let i = before.length - 1; i >= 0; i--)
    if (!kept.has(keyOf(before[i]))) removes.push({ op: 'remove', path: `${path}/${i}` });
  const ops = [...removes, ...adds, ...replaces];
  return ops.length * 2 > Math.max(before.length, after.length) ? undefined : ops;
}

/** A JSON Pointer reference token (RFC 6901). */
function pointer(token: string): string {
  return token.replace(/~/g, '~0').replace(/\//g, '~1');
}
