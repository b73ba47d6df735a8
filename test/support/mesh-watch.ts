import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { run, type ErlangTestEnv } from './erlang.js';

/**
 * Watches real BEAM nodes so that nothing between two looks hides: on every watched node a small
 * Erlang process subscribes to net_kernel:monitor_nodes/2 and keeps every nodedown it hears
 * (with its reason), and this side asks every node's nodes() once a second. A check then says
 * whether a node lost a peer at any time since a mark — not only whether it holds it now.
 */

const MONITOR = `-module(ctopo_mesh_watch).
-export([start/0, downs/0]).

start() ->
    case whereis(ctopo_mesh_watch) of
        undefined ->
            Parent = self(),
            spawn(fun() -> init(Parent) end),
            receive {ctopo_mesh_watch, started} -> ok after 5000 -> timeout end;
        _ -> ok
    end.

init(Parent) ->
    register(ctopo_mesh_watch, self()),
    ok = net_kernel:monitor_nodes(true, [nodedown_reason]),
    Parent ! {ctopo_mesh_watch, started},
    loop([]).

loop(Downs) ->
    receive
        {nodedown, Node, Info} ->
            Reason = proplists:get_value(nodedown_reason, Info),
            loop([{down, Node, Reason, erlang:system_time(millisecond)} | Downs]);
        {downs, From} ->
            From ! {ctopo_mesh_watch, lists:reverse(Downs)},
            loop(Downs);
        _ ->
            loop(Downs)
    end.

downs() ->
    ctopo_mesh_watch ! {downs, self()},
    receive {ctopo_mesh_watch, D} -> D after 5000 -> timeout end.
`;

export interface NodeDown {
  readonly node: string;
  readonly reason: string;
  /** When the node heard it (its OS clock, milliseconds since the epoch: this host's Date.now()). */
  readonly at: number;
}

interface Sample {
  readonly at: number;
  readonly node: string;
  readonly nodes: readonly string[] | undefined;
}

export class MeshWatch {
  private samples: Sample[] = [];
  private timer: NodeJS.Timeout | undefined;
  private readonly watched = new Set<string>();
  private sampling = false;

  private constructor(
    private readonly erl: ErlangTestEnv,
    private readonly beamDir: string,
  ) {}

  /**
   * Compiles the monitor module once; `stop()` removes it. `sample: false` leaves nodes() to the
   * caller (only the nodedowns are kept).
   */
  static async create(erl: ErlangTestEnv, tmp: string, opts: { sample?: boolean } = {}): Promise<MeshWatch> {
    const dir = await mkdtemp(join(tmp, 'mesh-watch-'));
    await writeFile(join(dir, 'ctopo_mesh_watch.erl'), MONITOR);
    const r = await run('erlc', ['-o', dir, join(dir, 'ctopo_mesh_watch.erl')], erl.childEnv());
    if (r.code !== 0) throw new Error(`erlc failed: ${r.stderr || r.stdout}`);
    const w = new MeshWatch(erl, dir);
    if (opts.sample !== false) w.timer = setInterval(() => void w.sample(), 1000);
    return w;
  }

  /** Loads and starts the monitor on `node` (again after the node restarted) and samples it. */
  async watch(node: string): Promise<void> {
    const load = await this.erl.rpc(node, `code load_abs ['${join(this.beamDir, 'ctopo_mesh_watch')}']`);
    if (load.code !== 0 || !load.stdout.includes('module'))
      throw new Error(`loading the monitor on ${node}: ${load.stdout} ${load.stderr}`);
    const start = await this.erl.rpc(node, 'ctopo_mesh_watch start []');
    if (start.code !== 0 || start.stdout.trim() !== 'ok')
      throw new Error(`starting the monitor on ${node}: ${start.stdout} ${start.stderr}`);
    this.watched.add(node);
  }

  unwatch(node: string): void {
    this.watched.delete(node);
  }

  /** Every nodedown `node` heard since its monitor started. */
  async downs(node: string): Promise<NodeDown[]> {
    const r = await this.erl.rpc(node, 'ctopo_mesh_watch downs []');
    if (r.code !== 0 || !r.stdout.trim().startsWith('['))
      throw new Error(`asking ${node} for its nodedowns: ${r.stdout} ${r.stderr}`);
    return [...r.stdout.matchAll(/\{down,\s*'([^']+)',\s*(\w+),\s*(\d+)\}/g)].map((m) => ({
      node: m[1]!,
      reason: m[2]!,
      at: Number(m[3]),
    }));
  }

  /** A point in time to check from: the nodedowns counted so far on each watched node. */
  async mark(): Promise<Mark> {
    const downs = new Map<string, number>();
    for (const n of this.watched) downs.set(n, (await this.downs(n)).length);
    return { at: Date.now(), downs };
  }

  /**
   * What went wrong since `mark` for `node` expected to hold `peers` all along: a nodedown of one
   * of them, or a sample of nodes() without one of them. Empty when nothing did.
   */
  async lossesSince(mark: Mark, node: string, peers: readonly string[]): Promise<string[]> {
    const out: string[] = [];
    const downs = (await this.downs(node)).slice(mark.downs.get(node) ?? 0);
    for (const d of downs) if (peers.includes(d.node)) out.push(`${node}: nodedown ${d.node} (${d.reason})`);
    const samples = this.samples.filter((s) => s.node === node && s.at >= mark.at);
    if (samples.length === 0) out.push(`${node}: no sample of nodes() since the mark`);
    for (const s of samples) {
      const missing = s.nodes ? peers.filter((p) => !s.nodes!.includes(p)) : ['(no answer)'];
      if (missing.length) out.push(`${node} at +${s.at - mark.at} ms: nodes() lacks ${missing.join(', ')}`);
    }
    return out;
  }

  /** Samples taken of `node` since `mark`. */
  samplesSince(mark: Mark, node: string): number {
    return this.samples.filter((s) => s.node === node && s.at >= mark.at).length;
  }

  private async sample(): Promise<void> {
    if (this.sampling) return; // a slow round of asking: skip a beat rather than pile up
    this.sampling = true;
    try {
      await Promise.all(
        [...this.watched].map(async (node) => {
          const at = Date.now();
          const nodes = await this.erl.nodesOf(node).catch(() => undefined);
          this.samples.push({ at, node, nodes });
        }),
      );
    } finally {
      this.sampling = false;
    }
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await rm(this.beamDir, { recursive: true, force: true });
  }
}

export interface Mark {
  readonly at: number;
  readonly downs: ReadonlyMap<string, number>;
}
