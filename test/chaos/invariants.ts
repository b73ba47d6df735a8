/**
 * The chaos run's invariant checker: fed with what the run did and what it observed (the
 * topology's status, each BEAM node's connections), it counts the violations the product
 * promises never happen, and measures how long real changes took to reach the status.
 *
 * Losses are heard from two sources: every nodedown a node's own monitor records (with its exact
 * time, so a drop mended before the next look still counts) and samples of nodes() (which also
 * show whether an excused drop was mended). A loss both report is judged once.
 *
 * - emptiedPeers: a status with a lastResponse and an empty peer list. The topology runs with
 *   onForbidden Retain and always has members, so only a bug empties it (Disconnect on 403 is
 *   the one legitimate reason, and it is not configured).
 * - lostConnections: a BEAM node that had a connection to a member lost it while that member
 *   stayed listed in every status seen since, its node alive and not being removed.
 *   lostAfterLeave counts apart the losses OTP's global causes while a departed member is being
 *   disconnected: when the agents disconnect a departed node one after another, that node, still
 *   running, tells the others it lost the ones that already let it go, and global (its
 *   prevent_overlapping_partitions, on by default since OTP 25) on each of them drops its
 *   connection to those. Only possible from the moment the status stops listing the departed
 *   node (after the last read that still listed it) until a moment after its process stopped
 *   (markGone): a dead node tells no one. The harness re-reads the status when it sees a loss,
 *   so an unlisting the agents heard first is known. Such a loss is excused only if the agent
 *   mends it: a pair still apart MEND_LIMIT_MS later, both alive and listed, is a lost
 *   connection.
 * - statusFlaps: the peer list went A → B → A with no scripted pod change after the first step.
 * - changeLatencyMs: per scripted pod change, from the change to the first status showing it.
 */

/** After a departed node's process stopped, how long its last messages may still be in flight. */
export const GONE_GRACE_MS = 3_000;
/** How long the agent has to connect a pair again after global dropped it (rounds every 2 s). */
export const MEND_LIMIT_MS = 30_000;

/** What the run did: each action attempted, and those whose effect was observed. */
export interface ActionLog {
  attempted: Record<string, number>;
  /** Per kind, the actions whose effect was observed: the only ones that count. */
  tookEffect: Record<string, number>;
  /** One line per action that took effect: when, and what was observed. */
  effects: string[];
  /** Actions the script asked for that could not apply then (not run). */
  skipped: string[];
  /** Actions that failed, or whose effect never showed. */
  failed: string[];
}

export interface ChaosReport extends ActionLog {
  seed: number;
  minutes: number;
  statusSamples: number;
  meshSamples: number;
  /** Nodedowns the nodes' monitors heard (of members alive at the time). */
  nodedowns: number;
  /** Losses a sample of nodes() showed that no monitor reported (judged all the same). */
  lossesSampledOnly: number;
  emptiedPeers: number;
  lostConnections: number;
  lostAfterLeave: number;
  statusFlaps: number;
  changes: number;
  changesNotSeen: number;
  longestChangeMs: number;
  medianChangeMs: number;
  violations: string[];
  /** Every excused loss with the departure it is put down to, and the status changes' times. */
  notes: string[];
}

interface PendingChange {
  what: string;
  at: number;
  seen: (peers: readonly string[]) => boolean;
}

export class InvariantChecker {
  emptiedPeers = 0;
  lostConnections = 0;
  lostAfterLeave = 0;
  statusFlaps = 0;
  statusSamples = 0;
  meshSamples = 0;
  nodedowns = 0;
  lossesSampledOnly = 0;
  readonly violations: string[] = [];
  readonly notes: string[] = [];
  readonly latencies: number[] = [];
  private pending: PendingChange[] = [];
  private lastChangeAt = -Infinity;
  private lists: { key: string; at: number }[] = [];
  /** Per member: since when each other member has been continuously listed (absent = not listed). */
  private listedSince = new Map<string, number>();
  /** Per (observer, peer): connected at the last mesh sample. */
  private connected = new Set<string>();
  private leaving = new Set<string>();
  /**
   * Per departed node: the last read that still listed it (its start), the first that did not,
   * and when its process stopped.
   */
  private departures = new Map<string, { listedAt: number; unlistedAt?: number; goneAt?: number }>();
  /** Per observer: the time of its previous mesh sample (a loss happened since then). */
  private sampledAt = new Map<string, number>();
  /** Excused drops (pair → by when the agent must have connected it again). */
  private toMend = new Map<string, number>();

