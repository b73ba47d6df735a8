/**
 * What the erlang connector's rounds cost, measured (agent.bench.ts uses it, with its operator
 * already running for the namespace): the real
 * `ctopo agent --connector erlang` beside a real local BEAM node, on a real control plane with
 * the real operator, following a ClusterTopology that lists 100 peers — 100 real BEAM nodes
 * on loopback (started with `-connect_all false`, so they do not also mesh among themselves).
 *
 * erl_call is given to the agent as a wrapper script that records each run (time, and whether
 * it asked nodes() or connected/disconnected a node) and then execs the real erl_call, so the
 * CPU the agent's reaped children used (cutime + cstime of /proc/PID/stat) is erl_call's own
 * plus one `sh` start per run. The local node's CPU (what answering costs the application) is
 * read from its /proc/PID/stat. The agent's resident memory (VmRSS) is read every second of each
 * window.
 *
 * With `ghosts`, that many more pods are listed whose names no node answers to (a thousand real
 * BEAM nodes do not fit on this machine): the agent retries their connects at every round, so
 * give such a run a pollingInterval longer than its windows, and the windows measure the agent
 * holding the list, not the retries (the beam-client bench does the same with its `retry_ms`).
 */
import { chmod, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { BenchCluster } from './bench-cluster.js';
import { CT_GROUP_PATH } from './bench-cluster.js';
import { mapLimit } from './concurrency.js';
import { processCpuSeconds, processMemory } from './proc.js';
import { parseProcStatChildrenCpu } from './agent-calls.js';
import { CtopoProcess } from '../test/support/operator-process.js';
import { ErlangTestEnv, type BeamNode } from '../dev/cluster/beam.js';
import { onCleanup } from './cleanup.js';

export interface ErlRun {
  atMs: number;
  /** `nodes` (the round's one look), `connect`, `disconnect`, `other`. */
  kind: string;
}

/** Parses the wrapper's log: `<ns since epoch> <erl_call args…>` per line. Pure. */
export function parseErlRuns(text: string): ErlRun[] {
  const out: ErlRun[] = [];
  for (const line of text.split('\n')) {
    const m = /^(\d{7,}) (.*)$/.exec(line);
    if (!m) continue;
    const args = m[2]!;
    const kind = /erlang nodes/.test(args)
      ? 'nodes'
      : /net_kernel,? connect_node/.test(args)
        ? 'connect'
        : /erlang disconnect_node/.test(args)
          ? 'disconnect'
          : 'other';
    out.push({ atMs: Number(m[1]!.slice(0, -6)) + Number(m[1]!.slice(-6)) / 1e6, kind });
  }
  return out;
}

export interface WindowCost {
  ms: number;
  rounds: number;
  runs: number;
  byKind: Record<string, number>;
  /** CPU seconds: erl_call runs (with their wrapper) and the local node answering them. */
  erlCallCpu: number;
  localNodeCpu: number;
  agentCpu: number;
  /** The agent's VmRSS, read every second of the window (bytes). */
  rssBytes: number[];
}

export interface ErlangRoundsResult {
  peers: number;
  /** Listed peers no node answers to. */
  ghosts: number;
  pollingInterval: string;
  idle: WindowCost;
  /** The minute after one peer's pod was deleted (the round that carried it included). */
  leave?: WindowCost;
  /** The minute after one new peer's pod got its IP (the round that carried it included). */
  join?: WindowCost;
  otp: string;
}

const WRAPPER = (real: string, log: string) =>
  [
    '#!/bin/sh',
    '# ctopo agent benchmark: records each erl_call run, then runs the real one.',
    `printf '%s %s\\n' "$(date +%s%N)" "$*" >> '${log}'`,
    `exec '${real}' "$@"`,
    '',
  ].join('\n');

export async function measureErlangRounds(
  cluster: BenchCluster,
  dir: string,
  opts: {
    peers: number;
    windowMs: number;
    pollingInterval: string;
    log: (l: string) => void;
    /** Default 0. */
    ghosts?: number;
    /** Default: only the idle window when there are ghosts, else all three. */
    changes?: boolean;
  },
): Promise<ErlangRoundsResult> {
  const { peers, windowMs, log } = opts;
  const ghosts = opts.ghosts ?? 0;
  const changes = opts.changes ?? ghosts === 0;
  const ns = cluster.namespace;
  const world = await ErlangTestEnv.start({ tmp: dir });
  const stopWorld = onCleanup('BEAM nodes of the erlang rounds', () => world.stop());
  const stops: (() => Promise<void>)[] = [];
  try {
    const light = ['-connect_all', 'false', '+S', '1:1', '+SDio', '1', '+A', '1'];
    log(`erlang rounds: starting the local node and ${peers} peer nodes`);
    const local = await world.startNode('agent', { args: ['-connect_all', 'false'] });
    // On a loaded machine a node can miss startNode's 15 s: try again (a failed start is stopped).
    const start = async (name: string): Promise<BeamNode> => {
      for (let attempt = 1; ; attempt++)
        try {
          return await world.startNode(name, { args: light });
        } catch (e) {
          if (attempt >= 4) throw e;
        }
    };
    const peerNodes: BeamNode[] = await mapLimit(
      Array.from({ length: peers + 1 }, (_, i) => i),
      3,
      (i) => start(`peer${i}`),
    );
    const otp = (await world.rpc(local.name, 'erlang system_info [otp_release]')).stdout.trim();

    const label = { 'bench/beam': 'yes' };
    const pod = (name: string) => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: ns, labels: label },
      spec: { containers: [{ name: 'app', image: 'example.invalid/app' }] },
    });
    const startedAt = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    const giveIp = (name: string) =>
      cluster.kube.request('PATCH', `/api/v1/namespaces/${ns}/pods/${name}/status`, {
        body: {
          status: {
            phase: 'Running',
            podIP: '127.0.0.1',
            podIPs: [{ ip: '127.0.0.1' }],
            startTime: startedAt,
            conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: startedAt }],
          },
        },
        contentType: 'application/merge-patch+json',
      });
    const names = ['agent', ...Array.from({ length: peers + 1 }, (_, i) => `peer${i}`)];
    const ghostNames = Array.from({ length: ghosts }, (_, i) => `ghost${i}`);
    await mapLimit([...names, ...ghostNames], 16, (n) =>
      cluster.kube.request('POST', `/api/v1/namespaces/${ns}/pods`, { body: pod(n) }),
    );
    // peer<peers> is the one that joins later: no IP yet.
    await mapLimit([...names.slice(0, -1), ...ghostNames], 16, giveIp);
    await cluster.kube.request('POST', `${CT_GROUP_PATH}/namespaces/${ns}/clustertopologies`, {
      body: {
        apiVersion: 'cluster.netzlive.io/v1alpha1',
        kind: 'ClusterTopology',
        metadata: { name: 'beam', namespace: ns },
        spec: { selector: 'bench/beam=yes', pollingInterval: opts.pollingInterval },
      },
    });
    const runLog = join(dir, 'erl_call.log');
    const wrapper = join(dir, 'erl_call');
    await writeFile(runLog, '');
    await writeFile(wrapper, WRAPPER(world.erlCall, runLog), { mode: 0o700 });
    await chmod(wrapper, 0o700);
    const agent = new CtopoProcess(
      [
        'agent',
        '--kubeconfig',
        cluster.state.kubeconfig,
        '--namespace',
        ns,
        '--topology',
        'beam',
        '--connector',
        'erlang',
        '--node-name',
        local.name,
        '--pod-name',
        'agent',
        '--cookie-file',
        world.cookieFile,
        '--erl-call',
        wrapper,
        '--http-host',
        '127.0.0.1',
        '--http-port',
        '0',
      ],
      { ERL_EPMD_PORT: String(world.epmdPort) },
    );
    stops.push(onCleanup(`erlang agent ${agent.child.pid}`, async () => void (await agent.stop())));
    await agent.port();
    const deadline = Date.now() + 180_000 + ghosts * 500;
    while ((await agent.metric('ctopo_agent_connected_peers').catch(() => undefined)) !== peers) {
      if (Date.now() > deadline || agent.exitCode !== undefined)
        throw new Error(`the erlang agent did not connect ${peers} peers: ${agent.output.slice(-2000)}`);
      await new Promise((r) => setTimeout(r, 500));
    }
    const connectedNow = await world.nodesOf(local.name);
    if (connectedNow.length < peers) throw new Error(`the local node holds ${connectedNow.length} peers`);
    if (ghosts === 0) {
      // Settle: two more rounds after everyone is connected.
      const r0 = await agent.metricSum('ctopo_agent_rounds_total');
      while ((await agent.metricSum('ctopo_agent_rounds_total')) < r0 + 2)
        await new Promise((r) => setTimeout(r, 500));
    } else {
      // Settle: the rounds that retry the ghosts (the agent's first polling timer is its default,
      // set before it knows the topology's interval) are over once no erl_call ran for 15 s.
      for (;;) {
        const runs = parseErlRuns(await readFile(runLog, 'utf8'));
        const last = runs.length ? runs[runs.length - 1]!.atMs : 0;
        if (Date.now() - last > 15_000) break;
        if (Date.now() > deadline) throw new Error('the erlang agent did not settle');
        await new Promise((r) => setTimeout(r, 1000));
      }
    }

    const pid = agent.child.pid!;
    const window = async (what: string, change?: () => Promise<void>): Promise<WindowCost> => {
      log(`erlang rounds: ${what}, ${windowMs / 1000} s`);
      const before = {
        at: Date.now(),
        rounds: await agent.metricSum('ctopo_agent_rounds_total'),
        child: parseProcStatChildrenCpu(await readFile(`/proc/${pid}/stat`, 'utf8')),
        node: await processCpuSeconds(local.pid),
        agent: await processCpuSeconds(pid),
      };
      await change?.();
      const rssBytes: number[] = [];
      const end = Date.now() + windowMs;
      while (Date.now() < end) {
        rssBytes.push((await processMemory(pid)).rssBytes);
        await new Promise((r) => setTimeout(r, Math.min(1000, Math.max(0, end - Date.now()))));
      }
      const to = Date.now();
      const runs = parseErlRuns(await readFile(runLog, 'utf8')).filter(
        (x) => x.atMs >= before.at && x.atMs < to,
      );
      const byKind: Record<string, number> = {};
      for (const x of runs) byKind[x.kind] = (byKind[x.kind] ?? 0) + 1;
      return {
        ms: to - before.at,
        rounds: (await agent.metricSum('ctopo_agent_rounds_total')) - before.rounds,
        runs: runs.length,
        byKind,
        erlCallCpu: parseProcStatChildrenCpu(await readFile(`/proc/${pid}/stat`, 'utf8')) - before.child,
        localNodeCpu: (await processCpuSeconds(local.pid)) - before.node,
        agentCpu: (await processCpuSeconds(pid)) - before.agent,
        rssBytes,
      };
    };
    const idle = await window('nothing changing');
    const base = { peers, ghosts, pollingInterval: opts.pollingInterval, idle, otp };
    void peerNodes;
    if (!changes) return base;
    const leave = await window('one peer leaves (its pod deleted)', async () => {
      await cluster.kube.request('DELETE', `/api/v1/namespaces/${ns}/pods/peer0`);
    });
    const join_ = await window('one peer joins (its pod gets an IP)', async () => {
      await giveIp(`peer${peers}`);
    });
    return { ...base, leave, join: join_ };
  } finally {
    for (const s of stops.reverse()) await s();
    await stopWorld();
  }
}
