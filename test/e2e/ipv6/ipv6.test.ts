import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn, type ChildProcess } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { cp, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { watchPeers, type PeerWatch } from '../../../operator/index.js';
import type { ControlPlaneState } from '../../../dev/cluster/control-plane.js';
import { installCrd, kubectlOk, kubeconfigForUser, privateCluster } from '../../support/cluster.js';
import {
  applyObjects,
  applyTopology,
  createPod,
  grantOperatorRbac,
  readerRbac,
  serviceAccountToken,
  setPodStatus,
  topologyStatus,
} from '../../support/objects.js';
import { CtopoProcess, localAgentArgs, startOperator } from '../../support/operator-process.js';
import { mintClient } from '../../../dev/cluster/pki.js';
import { ErlangTestEnv, run } from '../../support/erlang.js';
import { buildClient, clientDir, FAST_CLIENT, ProbeNode, repoRoot } from '../../support/beam-client.js';
import { distTlsOptfile } from '../../support/dist-tls.js';
import { waitFor } from '../../support/wait.js';

/**
 * IPv6 end to end, on real things: a real API server that listens on [::1] only, the real
 * operator, watchPeers and the sidecar reading from it, pods with IPv6 IPs named by PodIP and
 * PodDNS, and real BEAM nodes named `name@::1` that the OTP library meshes over
 * `-proto_dist inet6_tcp` and `inet6_tls`, its API address given as a pod gets it: a bare
 * IPv6 KUBERNETES_SERVICE_HOST.
 */

const NS = 'app';

/** Pod IPs as an IPv6 cluster gives them (RFC 5952 form), and the names expected for them. */
const PODS = [
  { pod: 'v6-0', ip: 'fd00:10:244::a', dns: 'fd00-10-244--a' },
  { pod: 'v6-1', ip: 'fd00:10:244:1::1b', dns: 'fd00-10-244-1--1b' },
  { pod: 'v6-2', ip: '2001:db8:0:1:2:3:4:5', dns: '2001-db8-0-1-2-3-4-5' },
];
const byIp = PODS.map((p) => `${p.pod}@${p.ip}`).sort();
const byDns = PODS.map((p) => `${p.pod}@${p.dns}.${NS}.pod.cluster.local`).sort();

describe('IPv6 end to end: an API server on [::1], IPv6 pod IPs, BEAM nodes named name@::1', () => {
  let s: ControlPlaneState;
  let stopCluster: () => Promise<void>;
  let erl: ErlangTestEnv;
  let ebin: string;
  let opKubeconfig: string;
  let saDir: string;
  let watch: PeerWatch | undefined;
  let release: ChildProcess | undefined;
  let releaseOut = '';
  const nodes = new Map<string, ProbeNode>();
  const full = (short: string) => `${short}@::1`;

  const peersOf = async (topology: string) =>
    (await topologyStatus(s, NS, topology))?.peers?.map((p) => p.nodeName).sort();
  const meshOf = async (members: string[], timeoutMs = 60_000) => {
    for (const m of members)
      await nodes
        .get(m)!
        .waitForNodes(members.filter((x) => x !== m).map(full), timeoutMs)
        .catch((e: Error) => {
          throw new Error(`${e.message}\n${nodes.get(m)!.output.slice(-3000)}`);
        });
  };

  beforeAll(async () => {
    ({ state: s, stop: stopCluster } = await privateCluster({ ipFamily: 'ipv6' }));
    [erl, ebin] = await Promise.all([ErlangTestEnv.start({ ipFamily: 'ipv6' }), buildClient()]);
    await installCrd(s);
    await kubectlOk(s, ['create', 'namespace', NS]);
    await grantOperatorRbac(s, { kind: 'User', name: 'operator' }, [NS], 'e2e');
    opKubeconfig = await kubeconfigForUser(s, 'operator');
    // The library's pods: a service account that may get/watch its topologies and their Leases.
    await applyObjects(
      s,
      readerRbac({
        namespace: NS,
        name: 'beam-reader',
        topologies: ['mesh', 'tls'],
        verbs: ['get', 'watch'],
        leases: true,
        subject: { kind: 'ServiceAccount', name: 'beam', namespace: NS },
      }),
    );
    saDir = join(erl.root, 'sa');
    await mkdir(saDir);
    await writeFile(join(saDir, 'token'), await serviceAccountToken(s, NS, 'beam'));
    await writeFile(join(saDir, 'ca.crt'), await readFile(s.pki.caCert));
    await writeFile(join(saDir, 'namespace'), NS);
    const spec = (label: string, hostFallback: string) => ({
      selector: `netzlive/pod-type=${label}`,
      pollingInterval: '1s',
      naming: { hostFallback },
    });
    await applyTopology(s, NS, 'byip', spec('v6', 'PodIP'));
    await applyTopology(s, NS, 'bydns', spec('v6', 'PodDNS'));
    await applyTopology(s, NS, 'mesh', spec('mesh', 'PodIP'));
    await applyTopology(s, NS, 'tls', spec('tls', 'PodIP'));
    for (const p of PODS) {
      await createPod(s, NS, p.pod, { labels: { 'netzlive/pod-type': 'v6' } });
      await setPodStatus(s, NS, p.pod, { ip: p.ip, ready: true });
    }
    startOperator(opKubeconfig, ['--namespaces', NS, '--no-leader-elect']);
  }, 240_000);
  afterAll(async () => {
    watch?.stop();
    if (release && release.exitCode === null && release.signalCode === null) {
      const gone = new Promise((r) => release!.once('exit', r));
      release.stdin!.end(); // the member halts when its stdin closes
      const t = setTimeout(() => release!.kill('SIGKILL'), 10_000);
      await gone;
      clearTimeout(t);
    }
    await ProbeNode.stopAll();
    await CtopoProcess.stopAll();
    await erl?.stop();
    await stopCluster?.();
  });

  it('the dev cluster serves on [::1] only, with a certificate for ::1, and its kubeconfig says so', async () => {
    expect(s.server).toMatch(/^https:\/\/\[::1\]:\d+$/);
    expect(await readFile(s.kubeconfig, 'utf8')).toContain(`server: ${s.server}`);
    const cert = new X509Certificate(await readFile(s.pki.serverCert));
    expect(cert.checkIP('::1')).toBe('::1');
    // The `kubernetes` Service's address is IPv6 too (the API server's range follows its family).
    const svc = await kubectlOk(s, ['get', 'service', 'kubernetes', '-o', 'jsonpath={.spec.clusterIP}']);
    expect(svc).toBe('fd00:10:96::1');
  });

  it('the operator, reading and writing through [::1], names IPv6 pods by PodIP and by PodDNS', async () => {
    await waitFor('the PodIP status', async () => (await peersOf('byip'))?.length === PODS.length, 60_000);
    expect(await peersOf('byip')).toEqual(byIp);
    await waitFor('the PodDNS status', async () => (await peersOf('bydns'))?.length === PODS.length, 60_000);
    expect(await peersOf('bydns')).toEqual(byDns);
    const st = await topologyStatus(s, NS, 'bydns');
    expect(st?.peers?.every((p) => p.hostSource === 'PodDNS')).toBe(true);
  });

  it('watchPeers reads the IPv6 names through [::1]', async () => {
    const troubles: string[] = [];
    watch = watchPeers(
      { namespace: NS, name: 'byip', kubeconfig: s.kubeconfig, onTrouble: (cause) => troubles.push(cause) },
      () => {},
    );
    await waitFor(
      'watchPeers to hand over the peers',
      () => watch!.peers?.length === PODS.length,
      30_000,
    ).catch((e: Error) => {
      throw new Error(`${e.message} (troubles: ${troubles.join(', ')})`);
    });
    expect([...watch.peers!].sort()).toEqual(byIp);
  });

  it('the sidecar (ctopo agent) reads through [::1] and hands the IPv6 names to its connector', async () => {
    const file = join(erl.root, 'peers.txt');
    const self = PODS[0]!;
    const agent = new CtopoProcess([
      ...localAgentArgs({
        kubeconfig: s.kubeconfig,
        namespace: NS,
        topology: 'bydns',
        pod: self.pod,
        host: `${self.dns}.${NS}.pod.cluster.local`,
      }),
      '--connector',
      'file',
      '--file-path',
      file,
    ]);
    await agent.port();
    const others = byDns.filter((n) => !n.startsWith(`${self.pod}@`));
    await waitFor(
      'the agent to write its peers',
      async () => (await readFile(file, 'utf8').catch(() => '')) === others.map((n) => `${n}\n`).join(''),
      30_000,
    );
    // Its own name, as the operator computed it for its pod, passes the self check.
    await waitFor(
      'the self check to pass',
      async () => (await agent.metric('ctopo_agent_self_check_ok')) === 1,
    );
    await agent.stop();
  });

  it('BEAM nodes named name@::1 mesh through the library (inet6_tcp), its API server a bare IPv6 KUBERNETES_SERVICE_HOST', async () => {
    const members = ['a', 'b', 'c'];
    for (const m of members) {
      await createPod(s, NS, m, { labels: { 'netzlive/pod-type': 'mesh' } });
      await setPodStatus(s, NS, m, { ip: '::1', ready: true });
    }
    const started = members.map((m) =>
      ProbeNode.start(erl, ebin, m, {
        client: { name: 'mesh', service_account_dir: saDir, ...FAST_CLIENT },
        env: { KUBERNETES_SERVICE_HOST: '::1', KUBERNETES_SERVICE_PORT: String(s.apiserver.port) },
        hostname: m,
      }),
    );
    for (const [i, p] of (await Promise.all(started)).entries()) nodes.set(members[i]!, p);
    await meshOf(members);
    const st = await nodes.get('a')!.state();
    expect(st.self).toBe('a@::1');
    expect(st.peers.map((p) => p.node).sort()).toEqual(members.map(full));
    expect(st.self_check.ok).toBe(true);
    expect(st.trouble).toBeNull();
  }, 240_000);

  it('TLS distribution over IPv6 (inet6_tls): name@::1 nodes mesh through the library', async () => {
    const optfile = await distTlsOptfile(join(erl.root, 'dist-pki'), '::1');
    const members = ['t1', 't2', 't3'];
    for (const m of members) {
      await createPod(s, NS, m, { labels: { 'netzlive/pod-type': 'tls' } });
      await setPodStatus(s, NS, m, { ip: '::1', ready: true });
    }
    const started = members.map((m) =>
      ProbeNode.start(erl, ebin, m, {
        client: { name: 'tls', service_account_dir: saDir, ...FAST_CLIENT },
        env: { KUBERNETES_SERVICE_HOST: '::1', KUBERNETES_SERVICE_PORT: String(s.apiserver.port) },
        hostname: m,
        protoDist: 'inet6_tls',
        erlArgs: ['-ssl_dist_optfile', optfile],
      }),
    );
    for (const [i, p] of (await Promise.all(started)).entries()) nodes.set(members[i]!, p);
    await meshOf(members);
    expect((await nodes.get('t1')!.state()).self_check.ok).toBe(true);
    // The TLS nodes and the plain ones (a, b, c) never met.
    expect(
      nodes
        .get('a')!
        .lastNodes()
        .some((n) => n.startsWith('t')),
    ).toBe(false);
  }, 240_000);

  it('an Elixir release named rel@::1 by the example rel/env.sh.eex (POD_IP=::1) joins through the library; bin/APP rpc reaches it', async () => {
    // The application: the test's Elixir member (the library in its supervision tree), the
    // library as a path dependency, and the project's rel/env.sh.eex for replicas named by pod IP.
    const app = join(erl.root, 'release-app');
    await mkdir(join(app, 'rel'), { recursive: true });
    await cp(join(repoRoot, 'test', 'fixtures', 'beam-client', 'elixir-member', 'lib'), join(app, 'lib'), {
      recursive: true,
    });
    await writeFile(
      join(app, 'mix.exs'),
      `defmodule Member.MixProject do
  use Mix.Project
  def project, do: [app: :member, version: "0.1.0", elixir: "~> 1.14", deps: [{:cluster_topology, path: ${JSON.stringify(clientDir)}}]]
  def application, do: [mod: {Member.Application, []}, extra_applications: [:logger]]
end
`,
    );
    await cp(join(repoRoot, 'examples', 'rel', 'multi-replica.env.sh.eex'), join(app, 'rel', 'env.sh.eex'));
    const build = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: app,
      LANG: 'C.UTF-8',
      MIX_HOME: join(app, '.mix'),
    };
    const made = await run(
      'mix',
      ['release', '--overwrite'],
      { ...build, MIX_ENV: 'prod', HEX_OFFLINE: '1' },
      300_000,
      app,
    );
    if (made.code !== 0) throw new Error(`mix release failed: ${made.stdout}${made.stderr}`);
    const bin = join(app, '_build', 'prod', 'rel', 'member', 'bin', 'member');

    // Its pod, in the mesh of a, b and c; it reads as a user with a client certificate.
    await createPod(s, NS, 'rel', { labels: { 'netzlive/pod-type': 'mesh' } });
    await setPodStatus(s, NS, 'rel', { ip: '::1', ready: true });
    const creds = await mintClient(s.pki, 'user-beam-rel', 'beam-rel', []);
    await applyObjects(
      s,
      readerRbac({
        namespace: NS,
        name: 'beam-rel',
        topologies: ['mesh'],
        verbs: ['get', 'watch'],
        leases: true,
        subject: { kind: 'User', name: 'beam-rel' },
      }),
    );
    const home = join(app, 'home');
    await mkdir(home);
    // Booted as a pod boots it: HOSTNAME and POD_IP from the pod, the cookie from the environment.
    const env = {
      ...erl.childEnv(home),
      RELEASE_COOKIE: erl.cookie,
      HOSTNAME: 'rel',
      POD_IP: '::1',
      // The test world's own epmd, and distribution on loopback only.
      ELIXIR_ERL_OPTIONS: '-start_epmd false -kernel inet_dist_use_interface {0,0,0,0,0,0,0,1}',
      CT_NAME: 'mesh',
      CT_NAMESPACE: NS,
      CT_API_URL: s.server,
      CT_CA_FILE: s.pki.caCert,
      CT_CERT_FILE: creds.cert,
      CT_KEY_FILE: creds.key,
    };
    release = spawn(bin, ['start'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    release.stdout!.on('data', (b: Buffer) => (releaseOut += b.toString()));
    release.stderr!.on('data', (b: Buffer) => (releaseOut += b.toString()));
    await nodes
      .get('a')!
      .waitForNodes(['b@::1', 'c@::1', 'rel@::1'], 60_000)
      .catch((e: Error) => {
        throw new Error(`${e.message}\nthe release said: ${releaseOut.slice(-3000)}`);
      });
    // Its own view: the hook heard the status, with the peers by their IPv6 names.
    // (The status event lists the peers as strings; a round event, which names nodes as atoms,
    // comes only when the release itself dials or drops someone, so it is not waited for.)
    const statusEvent = () => /member event: %\{[^\n]*event: :status[^\n]*/.exec(releaseOut)?.[0];
    await waitFor('the release’s hook to hear the status', () => statusEvent() !== undefined, 30_000);
    expect(statusEvent()).toContain('"a@::1"');
    // The release's rpc helper is an IPv6 node too (ELIXIR_ERL_OPTIONS from env.sh.eex).
    const rpc = await run(bin, ['rpc', 'IO.puts(node())'], env, 60_000);
    expect({ code: rpc.code, out: rpc.stdout.trim() }).toEqual({ code: 0, out: 'rel@::1' });
  }, 420_000);

  it('the sidecar’s erlang connector: erl_call cannot reach a name@::1 node, and the agent says so at start', async () => {
    // The fact behind the refusal, on this OTP's erl_call: a running IPv6 node, unreachable.
    const r = await erl.rpc(full('a'), 'erlang node []');
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("can't ei_gethostbyname(::1)");
    const agent = new CtopoProcess(
      [
        ...localAgentArgs({
          kubeconfig: s.kubeconfig,
          namespace: NS,
          topology: 'mesh',
          pod: 'a',
          host: '::1',
        }),
        '--connector',
        'erlang',
        '--cookie-file',
        erl.cookieFile,
      ],
      { ERL_EPMD_PORT: String(erl.epmdPort) },
    );
    await waitFor('the agent to exit', () => agent.exitCode !== undefined, 30_000).catch((e: Error) => {
      throw new Error(`${e.message}\n${agent.output.slice(-2000)}`);
    });
    expect(agent.exitCode).not.toBe(0);
    expect(agent.output).toContain('is named by an IPv6 address, which erl_call cannot reach');
    expect(agent.output).toContain('OTP library');
  });
});
