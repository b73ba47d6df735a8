import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import { run } from './erlang.js';

/**
 * Real BEAM nodes for the libcluster migration test, each on its own loopback address as a pod
 * has its own IP: `<name>@127.0.0.N`, distribution bound to 127.0.0.N, every node on the same
 * distribution port and no epmd (`-erl_epmd_port`), so several nodes may share a name part
 * (libcluster's `<basename>@<ip>`). Each runs test/fixtures/libcluster/mig_probe.erl with one
 * discovery — the libcluster stand-in or the cluster-topology BEAM client (clients/cluster_topology) — and
 * reports nodes() every second and every nodedown on stdout. Nodes halt when their stdin closes.
 */

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
export const clientSource = join(repoRoot, 'clients', 'cluster_topology', 'src');
const fixtures = join(repoRoot, 'test', 'fixtures', 'libcluster');

/** An Erlang atom in a config term. */
export class Atom {
  constructor(readonly name: string) {}
}
export type Term = string | number | boolean | Atom | Term[] | { [k: string]: Term };

/** A value as an Erlang term: strings are binaries, object keys are atoms. */
export function erlTerm(v: Term): string {
  if (v instanceof Atom) {
    if (!/^[a-z][a-z0-9_]*$/.test(v.name)) throw new Error(`not a plain atom: ${v.name}`);
    return v.name;
  }
  if (typeof v === 'string') return `<<"${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"/utf8>>`;
  if (typeof v === 'number') return String(v);
  if (typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) return `[${v.map(erlTerm).join(',')}]`;
  return `#{${Object.entries(v)
    .map(([k, x]) => `${erlTerm(new Atom(k))} => ${erlTerm(x)}`)
    .join(', ')}}`;
}

/** Compiles the stand-in and the probe, and the BEAM client when it is in the tree. */
export async function buildMigrationBeams(root: string): Promise<{ ebin: string; client: boolean }> {
  const ebin = join(root, 'ebin');
  await mkdir(ebin, { recursive: true });
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: root, LANG: 'C' };
  const client = existsSync(clientSource);
  const sources = [join(fixtures, 'libcluster_standin.erl'), join(fixtures, 'mig_probe.erl')];
  if (client)
    for (const f of await readdir(clientSource)) if (f.endsWith('.erl')) sources.push(join(clientSource, f));
  const r = await run('erlc', ['-o', ebin, ...sources], env, 180_000);
  if (r.code !== 0) throw new Error(`erlc failed: ${r.stdout}${r.stderr}`);
  if (client)
    await writeFile(
      join(ebin, 'cluster_topology.app'),
      await readFile(join(clientSource, 'cluster_topology.app.src'), 'utf8'),
    );
  return { ebin, client };
}

async function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const srv = createServer();
    srv.once('error', rej);
    srv.listen(0, '127.0.0.1', () => {
      const a = srv.address();
      srv.close(() => (typeof a === 'object' && a ? res(a.port) : rej(new Error('no port'))));
    });
  });
}

export interface Sample {
  at: number;
  nodes: string[];
}

export class MigrationNode {
  readonly samples: Sample[] = [];
  readonly nodedowns: { at: number; node: string }[] = [];
  output = '';
  startedAt = Date.now();
  joinedAt: number | undefined;
  stoppedAt: number | undefined;
  private partial = '';
  private exited: Promise<void>;

  constructor(
    readonly name: string,
    readonly kind: 'standin' | 'ctopo',
    readonly child: ChildProcess,
  ) {
    child.stdout!.setEncoding('utf8');
    child.stderr!.setEncoding('utf8');
    child.stdout!.on('data', (d: string) => this.onData(d));
    child.stderr!.on('data', (d: string) => (this.output += d));
    this.exited = new Promise((r) => child.once('exit', () => r()));
  }

  private onData(d: string): void {
    this.output += d;
    this.partial += d;
    let nl: number;
    while ((nl = this.partial.indexOf('\n')) >= 0) {
      const line = this.partial.slice(0, nl);
      this.partial = this.partial.slice(nl + 1);
      if (!line.startsWith('{')) continue;
      try {
        const o = JSON.parse(line) as { t: string; at: number; nodes?: string[]; node?: string };
        if (o.t === 'nodes') this.samples.push({ at: o.at, nodes: o.nodes ?? [] });
        if (o.t === 'nodedown') this.nodedowns.push({ at: o.at, node: o.node ?? '' });
      } catch {
        // a log line that starts with {
      }
    }
  }