  /** A scripted pod change at `at`; `seen` says whether a peer list shows it. */
  expectChange(what: string, at: number, seen: (peers: readonly string[]) => boolean): void {
    this.lastChangeAt = at;
    this.pending.push({ what, at, seen });
  }

  /** A member is being removed (its pod deleted): its connections may go. */
  markLeaving(node: string, at: number): void {
    this.leaving.add(node);
    // Listed at least until its pod is deleted: the operator cannot unlist it earlier.
    if (!this.departures.has(node)) this.departures.set(node, { listedAt: at });
  }

  /** A departed member's process stopped at `at`. */
  markGone(node: string, at: number): void {
    const d = this.departures.get(node);
    if (d) d.goneAt = at;
  }

  /**
   * The departed node whose disconnection can explain a loss that happened in (from, to]: one
   * that a status no longer listed before `to` (no read that began at or after `to` still
   * listed it) and whose process had not stopped, or only just, by `from`.
   */
  private departureDuring(from: number, to: number): string | undefined {
    for (const [node, d] of this.departures)
      if (d.unlistedAt !== undefined && d.listedAt < to && (d.goneAt ?? Infinity) + GONE_GRACE_MS >= from)
        return node;
    return undefined;
  }

  /**
   * A status read that ended at `at`; `readFrom` is when the read began (the content is from
   * somewhere in between; default `at`).
   */
  observeStatus(
    at: number,
    peers: readonly string[] | undefined,
    hasLastResponse: boolean,
    readFrom = at,
  ): void {
    if (!hasLastResponse || peers === undefined) return; // unknown: nothing to judge
    this.statusSamples++;
    if (peers.length === 0) {
      this.emptiedPeers++;
      this.violations.push(`${at} ms: the peer list is empty`);
    }
    for (const p of this.pending.filter((c) => c.seen(peers))) this.latencies.push(at - p.at);
    this.pending = this.pending.filter((c) => !c.seen(peers));

    const key = [...peers].sort().join(',');
    const last = this.lists[this.lists.length - 1];
    if (!last || last.key !== key) {
      const before = this.lists[this.lists.length - 2];
      if (last && before && before.key === key && this.lastChangeAt < last.at) {
        this.statusFlaps++;
        this.violations.push(`${at} ms: the peer list went back to [${key}] with no pod change`);
      }
      this.lists.push({ key, at });
      this.note(`${at} ms: peers [${key}]`);
      if (this.lists.length > 3) this.lists.shift();
    }
    // The agents disconnect a departed member once the status stops listing it: global's drops
    // can start then (a leader failover can delay it well past the deletion). The agents hear
    // it on their watch before this read does: the last read that still listed it bounds it.
    for (const [n, d] of this.departures)
      if (d.unlistedAt !== undefined) continue;
      else if (peers.includes(n)) d.listedAt = Math.max(d.listedAt, readFrom);
      else {
        d.unlistedAt = at;
        this.note(`${at} ms: ${n} is no longer listed (listed in the read begun at ${d.listedAt} ms)`);
      }
    for (const n of [...this.listedSince.keys()]) if (!peers.includes(n)) this.listedSince.delete(n);
    for (const n of peers) if (!this.listedSince.has(n)) this.listedSince.set(n, at);
  }

  /**
   * A nodedown `observer`'s monitor heard at `at` (exact): it lost `peer`. `members` are the
   * nodes alive now; `stillListed` re-reads the status.
   */
  async observeDown(
    at: number,
    observer: string,
    peer: string,
    reason: string,
    members: ReadonlySet<string>,
    stillListed: (node: string) => Promise<boolean>,
  ): Promise<void> {
    if (!members.has(peer)) return; // its process stopped: nothing to keep
    this.nodedowns++;
    const pair = `${observer} ${peer}`;
    // Judged here; the next sample that misses the peer must not count it again.
    this.connected.delete(pair);
    await this.judgeLoss(pair, observer, peer, at, at, `nodedown (${reason})`, stillListed);
  }

