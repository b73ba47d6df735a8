import { request } from 'node:https';
import { access, chmod, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { buildScript, ensureBinaries, type Binaries } from './binaries.js';
import { createPki, mintClient, type Pki } from './pki.js';
import { writeKubeconfig, type Credentials } from './kubeconfig.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePorts, isOurs, startDetached, stopProcess, tail } from './processes.js';
import {
  NODE_LINK_HOST_IP,
  NODE_NAME,
  controllerManagerArgs,
  ensureNodeArtifacts,
  nodeDown,
  nodeNetworkUp,
  nodeUp,
  schedulerArgs,
  writeNodeCredentials,
  type NodeDirs,
} from './node.js';

/**
 * A throwaway Kubernetes control plane: one etcd and one kube-apiserver on loopback ports,
 * with their own CA, RBAC authorization and an admin identity (group system:masters). There
 * are no kubelets, scheduler or controllers: pods are plain objects whose status tests set.
 *
 * With `ipFamily: 'ipv6'` both listen on `[::1]` only, the API server with an IPv6 service range
 * and a serving certificate for `::1`: a cluster whose every client must speak IPv6.
 *
 * Everything lives in a state directory: `state.json` (ports, pids, binaries), `kubeconfig`
 * (admin), `kubectl` (a wrapper using it), `pki/`, `etcd-data/` and the two logs. Processes
 * run detached, so `npm run dev-cluster -- up` can return and `down` (another process) stops them.
 */
export interface ControlPlaneState {
  dir: string;
  server: string;
  kubeconfig: string;
  binaries: Binaries;
  pki: Pki;
  etcd: { pid: number; port: number; peerPort: number };
  apiserver: { pid: number; port: number };
  startedAt: string;
  /** Absent in clusters started before there was a choice: IPv4. */
  ipFamily?: IpFamily;
  /** With `--node`: the real node (node.ts) and the controllers that make pods run. */
  node?: { dirs: NodeDirs; controllerManagerPid: number; schedulerPid: number };
}

export type IpFamily = 'ipv4' | 'ipv6';

/** Where the control plane listens, by IP family (the loopback either way). */
const LOOPBACK: Record<IpFamily, string> = { ipv4: '127.0.0.1', ipv6: '::1' };
/**
 * The Service range, by IP family: kube-apiserver wants its advertise address and its first
 * range in one family. The `kubernetes` Service gets the first address (its IP is a SAN).
 */
const SERVICE_RANGE: Record<IpFamily, { cidr: string; apiIp: string }> = {
  ipv4: { cidr: '10.0.0.0/24', apiIp: '10.0.0.1' },
  ipv6: { cidr: 'fd00:10:96::/112', apiIp: 'fd00:10:96::1' },
};
const loopbackOf = (s: { ipFamily?: IpFamily }) => LOOPBACK[s.ipFamily ?? 'ipv4'];
/** `host:port` as a URL writes it: an IPv6 address in brackets. */
const hostPort = (host: string, port: number) => `${host.includes(':') ? `[${host}]` : host}:${port}`;

const stateFile = (dir: string) => join(dir, 'state.json');

export async function readState(dir: string): Promise<ControlPlaneState | undefined> {
  try {
    return JSON.parse(await readFile(stateFile(resolve(dir)), 'utf8')) as ControlPlaneState;
  } catch {
    return undefined;
  }
}

async function saveState(s: ControlPlaneState): Promise<void> {
  await writeFile(stateFile(s.dir), JSON.stringify(s, null, 2) + '\n', { mode: 0o600 });
}

function httpsGet(
  url: string,
  s: ControlPlaneState,
  timeoutMs = 3000,
): Promise<{ status: number; body: string }> {
  return new Promise((ok, fail) => {
    void Promise.all([
      readFile(s.pki.caCert),
      readFile(join(s.pki.dir, 'admin.crt')),
      readFile(join(s.pki.dir, 'admin.key')),
    ]).then(([ca, cert, key]) => {
      const req = request(url, { ca, cert, key, timeout: timeoutMs }, (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () => ok({ status: res.statusCode ?? 0, body }));
      });
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.on('error', fail);
      req.end();
    }, fail);
  });
}

function etcdArgs(s: ControlPlaneState): string[] {
  const client = `http://${hostPort(loopbackOf(s), s.etcd.port)}`;
  const peer = `http://${hostPort(loopbackOf(s), s.etcd.peerPort)}`;
  return [
    '--name=ctopo-dev',
    `--data-dir=${join(s.dir, 'etcd-data')}`,
    `--listen-client-urls=${client}`,
    `--advertise-client-urls=${client}`,
    `--listen-peer-urls=${peer}`,
    `--initial-advertise-peer-urls=${peer}`,
    `--initial-cluster=ctopo-dev=${peer}`,
    '--logger=zap',
    '--log-level=warn',
    '--unsafe-no-fsync=true', // a test cluster: durability is not the point, speed is
  ];
}