  get latest(): string[] {
    return this.samples.at(-1)?.nodes ?? [];
  }

  /** SIGTERM (the BEAM stops as on a pod's termination), SIGKILL if it lingers. */
  async stop(): Promise<void> {
    this.stoppedAt ??= Date.now();
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 10_000);
    await this.exited;
    clearTimeout(timer);
  }
}

export class MigrationWorld {
  readonly nodes: MigrationNode[] = [];
  private constructor(
    readonly root: string,
    readonly ebin: string,
    readonly client: boolean,
    readonly port: number,
    readonly inetrc: string,
  ) {}

  static async start(hosts: Record<string, string> = {}): Promise<MigrationWorld> {
    const root = await mkdtemp(join(tmpdir(), 'ctopo-migration-'));
    await writeFile(join(root, '.erlang.cookie'), randomBytes(18).toString('hex'), { mode: 0o400 });
    const inetrc = join(root, 'inetrc');
    const hostLines = Object.entries(hosts).map(
      ([name, ip]) => `{host, {${ip.split('.').join(',')}}, ["${name}"]}.`,
    );
    await writeFile(inetrc, [...hostLines, '{lookup, [file, native]}.', ''].join('\n'));
    const { ebin, client } = await buildMigrationBeams(root);
    return new MigrationWorld(root, ebin, client, await freePort(), inetrc);
  }

  /** Starts `<name>@<host>` with its distribution on `ip`, running `kind` with `conf`. */
  async startNode(
    name: string,
    host: string,
    ip: string,
    kind: 'standin' | 'ctopo',
    conf: Record<string, Term>,
  ): Promise<MigrationNode> {
    const full = `${name}@${host}`;
    const cfg = join(this.root, `${full}-${Date.now()}.config`);
    await writeFile(cfg, `{${kind}, ${erlTerm(conf)}}.\n`);
    const child = spawn(
      'erl',
      [
        '-name',
        full,
        '-noshell',
        '-start_epmd',
        'false',
        // Each node reaches only the nodes its own discovery dials: global's transitive
        // connects would hide a discovery that dials the wrong names.
        '-connect_all',
        'false',
        '-erl_epmd_port',
        String(this.port),
        '-kernel',
        'inet_dist_use_interface',
        `{${ip.split('.').join(',')}}`,
        '-pa',
        this.ebin,
        '-eval',
        'mig_probe:start()',
      ],
      {
        env: {
          PATH: process.env.PATH ?? '/usr/bin:/bin',
          HOME: this.root,
          LANG: 'C',
          ERL_INETRC: this.inetrc,
          MIG_CONFIG: cfg,
          MIG_SAMPLE_MS: '1000',
        },
        stdio: ['pipe', 'pipe', 'pipe'],
        cwd: this.root,
      },
    );
    const node = new MigrationNode(full, kind, child);
    this.nodes.push(node);
    return node;
  }

  running(): MigrationNode[] {
    return this.nodes.filter((n) => n.stoppedAt === undefined);
  }

  async stopAll(): Promise<void> {
    await Promise.all(this.nodes.map((n) => n.stop()));
  }

  /**
   * Every sample of every joined, running node against the nodes joined and running at that
   * moment, and every nodedown of such a node: what was lost, and where. Empty when no node was
   * ever cut off from the nodes still running.
   */
  cutOffs(): string[] {
    const problems: string[] = [];
    const live = (n: MigrationNode, t: number) =>
      n.joinedAt !== undefined && n.joinedAt <= t && (n.stoppedAt === undefined || t < n.stoppedAt);
    for (const x of this.nodes) {
      for (const s of x.samples) {
        if (!live(x, s.at)) continue;
        const missing = this.nodes.filter((y) => y !== x && live(y, s.at) && !s.nodes.includes(y.name));
        if (missing.length > 0)
          problems.push(
            `${x.name} at ${new Date(s.at).toISOString()} saw ${JSON.stringify(s.nodes)}, missing ${missing.map((m) => m.name).join(', ')}`,
          );
      }
      for (const d of x.nodedowns) {
        const y = this.nodes.find((n) => n.name === d.node && live(n, d.at));
        if (live(x, d.at) && y)
          problems.push(`${x.name} lost ${d.node} at ${new Date(d.at).toISOString()} while both ran`);
      }
    }
    return problems;
  }
}