  /**
   * What `observer` is connected to at `at`; `members` are the nodes alive at that moment.
   * `stillListed` re-reads the status, so a peer unlisted between two samples is not counted.
   * Feed the nodedowns heard up to this sample first (observeDown): a loss they reported is not
   * judged again.
   */
  async observeMesh(
    at: number,
    observer: string,
    nodes: readonly string[],
    members: ReadonlySet<string>,
    stillListed: (node: string) => Promise<boolean>,
  ): Promise<void> {
    this.meshSamples++;
    const since = this.sampledAt.get(observer) ?? -Infinity;
    this.sampledAt.set(observer, at);
    for (const peer of members) {
      if (peer === observer) continue;
      const pair = `${observer} ${peer}`;
      const now = nodes.includes(peer);
      if (now) {
        this.connected.add(pair);
        this.toMend.delete(pair);
        continue;
      }
      const mendBy = this.toMend.get(pair);
      if (mendBy !== undefined && at > mendBy) {
        this.toMend.delete(pair);
        if (this.leaving.has(peer) || this.leaving.has(observer) || !(await stillListed(peer))) continue;
        this.lostConnections++;
        this.violations.push(
          `${at} ms: ${observer} is still not connected to ${peer} (listed) ${MEND_LIMIT_MS / 1000} s after global dropped it`,
        );
        continue;
      }
      if (!this.connected.has(pair)) continue;
      this.connected.delete(pair);
      this.lossesSampledOnly++;
      await this.judgeLoss(pair, observer, peer, since, at, `connected at ${since} ms`, stillListed);
    }
  }

  /** A loss of `peer` by `observer` somewhere in (from, to]: a violation, excused, or nothing. */
  private async judgeLoss(
    pair: string,
    observer: string,
    peer: string,
    from: number,
    to: number,
    how: string,
    stillListed: (node: string) => Promise<boolean>,
  ): Promise<void> {
    if (this.leaving.has(peer) || this.leaving.has(observer)) return;
    if (!this.listedSince.has(peer)) return;
    if (!(await stillListed(peer))) return;
    const departed = this.departureDuring(from, to);
    if (departed !== undefined) {
      this.lostAfterLeave++;
      this.toMend.set(pair, to + MEND_LIMIT_MS);
      this.note(`${to} ms: ${observer} lost ${peer} (${how}) while ${departed} was being disconnected`);
      return;
    }
    this.lostConnections++;
    this.violations.push(
      `${to} ms: ${observer} lost its connection to ${peer} (${how}), which stayed listed`,
    );
  }

  note(line: string): void {
    if (this.notes.length < 2_000) this.notes.push(line);
  }

  report(base: { seed: number; minutes: number; actions: ActionLog }): ChaosReport {
    const sorted = [...this.latencies].sort((a, b) => a - b);
    return {
      seed: base.seed,
      minutes: base.minutes,
      ...base.actions,
      statusSamples: this.statusSamples,
      meshSamples: this.meshSamples,
      nodedowns: this.nodedowns,
      lossesSampledOnly: this.lossesSampledOnly,
      emptiedPeers: this.emptiedPeers,
      lostConnections: this.lostConnections,
      lostAfterLeave: this.lostAfterLeave,
      statusFlaps: this.statusFlaps,
      changes: this.latencies.length + this.pending.length,
      changesNotSeen: this.pending.length,
      longestChangeMs: sorted.length ? sorted[sorted.length - 1]! : 0,
      medianChangeMs: sorted.length ? sorted[Math.floor(sorted.length / 2)]! : 0,
      violations: this.violations.slice(0, 50),
      notes: [...this.notes],
    };
  }
}

export function formatChaosReport(r: ChaosReport): string {
  const counts = (m: Record<string, number>) =>
    Object.entries(m)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ') || 'none';
  return [
    `chaos run: seed ${r.seed}, ${r.minutes} min`,
    `actions that took effect: ${counts(r.tookEffect)}`,
    `  (attempted: ${counts(r.attempted)}; skipped ${r.skipped.length}, failed ${r.failed.length})`,
    ...r.effects.map((e) => `  ${e}`),
    ...r.skipped.map((e) => `  skipped: ${e}`),
    ...r.failed.map((e) => `  FAILED: ${e}`),
    `status samples ${r.statusSamples}, mesh samples ${r.meshSamples}, nodedowns heard by the nodes' monitors ${r.nodedowns} (losses only a sample showed: ${r.lossesSampledOnly})`,
    `peers emptied without Disconnect-on-403: ${r.emptiedPeers} (must be 0)`,
    `BEAM connections lost to a peer that stayed listed: ${r.lostConnections} (must be 0)`,
    `  … and while a departed member was being disconnected (OTP global's partition prevention; connected again by the agent): ${r.lostAfterLeave}`,
    `status flaps: ${r.statusFlaps} (must be 0)`,
    `real changes: ${r.changes}, not seen in the status by the end: ${r.changesNotSeen}`,
    `longest time a real change took to reach the status: ${(r.longestChangeMs / 1000).toFixed(1)} s (median ${(r.medianChangeMs / 1000).toFixed(1)} s)`,
    ...r.violations.map((v) => `  violation: ${v}`),
  ].join('\n');
}