function apiserverArgs(s: ControlPlaneState): string[] {
  const p = s.pki;
  const address = s.node ? NODE_LINK_HOST_IP : loopbackOf(s);
  const nodeArgs = s.node
    ? [
        // Pods reach the API server as the `kubernetes` Service, whose endpoint is this address.
        '--authorization-mode=Node,RBAC',
        `--kubelet-client-certificate=${join(p.dir, 'apiserver-kubelet-client.crt')}`,
        `--kubelet-client-key=${join(p.dir, 'apiserver-kubelet-client.key')}`,
        '--kubelet-preferred-address-types=InternalIP',
        '--enable-admission-plugins=NodeRestriction',
      ]
    : [
        '--authorization-mode=RBAC',
        // No service-account controller runs, so no `default` ServiceAccount: that plugin would refuse every pod.
        '--disable-admission-plugins=ServiceAccount',
        '--endpoint-reconciler-type=none',
      ];
  return [
    `--etcd-servers=http://${hostPort(loopbackOf(s), s.etcd.port)}`,
    `--bind-address=${address}`,
    `--advertise-address=${address}`,
    `--secure-port=${s.apiserver.port}`,
    `--cert-dir=${join(s.dir, 'cert-dir')}`,
    `--tls-cert-file=${p.serverCert}`,
    `--tls-private-key-file=${p.serverKey}`,
    `--client-ca-file=${p.caCert}`,
    `--service-account-issuer=https://${hostPort(loopbackOf(s), s.apiserver.port)}`,
    `--service-account-key-file=${p.saPub}`,
    `--service-account-signing-key-file=${p.saKey}`,
    `--service-cluster-ip-range=${SERVICE_RANGE[s.ipFamily ?? 'ipv4'].cidr}`,
    '--allow-privileged=true',
    ...nodeArgs,
    '--v=0',
  ];
}

async function waitEtcd(s: ControlPlaneState, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      const res = await fetch(`http://${hostPort(loopbackOf(s), s.etcd.port)}/health`, {
        signal: AbortSignal.timeout(1000),
      });
      if (res.ok) return;
    } catch {
      /* not yet */
    }
    if (!(await isOurs(s.etcd.pid, s.binaries.etcd)))
      throw new ExitedDuringStart(`etcd exited during start:\n${await tail(join(s.dir, 'etcd.log'))}`);
    await sleep(100);
  }
  throw new Error(`etcd not healthy after ${timeoutMs / 1000}s; see ${join(s.dir, 'etcd.log')}`);
}

async function waitApiserver(s: ControlPlaneState, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      // /readyz as admin (anonymous /readyz can be refused during RBAC bootstrap), then the
      // `default` namespace, which exists only once the bootstrap controllers have run.
      const ready = await httpsGet(`${s.server}/readyz`, s);
      if (ready.status === 200 && (await httpsGet(`${s.server}/api/v1/namespaces/default`, s)).status === 200)
        return;
    } catch {
      /* not yet */
    }
    if (!(await isOurs(s.apiserver.pid, s.binaries.kubeApiserver)))
      throw new ExitedDuringStart(
        `kube-apiserver exited during start:\n${await tail(join(s.dir, 'apiserver.log'))}`,
      );
    await sleep(200);
  }
  throw new Error(`kube-apiserver not ready after ${timeoutMs / 1000}s; see ${join(s.dir, 'apiserver.log')}`);
}

export interface StartOptions {
  log?: (line: string) => void;
  timeoutMs?: number;
  /** Also a real node: kubelet, containerd, CNI, kube-proxy, controller manager, scheduler (root). */
  node?: boolean;
  /** `ipv6`: etcd and the API server on [::1] only. Default: the state directory's, else `ipv4`. */
  ipFamily?: IpFamily;
}

/** One process of a dev cluster, as `up`, `status` and `down` find it. */
export interface Component {
  name: 'etcd' | 'kube-apiserver' | 'kube-controller-manager' | 'kube-scheduler';
  pid: number;
  binary: string;
}

