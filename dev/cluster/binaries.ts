import { access, constants } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runScript } from './run-script.js';

/** Where the real Kubernetes binaries are: built from Go modules and cached, or envtest's. */
export interface Binaries {
  kubeApiserver: string;
  etcd: string;
  kubectl: string;
  helm?: string;
}

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
export const buildScript = join(repoRoot, 'tools', 'build-binaries.sh');

async function executable(path: string): Promise<boolean> {
  try {
    await access(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function runBuild(args: string[], log: (line: string) => void): Promise<Record<string, string>> {
  return runScript(buildScript, args, log);
}

/**
 * Finds kube-apiserver, etcd and kubectl (and helm with `withHelm`): `KUBEBUILDER_ASSETS`
 * first (the envtest convention), then the build cache, building what is missing with
 * progress on `log`. A second call is a cache hit.
 */
export async function ensureBinaries(
  log: (line: string) => void,
  opts: { withHelm?: boolean } = {},
): Promise<Binaries> {
  const dirs = await runBuild(['--print-dirs'], log);
  const assets = process.env.KUBEBUILDER_ASSETS;
  const found: Partial<Binaries> = {};
  if (
    assets &&
    (await executable(join(assets, 'kube-apiserver'))) &&
    (await executable(join(assets, 'etcd')))
  ) {
    found.kubeApiserver = join(assets, 'kube-apiserver');
    found.etcd = join(assets, 'etcd');
    if (await executable(join(assets, 'kubectl'))) found.kubectl = join(assets, 'kubectl');
  }
  const targets: string[] = [];
  const kubeDir = dirs.KUBE_DIR!;
  if (!found.kubeApiserver || !found.kubectl) {
    if (!(await executable(join(kubeDir, 'kube-apiserver'))) || !(await executable(join(kubeDir, 'kubectl'))))
      targets.push('kube');
  }
  if (!found.etcd && !(await executable(join(dirs.ETCD_DIR!, 'etcd')))) targets.push('etcd');
  if (opts.withHelm && !(await executable(join(dirs.HELM_DIR!, 'helm')))) targets.push('helm');
  if (targets.length) await runBuild(targets, log);
  return {
    kubeApiserver: found.kubeApiserver ?? join(kubeDir, 'kube-apiserver'),
    etcd: found.etcd ?? join(dirs.ETCD_DIR!, 'etcd'),
    kubectl: found.kubectl ?? join(kubeDir, 'kubectl'),
    ...(opts.withHelm ? { helm: join(dirs.HELM_DIR!, 'helm') } : {}),
  };
}

/**
 * kube-controller-manager (cached beside kube-apiserver; built alone when missing): the tests run
 * its garbage collector against a test control plane, which has no controllers of its own.
 */
export async function ensureControllerManager(log: (line: string) => void): Promise<string> {
  const dirs = await runBuild(['--print-dirs'], log);
  const binary = join(dirs.KUBE_DIR!, 'kube-controller-manager');
  if (!(await executable(binary))) await runBuild(['controller-manager'], log);
  return binary;
}
