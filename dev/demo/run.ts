import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { access, constants, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { installCrd } from '../cluster/crd.js';
import type { ClusterTopologyStatus } from '../../operator/api/types.generated.js';
import { startControlPlane, stopControlPlane, type ControlPlaneState } from '../cluster/control-plane.js';
import { compileBeamClient, ErlangTestEnv } from '../cluster/beam.js';
import { connect, type Kube } from '../../operator/kube/client.js';
import {
  NAMESPACES_PATH,
  NODES_PATH,
  podStatusPath,
  podsPath,
  topologiesPath,
} from '../../operator/kube/paths.js';
import { formatResolveTable } from '../../operator/cli/resolve-format.js';
import { formatAnalysisTable } from '../../operator/cli/analysis-table.js';
import { analysisFromStatus } from '../../operator/cli/status-analysis.js';
import { statusMeaning } from '../../operator/protocol/read.js';
import { getTopology } from '../../operator/protocol/get.js';
import { NAMESPACE, TOPOLOGY, nodes, pods, topology, SITE, HYPERVISOR } from './scenario.js';

const run = promisify(execFile);
const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const ctopo = join(repoRoot, 'bin', 'ctopo.js');
/** The demo nodes' module: starts the client library under a supervisor, reports its state. */
const demoModule = join(repoRoot, 'dev', 'demo', 'beam', 'ct_demo.erl');

export interface DemoOptions {
  dir?: string;
  keep: boolean;
  /**
   * How the BEAM nodes join. Default: `library` (each node runs the OTP client library) where
   * erl, erlc and erl_call are on PATH, else `file`. `erlang` and `file`: the sidecar agent with
   * that connector.
   */
  connector?: 'library' | 'erlang' | 'file';
  out: (text: string) => void;
  err: (text: string) => void;
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`demo: timed out waiting for ${what}`);
    await sleep(250);
  }
}

async function hasErlang(): Promise<boolean> {
  for (const dir of (process.env.PATH ?? '').split(':'))
    if (dir)
      try {
        for (const p of ['erl_call', 'erl', 'erlc']) await access(join(dir, p), constants.X_OK);
        return true;
      } catch {
        /* next */
      }
  return false;
}

/**
 * The README's first command: everything on a throwaway control plane, results printed. Every
 * process it starts is stopped at the end (unless --keep) and on SIGINT/SIGTERM.
 */