/** The processes a state records (a pid of 0 was never started). */
export function componentsOf(s: ControlPlaneState): Component[] {
  const out: Component[] = [
    { name: 'etcd', pid: s.etcd.pid, binary: s.binaries.etcd },
    { name: 'kube-apiserver', pid: s.apiserver.pid, binary: s.binaries.kubeApiserver },
  ];
  if (s.node) {
    const kube = s.node.dirs.KUBE_DIR;
    out.push(
      {
        name: 'kube-controller-manager',
        pid: s.node.controllerManagerPid,
        binary: join(kube, 'kube-controller-manager'),
      },
      { name: 'kube-scheduler', pid: s.node.schedulerPid, binary: join(kube, 'kube-scheduler') },
    );
  }
  return out;
}

/** Each recorded process and whether it runs now. */
export async function componentStates(s: ControlPlaneState): Promise<(Component & { running: boolean })[]> {
  return Promise.all(
    componentsOf(s).map(async (c) => ({ ...c, running: c.pid > 0 && (await isOurs(c.pid, c.binary)) })),
  );
}

/**
 * Starts etcd and kube-apiserver in `dir` (created if needed); returns once /readyz answers. On a
 * directory whose cluster partly runs, it starts what died: a live etcd is kept (the API server is
 * started against it), and any other process still running from the previous start is stopped
 * first, so nothing is left behind and nothing holds the etcd data twice.
 */
export async function startControlPlane(dirArg: string, opts: StartOptions = {}): Promise<ControlPlaneState> {
  const log = opts.log ?? (() => {});
  const dir = resolve(dirArg);
  const existing = await readState(dir);
  const before = existing ? await componentStates(existing) : [];
  if (before.length > 0 && before.every((c) => c.running))
    throw new Error(
      `a dev cluster already runs from ${dir} (${existing!.server}); stop it with: npm run dev-cluster -- down --state ${dir}`,
    );
  const ipFamily = opts.ipFamily ?? existing?.ipFamily ?? 'ipv4';
  if (ipFamily === 'ipv6' && opts.node)
    throw new Error('a real node (--node) runs IPv4 only: start it without --ip-family ipv6');
  if (existing && (existing.ipFamily ?? 'ipv4') !== ipFamily)
    throw new Error(
      `${dir} holds an ${existing.ipFamily ?? 'ipv4'} dev cluster; use another --state directory for ${ipFamily} (or delete ${dir})`,
    );
  const loopback = LOOPBACK[ipFamily];
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const binaries = await ensureBinaries(log, { withHelm: opts.node });
  const nodeDirs = opts.node ? await ensureNodeArtifacts(log, buildScript) : undefined;
  const t0 = Date.now();
  // A stopped cluster starts again with its CA, ports and etcd data, so the kubeconfigs and the
  // clients (operators, agents) that were talking to it reconnect as after any API outage.
  // (Not with a real node: its network namespace and certificates are made anew each time.)
  const restart =
    !opts.node && existing && !existing.node && (await pkiIntact(existing.pki)) ? existing : undefined;
  const keptEtcd = restart && before.some((c) => c.name === 'etcd' && c.running) ? restart.etcd : undefined;
  for (const c of before)
    if (c.running && !(keptEtcd && c.name === 'etcd')) {
      log(`stopping the ${c.name} left running by the previous start (pid ${c.pid})`);
      await stopProcess(c.pid, c.binary);
    }
  if (opts.node) {
    // A fresh cluster each time: kept etcd data would keep the `kubernetes` Service's target port
    // (the API server does not move it), the old pods and the old service-account tokens.
    await rm(join(dir, 'etcd-data'), { recursive: true, force: true });
    await nodeNetworkUp(dir, log);
  }
  const serverIps = opts.node
    ? [NODE_LINK_HOST_IP]
    : ipFamily === 'ipv6'
      ? [LOOPBACK.ipv6, SERVICE_RANGE.ipv6.apiIp]
      : [];
  const pki = restart ? restart.pki : await createPki(join(dir, 'pki'), serverIps);
  if (!restart) await mintClient(pki, 'admin', 'admin', ['system:masters']);
  // The API server's identity towards the kubelet (logs, exec), needed before it starts.
  if (opts.node)
    await mintClient(pki, 'apiserver-kubelet-client', 'kube-apiserver-kubelet-client', ['system:masters']);
  // etcd's ports are bound by the kept etcd, so the API server's pick cannot take them.
  const [etcdPort, peerPort, apiPort] = keptEtcd
    ? [keptEtcd.port, keptEtcd.peerPort, ...(await freePorts([restart?.apiserver.port], loopback))]
    : await freePorts([restart?.etcd.port, restart?.etcd.peerPort, restart?.apiserver.port], loopback);
  const s: ControlPlaneState = {
    dir,
    server: '',
    kubeconfig: join(dir, 'kubeconfig'),
    binaries,
    pki,
    etcd: { pid: keptEtcd?.pid ?? 0, port: etcdPort!, peerPort: peerPort! },
    apiserver: { pid: 0, port: apiPort! },
    startedAt: new Date().toISOString(),
    ...(ipFamily === 'ipv6' ? { ipFamily } : {}),
    ...(nodeDirs ? { node: { dirs: nodeDirs, controllerManagerPid: 0, schedulerPid: 0 } } : {}),
  };
  const setApiPort = (port: number) => {
    s.apiserver.port = port;
    s.server = `https://${hostPort(opts.node ? NODE_LINK_HOST_IP : loopback, port)}`;
  };
  setApiPort(apiPort!);
  if (restart) {
    const moved = restart.apiserver.port !== apiPort;
    log(
      `${keptEtcd ? `etcd still runs (pid ${keptEtcd.pid}), so only kube-apiserver starts: ` : ''}` +
        (moved
          ? `restarting the dev cluster in ${dir} with its CA and data; port ${restart.apiserver.port} is taken, so the API server moves to ${apiPort} (kubeconfigs are rewritten)`
          : `restarting the dev cluster in ${dir} with its CA, ports and data`),
    );
  }
  await saveState(s);
  try {
    if (!keptEtcd)
      await startOnFreePorts(
        'etcd',
        log,
        async () => {
          log(`starting etcd on ${hostPort(loopback, s.etcd.port)}`);
          s.etcd.pid = await startDetached(binaries.etcd, etcdArgs(s), join(dir, 'etcd.log'));
          await saveState(s);
          await waitEtcd(s, 30_000);
        },
        async () => {
          // The API server's port is not bound yet: picked again with etcd's, so all three differ.
          const [port, peer, api] = await freePorts([undefined, undefined, s.apiserver.port], loopback);
          Object.assign(s.etcd, { port: port!, peerPort: peer! });
          setApiPort(api!);
        },
      );
    await startOnFreePorts(
      'kube-apiserver',
      log,
      async () => {
        log(`starting kube-apiserver on ${s.server}`);
        s.apiserver.pid = await startDetached(
          binaries.kubeApiserver,
          apiserverArgs(s),
          join(dir, 'apiserver.log'),
        );
        await saveState(s);
        await waitApiserver(s, opts.timeoutMs ?? 90_000);
      },
      async () => setApiPort((await freePorts([undefined], loopback))[0]!),
    );
    if (s.node) await startNodeParts(s, log);
  } catch (e) {
    await stopControlPlane(dir);
    throw e;
  }
  await writeKubeconfig(s.kubeconfig, s.server, pki.caCert, {
    cert: join(pki.dir, 'admin.crt'),
    key: join(pki.dir, 'admin.key'),
  });
  await writeKubectlWrapper(s);
  log(`control plane ready in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  return s;
}

/**
 * Runs `start` until the server stays up: when it exits because its port was taken between the
 * pick and its bind (by another process on the machine), `repick` chooses new ports. Three tries.
 */
async function startOnFreePorts(
  what: string,
  log: (line: string) => void,
  start: () => Promise<void>,
  repick: () => Promise<void>,
): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await start();
    } catch (e) {
      if (attempt >= 3 || !(e instanceof ExitedDuringStart) || !/address already in use/.test(e.message))
        throw e;
      log(`${what}'s port was taken before it could listen; picking again`);
      await repick();
    }
  }
}

