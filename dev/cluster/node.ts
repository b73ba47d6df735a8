import { mkdir } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeKubeconfig } from './kubeconfig.js';
import { mintClient, mintServing, type Pki } from './pki.js';
import { runScript } from './run-script.js';

/**
 * The real node beside the dev cluster's control plane (`npm run dev-cluster -- up --node`): the
 * root-level parts (network namespace, containerd, kube-proxy, kubelet, mounts, cgroups) are
 * tools/node/node.sh; this file gives it certificates and kubeconfigs, and runs it.
 */

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const nodeScript = join(repoRoot, 'tools', 'node', 'node.sh');
const imagesScript = join(repoRoot, 'tools', 'node', 'images.sh');

/** The API server's address on the link to the node's network namespace (node.sh's). */
export const NODE_LINK_HOST_IP = '10.87.0.1';
export const NODE_IP = '10.87.0.2';
export const NODE_NAME = 'ctopo-node';

export interface NodeDirs {
  KUBE_DIR: string;
  CONTAINERD_DIR: string;
  IMAGES_DIR: string;
}

/** Builds (or finds cached) the node's binaries and images; progress on `log`. */
export async function ensureNodeArtifacts(
  log: (line: string) => void,
  buildScript: string,
): Promise<NodeDirs> {
  const dirs = await runScript(buildScript, ['node', 'containerd'], log);
  const images = await runScript(imagesScript, [], log);
  return { KUBE_DIR: dirs.KUBE_DIR!, CONTAINERD_DIR: dirs.CONTAINERD_DIR!, IMAGES_DIR: images.IMAGES_DIR! };
}

/** The network namespace and its link: before the API server, which listens on the link. */
export function nodeNetworkUp(dir: string, log: (line: string) => void): Promise<unknown> {
  return runScript(nodeScript, ['net', dir], log);
}

/** Certificates and kubeconfigs of the node's components, in DIR/node and DIR/pki. */
export async function writeNodeCredentials(dir: string, server: string, pki: Pki): Promise<void> {
  const n = join(dir, 'node');
  await mkdir(n, { recursive: true, mode: 0o700 });
  const who: [string, string, string[]][] = [
    ['kubelet', `system:node:${NODE_NAME}`, ['system:nodes']],
    ['kube-proxy', 'system:kube-proxy', []],
    ['kube-controller-manager', 'system:kube-controller-manager', []],
    ['kube-scheduler', 'system:kube-scheduler', []],
  ];
  for (const [file, user, groups] of who)
    await writeKubeconfig(
      join(n, `${file}.kubeconfig`),
      server,
      pki.caCert,
      await mintClient(pki, file, user, groups),
    );
  await mintServing(pki, 'kubelet-serving', NODE_NAME, [NODE_IP]);
}

export function nodeUp(dir: string, dirs: NodeDirs, log: (line: string) => void): Promise<unknown> {
  return runScript(nodeScript, ['up', dir], log, { ...dirs });
}

export function nodeDown(dir: string, log: (line: string) => void): Promise<unknown> {
  return runScript(nodeScript, ['down', dir], log);
}

/** kube-controller-manager's flags: no cloud, no leader election, service-account tokens signed. */
export function controllerManagerArgs(dir: string, pki: Pki, port: number): string[] {
  const kc = join(dir, 'node', 'kube-controller-manager.kubeconfig');
  return [
    `--kubeconfig=${kc}`,
    `--authentication-kubeconfig=${kc}`,
    `--authorization-kubeconfig=${kc}`,
    '--bind-address=127.0.0.1',
    `--secure-port=${port}`,
    '--leader-elect=false',
    // Each controller acts as its own service account (kube-system), with the bootstrap roles the
    // API server made for it (system:controller:*); its own identity may only mint their tokens.
    '--use-service-account-credentials=true',
    `--service-account-private-key-file=${pki.saKey}`,
    `--root-ca-file=${pki.caCert}`,
    // Names as of Kubernetes 1.33+ (an unknown name stops the controller manager at start). No
    // CSR signing (no cluster signing key), no node IPAM (the CNI's host-local hands out addresses).
    '--controllers=*,-certificatesigningrequest-signing-controller,-certificatesigningrequest-approving-controller,-node-ipam-controller',
    '--node-monitor-grace-period=20s',
    '--v=1',
  ];
}

export function schedulerArgs(dir: string, port: number): string[] {
  const kc = join(dir, 'node', 'kube-scheduler.kubeconfig');
  return [
    `--kubeconfig=${kc}`,
    `--authentication-kubeconfig=${kc}`,
    `--authorization-kubeconfig=${kc}`,
    '--bind-address=127.0.0.1',
    `--secure-port=${port}`,
    '--leader-elect=false',
    '--v=1',
  ];
}
