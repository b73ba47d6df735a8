import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ControlPlaneState } from '../../dev/cluster/control-plane.js';
import type {
  ClusterTopologyMemberSpec,
  ClusterTopologyMemberStatus,
  ClusterTopologyStatus,
} from '../../operator/api/types.generated.js';
import { installCrd, kubectl, kubectlOk, kubeconfigForUser, privateCluster } from './cluster.js';
import { buildClient, FAST_CLIENT, ProbeNode } from './beam-client.js';
import { ErlangTestEnv } from './erlang.js';
import {
  applyObjects,
  applyTopology,
  createPod,
  grantOperatorRbac,
  memberReportRbac,
  readerRbac,
  serviceAccountToken,
  setPodStatus,
  topologyStatus,
} from './objects.js';
import { CtopoProcess, startOperator } from './operator-process.js';

/**
 * Members of topology `web` that are real BEAM nodes running the OTP library, each in a "pod"
 * (a Pod object on a real API server, the node named `<pod>@127.0.0.1`, a service-account mount
 * of its own), beside the real operator: the library reads the list and writes its member's
 * report, the operator aggregates the reports into the status. For the tests of
 * docs/status-protocol.md §8 with the library as the writer.
 */

export const NS = 'app';

/** A member report as read back from the API server. */
export interface MemberReportObject {
  metadata: {
    name: string;
    labels?: Record<string, string>;
    ownerReferences?: { apiVersion: string; kind: string; name: string; uid: string }[];
    managedFields?: { manager: string }[];
  };
  spec: ClusterTopologyMemberSpec;
  status: ClusterTopologyMemberStatus;
}
export const TOPOLOGY = 'web';

/** A reader's Role, and (`reports`) the Role a reporting reader needs besides. */
async function serviceAccount(s: ControlPlaneState, root: string, name: string, reports: boolean) {
  const subject = { kind: 'ServiceAccount' as const, name, namespace: NS };
  await applyObjects(s, [
    ...readerRbac({
      namespace: NS,
      name: `${name}-reader`,
      topologies: [TOPOLOGY],
      verbs: ['get', 'watch'],
      leases: true,
      subject,
    }),
    ...(reports ? memberReportRbac({ namespace: NS, name: `${name}-reporter`, subject }) : []),
  ]);
  const dir = join(root, `sa-${name}`);
  await mkdir(dir);
  await writeFile(join(dir, 'token'), await serviceAccountToken(s, NS, name));
  await writeFile(join(dir, 'ca.crt'), await readFile(s.pki.caCert));
  await writeFile(join(dir, 'namespace'), NS);
  return dir;
}

export interface StartMember {
  /** The name the node runs as (default: the pod's). */
  node?: string;
  /** Another cookie than the world's. */
  cookie?: string;
  /** The service account without permission to write reports. */
  noReports?: boolean;
  /** Extra erl arguments (e.g. `-pa` the telemetry stand-in). */
  erlArgs?: string[];
}

export class BeamMembers {
  readonly nodes = new Map<string, ProbeNode>();

  private constructor(
    readonly s: ControlPlaneState,
    private readonly stopCluster: () => Promise<void>,
    readonly erl: ErlangTestEnv,
    readonly ebin: string,
    readonly op: CtopoProcess,
    private readonly saDirs: { reports: string; noReports: string },
  ) {}

  static async start(): Promise<BeamMembers> {
    const { state: s, stop } = await privateCluster();
    const [erl, ebin] = await Promise.all([ErlangTestEnv.start(), buildClient()]);
    await installCrd(s);
    await kubectlOk(s, ['create', 'namespace', NS]);
    await grantOperatorRbac(s, { kind: 'User', name: 'operator' }, [NS], 'e2e');
    const opKubeconfig = await kubeconfigForUser(s, 'operator');
    const saDirs = {
      reports: await serviceAccount(s, erl.root, 'beam', true),
      noReports: await serviceAccount(s, erl.root, 'beam-unreported', false),
    };
    await applyTopology(s, NS, TOPOLOGY, {
      selector: 'netzlive/pod-type=cluster-service',
      pollingInterval: '1s',
    });
    const op = startOperator(opKubeconfig, ['--namespaces', NS, '--no-leader-elect']);
    await op.port();
    return new BeamMembers(s, stop, erl, ebin, op, saDirs);
  }

  full(short: string): string {
    return this.erl.nodeName(short);
  }

  async addPod(pod: string): Promise<void> {
    await createPod(this.s, NS, pod);
    await setPodStatus(this.s, NS, pod, { ip: '127.0.0.1', ready: true });
  }

  /** Starts the node of `pod` (as `pod@127.0.0.1` unless `o.node` says otherwise). */
  async startMember(pod: string, o: StartMember = {}): Promise<ProbeNode> {
    let home: string | undefined;
    if (o.cookie !== undefined) {
      home = await mkdtemp(join(this.erl.root, 'home-'));
      await writeFile(join(home, '.erlang.cookie'), o.cookie, { mode: 0o400 });
    }
    const p = await ProbeNode.start(this.erl, this.ebin, o.node ?? pod, {
      client: {
        name: TOPOLOGY,
        service_account_dir: o.noReports ? this.saDirs.noReports : this.saDirs.reports,
        ...FAST_CLIENT,
      },
      env: {
        KUBERNETES_SERVICE_HOST: '127.0.0.1',
        KUBERNETES_SERVICE_PORT: String(this.s.apiserver.port),
        ...(home ? { HOME: home } : {}),
      },
      hostname: pod,
      ...(o.erlArgs ? { erlArgs: o.erlArgs } : {}),
    });
    this.nodes.set(pod, p);
    return p;
  }

  async stopMember(pod: string): Promise<void> {
    await this.nodes.get(pod)?.stop();
    this.nodes.delete(pod);
  }

  status(): Promise<ClusterTopologyStatus | undefined> {
    return topologyStatus(this.s, NS, TOPOLOGY);
  }

  /** The member reports in the namespace, by pod. */
  async reports(): Promise<Map<string, MemberReportObject>> {
    const r = await kubectl(this.s, ['-n', NS, 'get', 'ctm', '-o', 'json', '--show-managed-fields']);
    if (r.code !== 0) return new Map();
    const items = (JSON.parse(r.stdout) as { items: MemberReportObject[] }).items;
    return new Map(items.map((m) => [m.spec.pod.name, m]));
  }

  async stop(): Promise<void> {
    await ProbeNode.stopAll();
    await CtopoProcess.stopAll();
    await this.erl?.stop();
    await this.stopCluster();
  }
}