/** A server that exited while it started; the message ends with its log's last lines. */
class ExitedDuringStart extends Error {}

const shQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

async function writeKubectlWrapper(s: ControlPlaneState): Promise<void> {
  const f = join(s.dir, 'kubectl');
  await writeFile(
    f,
    `#!/bin/sh\n# kubectl for the dev cluster in this directory\nexec ${shQuote(s.binaries.kubectl)} --kubeconfig ${shQuote(s.kubeconfig)} "$@"\n`,
  );
  await chmod(f, 0o755);
}

async function startNodeParts(s: ControlPlaneState, log: (line: string) => void): Promise<void> {
  const node = s.node!;
  await writeNodeCredentials(s.dir, s.server, s.pki);
  log('starting kube-controller-manager and kube-scheduler');
  const [cmPort, schedulerPort] = await freePorts([undefined, undefined]);
  node.controllerManagerPid = await startDetached(
    join(node.dirs.KUBE_DIR, 'kube-controller-manager'),
    controllerManagerArgs(s.dir, s.pki, cmPort!),
    join(s.dir, 'controller-manager.log'),
  );
  node.schedulerPid = await startDetached(
    join(node.dirs.KUBE_DIR, 'kube-scheduler'),
    schedulerArgs(s.dir, schedulerPort!),
    join(s.dir, 'scheduler.log'),
  );
  await saveState(s);
  await nodeUp(s.dir, node.dirs, log);
  await waitNodeSchedulable(s, 120_000);
}

