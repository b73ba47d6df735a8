import { linkBetween, type MeshModel } from './standing.js';

/**
 * The groups of members connected to each other: the connected components of the links that the
 * current reports of BOTH ends confirm. A member without a current view confirms nothing and is in
 * no group. Groups come largest first, then by their first member; members in index order.
 *
 * A mesh is dense, so this walks the complement: each member takes every not-yet-placed member it
 * is confirmed with; each check either places a member (n in all) or meets an unconfirmed pair, so
 * the cost is the members plus the unconfirmed pairs, not n².
 */
export function meshGroups(model: MeshModel): number[][] {
  const confirmed = (a: number, b: number) =>
    linkBetween(model, a, b).kind === 'connected' && linkBetween(model, b, a).kind === 'connected';
  const unplaced = new Set<number>();
  model.standings.forEach((s, i) => s.kind === 'current' && unplaced.add(i));
  const groups: number[][] = [];
  for (const start of model.standings.keys()) {
    if (!unplaced.delete(start)) continue;
    const group = [start];
    for (let k = 0; k < group.length; k++) {
      const u = group[k]!;
      for (const v of unplaced)
        if (confirmed(u, v)) {
          unplaced.delete(v);
          group.push(v);
        }
    }
    groups.push(group.sort((a, b) => a - b));
  }
  return groups.sort((a, b) => b.length - a.length || a[0]! - b[0]!);
}