export async function runDemo(o: DemoOptions): Promise<number> {
  const t0 = Date.now();
  const dir = o.dir ?? (await mkdtemp(join(tmpdir(), 'ctopo-demo-')));
  const children: ChildProcess[] = [];
  let erl: ErlangTestEnv | undefined;
  let tornDown = false;
  const teardown = async () => {
    if (tornDown) return;
    tornDown = true;
    for (const c of children) if (c.exitCode === null) c.kill('SIGTERM');
    await Promise.all(
      children.map((c) => (c.exitCode === null ? new Promise((r) => c.once('exit', r)) : undefined)),
    );
    await erl?.stop();
    await stopControlPlane(dir);
    if (!o.dir) await rm(dir, { recursive: true, force: true });
  };
  const onSignal = () => {
    o.err('demo: interrupted; tearing everything down');
    void teardown().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const spawnCtopo = (args: string[], env: NodeJS.ProcessEnv = {}) => {
    const c = spawn(process.execPath, [ctopo, ...args], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let log = '';
    c.stderr!.on('data', (d: Buffer) => (log = (log + d.toString()).slice(-20_000)));
    children.push(c);
    // The demo may still be starting things when an interrupt has begun the teardown.
    if (tornDown) c.kill('SIGTERM');
    return { child: c, log: () => log };
  };

  try {
    const s = await startControlPlane(dir, { log: (l) => o.err(`demo: ${l}`) });
    const kubectl = async (...args: string[]) =>
      (await run(s.binaries.kubectl, ['--kubeconfig', s.kubeconfig, ...args])).stdout;
    const kube = connect({ kubeconfig: s.kubeconfig });
    o.err('demo: installing the CRD and creating Nodes, pods and a ClusterTopology');
    await installCrd(s);
    await createWorld(kube);

    const operator = spawnCtopo([
      'operator',
      '--kubeconfig',
      s.kubeconfig,
      '--namespaces',
      NAMESPACE,
      '--no-leader-elect',
      '--http-host',
      '127.0.0.1',
      '--http-port',
      '0',
      '--log-level',
      'warn',
    ]);
    const status = await waitFor(
      'the operator to publish three peers',
      async () => {
        const st = await readStatus(kube);
        return st?.peerCount === 3 && st.failureDomains && st.excludedCount === 4 ? st : undefined;
      },
      60_000,
    ).catch((e: Error) => {
      throw new Error(`${e.message}\noperator log:\n${operator.log()}`);
    });

    const members = pods.filter((p) => p.beam).map((p) => p.beam!);
    const agentArgs = (node: string, pod: string, connector: string[]) => [
      'agent',
      '--kubeconfig',
      s.kubeconfig,
      '--namespace',
      NAMESPACE,
      '--topology',
      TOPOLOGY,
      '--node-name',
      node,
      '--pod-name',
      pod,
      '--http-host',
      '127.0.0.1',
      '--http-port',
      '0',
      '--log-level',
      'warn',
      ...connector,
    ];
    let membership: string[] = [];
    const reports: string[] = [];
    /** How to start member `short` again with another cookie (the wrong-cookie scene). */
    const restartWithCookie = new Map<string, (cookie: string) => Promise<void>>();
    /** Waits until every BEAM node sees all the others, then records what each sees. */
    const meshed = async (env: ErlangTestEnv) => {
      await waitFor(
        'the BEAM nodes to mesh',
        async () => {
          for (const m of members) if ((await env.nodesOf(m)).length !== members.length - 1) return undefined;
          return true;
        },
        60_000,
      );
      for (const m of members) membership.push(`  ${m} sees: ${(await env.nodesOf(m)).join(', ')}`);
    };
    const mode = o.connector ?? ((await hasErlang()) ? 'library' : 'file');
    if (mode === 'library') {
      o.err(
        'demo: starting real BEAM nodes, each running the OTP client library (clients/cluster_topology), no sidecar',
      );
      erl = await ErlangTestEnv.start({ tmp: dir }); // its nodes carry the demo's directory in their arguments
      const ebin = join(dir, 'beam-ebin');
      await compileBeamClient(ebin, [demoModule]);
      for (const p of pods.filter((x) => x.beam)) {
        const short = p.beam!.split('@')[0]!;
        const config = join(dir, `client-${short}.json`);
        await writeFile(
          config,
          JSON.stringify({
            name: TOPOLOGY,
            namespace: NAMESPACE,
            api_url: s.server,
            ca_file: s.pki.caCert,
            cert_file: join(s.pki.dir, 'admin.crt'),
            key_file: join(s.pki.dir, 'admin.key'),
            pod_name: (p.pod.metadata as { name: string }).name,
          }),
        );
        const start = (cookie?: string) =>
          erl!.startNode(short, {
            args: ['-pa', ebin, '-eval', 'ct_demo:start()'],
            env: { CT_DEMO_CONFIG: config },
            ...(cookie ? { cookie } : {}),
          });
        const node = await start();
        restartWithCookie.set(short, async (cookie) => {
          await node.stop();
          await start(cookie);
        });
      }
      await meshed(erl);
      const report = async (m: string) => {
        const file = join(dir, `report-${m.split('@')[0]!}.txt`);
        const r = await erl!.rpc(m, `ct_demo report ["${file}"]`);
        if (r.code !== 0) throw new Error(`demo: ${m} did not report: ${r.stderr || r.stdout}`);
        return (await readFile(file, 'utf8')).trimEnd();
      };
      // A node that dialled a peer not started yet retries it after the client's retry_ms (5 s):
      // show the reports once those retries ran, or as they are after 15 s.
      const settled = Date.now() + 15_000;
      for (;;) {
        const now = await Promise.all(members.map(report));
        if (now.every((t) => / 0 failed,/.test(t)) || Date.now() > settled) {
          reports.push(...now);
          break;
        }
        await sleep(1000);
      }
    } else if (mode === 'erlang') {
      o.err('demo: starting real BEAM nodes, each with an agent (erlang connector)');
      erl = await ErlangTestEnv.start({ tmp: dir }); // its nodes carry the demo's directory in their arguments
      for (const p of pods.filter((x) => x.beam)) {
        const short = p.beam!.split('@')[0]!;
        const agent = (cookieFile: string) =>
          spawnCtopo(
            agentArgs(p.beam!, (p.pod.metadata as { name: string }).name, [
              '--connector',
              'erlang',
              '--cookie-file',
              cookieFile,
            ]),
            { ERL_EPMD_PORT: String(erl!.epmdPort) },
          );
        const node = await erl.startNode(short);
        const first = agent(erl.cookieFile);
        restartWithCookie.set(short, async (cookie) => {
          first.child.kill('SIGTERM');
          await node.stop();
          const again = await erl!.startNode(short, { cookie });
          agent(join(again.home, '.erlang.cookie'));
        });
      }
      await meshed(erl);
    } else {
      o.err(
        'demo: using the file connector (no Erlang, or --connector file): one agent writes its peers to a file',
      );
      const file = join(dir, 'peers.txt');
      spawnCtopo(agentArgs('web-0@127.0.0.1', 'web-0', ['--connector', 'file', '--file-path', file]));
      const text = await waitFor(
        'the peer file',
        async () => {
          const t = await readFile(file, 'utf8').catch(() => '');
          return t.split('\n').filter(Boolean).length === members.length - 1 ? t : undefined;
        },
        30_000,
      );
      membership = text
        .trim()
        .split('\n')
        .map((l) => `  web-0's agent wrote: ${l}`);
    }

    const final = (await readStatus(kube)) ?? status;
    o.out(
      `\n$ kubectl get clustertopology -n ${NAMESPACE}\n${await kubectl('get', 'clustertopology', '-n', NAMESPACE)}`,
    );
    const list = statusMeaning(final);
    o.out(
      formatResolveTable({
        peers: list.kind === 'current' ? [...list.peers] : [],
        excluded: final.excluded ?? [],
      }),
    );
    const read = analysisFromStatus(final.failureDomains);
    if (!read.ok) throw new Error(`the status's failure-domain analysis cannot be read: ${read.problem}`);
    if (read.analysis.verdict === 'Off')
      throw new Error("the demo topology's failure-domain analysis is off");
    const analysis = { analysis: read.analysis };
    o.out(
      `\nFAILURE DOMAINS (sites A and B; vm-1 and vm-2 share hypervisor hv-1)\n${formatAnalysisTable(analysis.analysis)}`,
    );
    const verdict = (level: string, domain: string) =>
      analysis.analysis.domains.find((d) => d.level === level && d.domain === domain)?.verdict;
    const checks = [
      [`losing site A (2 of 3 voters)`, verdict(SITE, 'A'), 'Breaks'],
      [`losing site B (1 of 3 voters)`, verdict(SITE, 'B'), 'Survives'],
      [`losing hypervisor hv-1 (2 voters)`, verdict(HYPERVISOR, 'hv-1'), 'Breaks'],
    ] as const;
    o.out(
      checks
        .map(
          ([what, got, want]) =>
            `  ${got === want ? 'as expected' : `NOT AS EXPECTED (${want})`}: ${what} → ${got}`,
        )
        .join('\n'),
    );
    o.out(
      `\n${erl ? 'ERLANG CLUSTER MEMBERSHIP (nodes() of each node)' : 'PEERS AS THE AGENT SEES THEM'}\n${membership.join('\n')}`,
    );
    if (reports.length)
      o.out(
        `\nWHAT EACH NODE'S CLIENT REPORTS (cluster_topology:state(), summarised)\n${reports.join('\n')}`,
      );
    const wrong = restartWithCookie.get(WRONG_COOKIE_MEMBER);
    if (wrong) await wrongCookieScene(o, kube, s.kubeconfig, kubectl, wrong);
    o.out(`\ndemo finished in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    if (o.keep)
      o.out(
        `kept running: export KUBECONFIG=${s.kubeconfig}; stop the control plane with: npm run dev-cluster -- down --state ${dir}`,
      );
    return checks.every(([, got, want]) => got === want) ? 0 : 1;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    if (!o.keep) await teardown();
  }
}

/** The member whose node the demo starts again with another cookie. */
const WRONG_COOKIE_MEMBER = 'web-1';

/**
 * One node started again with another Erlang cookie, the commonest silent non-cluster: its
 * member reports (the client's or the sidecar's) say Refused, the operator's status says MESH 2/3
 * and names the broken links both ways, `ctopo mesh` shows the matrix.
 */
async function wrongCookieScene(
  o: DemoOptions,
  kube: Kube,
  kubeconfig: string,
  kubectl: (...args: string[]) => Promise<string>,
  restart: (cookie: string) => Promise<void>,
): Promise<void> {
  await waitFor(
    'MESH 3/3 from the members’ reports',
    async () => ((await readStatus(kube))?.mesh?.summary === '3/3' ? true : undefined),
    60_000,
  );
  o.err(`demo: starting ${WRONG_COOKIE_MEMBER} again with another Erlang cookie`);
  await restart('not-the-cluster-cookie');
  const st = await waitFor(
    'MESH 2/3 naming the broken links both ways',
    async () => {
      const x = await readStatus(kube);
      return x?.mesh?.summary === '2/3' && (x.mesh.brokenLinks?.length ?? 0) >= 4 ? x : undefined;
    },
    90_000,
  );
  const meshed = st.conditions?.find((c) => c.type === 'Meshed');
  o.out(
    `\nONE NODE WITH ANOTHER ERLANG COOKIE (${WRONG_COOKIE_MEMBER} started again with a different cookie)\n` +
      `$ kubectl get clustertopology -n ${NAMESPACE}\n${await kubectl('get', 'clustertopology', '-n', NAMESPACE)}` +
      `Meshed=${meshed?.status} (${meshed?.reason}): ${meshed?.message}\n` +
      `\n$ kubectl get ctm -n ${NAMESPACE}\n${await kubectl('get', 'ctm', '-n', NAMESPACE)}` +
      `\n$ kubectl get ctm -n ${NAMESPACE} ${WRONG_COOKIE_MEMBER}.${TOPOLOGY} -o jsonpath='{.status.notConnected}'\n` +
      `${await kubectl('get', 'ctm', '-n', NAMESPACE, `${WRONG_COOKIE_MEMBER}.${TOPOLOGY}`, '-o', 'jsonpath={.status.notConnected}')}\n`,
  );
  const mesh = await run(process.execPath, [ctopo, 'mesh', '-n', NAMESPACE, TOPOLOGY], {
    env: { ...process.env, KUBECONFIG: kubeconfig },
  }).catch((e: { stdout?: string }) => ({ stdout: e.stdout ?? '' }));
  o.out(`$ ctopo mesh -n ${NAMESPACE} ${TOPOLOGY}\n${mesh.stdout}`);
}

async function createWorld(kube: Kube): Promise<void> {
  await kube.request('POST', NAMESPACES_PATH, {
    body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } },
  });
  for (const n of nodes) await kube.request('POST', NODES_PATH, { body: n });
  for (const p of pods) {
    const name = (p.pod.metadata as { name: string }).name;
    await kube.request('POST', podsPath(NAMESPACE), { body: p.pod });
    if (p.status)
      await kube.request('PATCH', podStatusPath(NAMESPACE, name), {
        contentType: 'application/merge-patch+json',
        body: {
          status: {
            phase: p.status.phase,
            podIP: p.status.podIP,
            podIPs: [{ ip: p.status.podIP }],
            conditions: [{ type: 'Ready', status: p.status.ready ? 'True' : 'False' }],
          },
        },
      });
  }
  await kube.request('POST', topologiesPath(NAMESPACE), {
    body: topology,
  });
}

async function readStatus(kube: Kube): Promise<ClusterTopologyStatus | undefined> {
  const got = await getTopology(kube, NAMESPACE, TOPOLOGY);
  if (got.kind === 'failed') throw got.error;
  return got.kind === 'found' ? got.object.status : undefined;
}

export type { ControlPlaneState };