/**
 * Waits until pods can be scheduled on the node: Ready, and the node-lifecycle controller has
 * lifted the `not-ready` taint (a Ready node that keeps it leaves every pod Pending). A controller
 * that exits meanwhile is reported with its log at once.
 */
async function waitNodeSchedulable(s: ControlPlaneState, timeoutMs: number): Promise<void> {
  const node = s.node!;
  const kube = node.dirs.KUBE_DIR;
  const controllers: [number, string, string][] = [
    [node.controllerManagerPid, 'kube-controller-manager', 'controller-manager.log'],
    [node.schedulerPid, 'kube-scheduler', 'scheduler.log'],
  ];
  const deadline = Date.now() + timeoutMs;
  let seen = 'no Node object yet';
  while (Date.now() < deadline) {
    for (const [pid, bin, log] of controllers)
      if (!(await isOurs(pid, join(kube, bin))))
        throw new Error(`${bin} exited during start:\n${await tail(join(s.dir, log))}`);
    try {
      const r = await httpsGet(`${s.server}/api/v1/nodes/${NODE_NAME}`, s);
      const n = r.status === 200 ? (JSON.parse(r.body) as NodeObject) : undefined;
      const isReady = n?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
      const notReadyTaint = n?.spec?.taints?.some((t) => t.key === 'node.kubernetes.io/not-ready');
      if (isReady && !notReadyTaint) return;
      if (n) seen = isReady ? 'Ready, but still tainted node.kubernetes.io/not-ready' : 'not Ready';
    } catch {
      /* not yet */
    }
    await sleep(500);
  }
  throw new Error(
    `the node is not schedulable after ${timeoutMs / 1000}s (${seen}); see ${join(s.dir, 'node', 'kubelet.log')} and ${join(s.dir, 'controller-manager.log')}`,
  );
}

interface NodeObject {
  spec?: { taints?: { key: string; effect: string }[] };
  status?: { conditions?: { type: string; status: string }[] };
}

/** Whether a previous run's CA, server certificate and admin identity are all still there. */
async function pkiIntact(pki: Pki): Promise<boolean> {
  const files = [pki.caCert, pki.caKey, pki.serverCert, pki.serverKey, pki.saKey, pki.saPub];
  files.push(join(pki.dir, 'admin.crt'), join(pki.dir, 'admin.key'));
  try {
    await Promise.all(files.map((f) => access(f)));
    return true;
  } catch {
    return false;
  }
}

/** Stops everything `up` started (the node first). The state directory stays for inspection. */
export async function stopControlPlane(
  dir: string,
  log: (line: string) => void = () => {},
): Promise<boolean> {
  const s = await readState(dir);
  if (!s) return false;
  if (s.node) await nodeDown(s.dir, log);
  // The controllers first, etcd last.
  for (const c of componentsOf(s).reverse()) if (c.pid) await stopProcess(c.pid, c.binary);
  return true;
}

/** Fault injection for tests: stop, or restart the API server. */
export async function stopApiserver(s: ControlPlaneState): Promise<void> {
  await stopProcess(s.apiserver.pid, s.binaries.kubeApiserver);
}
/** Starts the API server again with the same port, certificates and etcd data. */
export async function startApiserver(s: ControlPlaneState, timeoutMs = 90_000): Promise<void> {
  s.apiserver.pid = await startDetached(
    s.binaries.kubeApiserver,
    apiserverArgs(s),
    join(s.dir, 'apiserver.log'),
  );
  await saveState(s);
  await waitApiserver(s, timeoutMs);
}

/** A kubeconfig for another identity: a client certificate for `user` in `groups`, or a token. */
export async function kubeconfigFor(
  s: ControlPlaneState,
  file: string,
  who: { user: string; groups?: string[] } | { token: string },
  server = s.server,
): Promise<string> {
  let creds: Credentials;
  if ('token' in who) creds = who;
  else
    creds = await mintClient(
      s.pki,
      `user-${who.user.replace(/[^A-Za-z0-9_-]/g, '_')}`,
      who.user,
      who.groups ?? [],
    );
  const path = resolve(s.dir, file);
  await writeKubeconfig(path, server, s.pki.caCert, creds);
  return path;
}

export async function apiserverMetrics(s: ControlPlaneState): Promise<string> {
  const r = await httpsGet(`${s.server}/metrics`, s, 10_000);
  if (r.status !== 200) throw new Error(`GET /metrics: ${r.status}`);
  return r.body;
}
