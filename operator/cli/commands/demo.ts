import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import type { Command } from '../command.js';
import { CRD_PATH } from '../../api/generate.js';
import {
  startControlPlane,
  stopControlPlane,
  type ControlPlaneState,
} from '../../devcluster/control-plane.js';

const run = promisify(execFile);

async function kubectl(s: ControlPlaneState, args: string[], input?: string): Promise<string> {
  const p = run(s.binaries.kubectl, ['--kubeconfig', s.kubeconfig, ...args], { maxBuffer: 16 << 20 });
  if (input !== undefined) p.child.stdin!.end(input);
  return (await p).stdout;
}

const SAMPLE = `apiVersion: cluster.netzlive.io/v1alpha1
kind: ClusterTopology
metadata: {name: web, namespace: netzlive}
spec:
  selector: "netzlive/pod-type=cluster-service"
  pollingInterval: 10s
`;

export const demoCommand: Command = {
  name: 'demo',
  summary: 'run everything on a throwaway local control plane and print what a user sees',
  help: `Usage: ctopo demo [--keep] [--state DIR]

Starts a local control plane (building kube-apiserver and etcd first if needed), installs the
ClusterTopology CRD, creates a sample topology and prints it. Tears everything down at the end
unless --keep; an interrupt (Ctrl-C) also tears down.

Flags:
  --keep        leave the control plane running (stop it with: ctopo dev-cluster down --state DIR)
  --state DIR   state directory (default: a new temporary directory)`,
  options: { keep: { type: 'boolean' }, state: { type: 'string' } },
  async run(values, _positionals, io) {
    const keep = values.keep === true;
    const dir = values.state ? resolve(values.state as string) : await mkdtemp(join(tmpdir(), 'ctopo-demo-'));
    const teardown = async () => {
      await stopControlPlane(dir);
      if (!values.state) await rm(dir, { recursive: true, force: true });
    };
    const onSignal = () => void teardown().finally(() => process.exit(130));
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    try {
      const t0 = Date.now();
      const s = await startControlPlane(dir, { log: (l) => io.err(`demo: ${l}`) });
      io.out(`== control plane ${s.server} up in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
      await kubectl(s, ['apply', '-f', CRD_PATH]);
      await kubectl(s, ['wait', '--for=condition=Established', 'crd/clustertopologies.cluster.netzlive.io']);
      await kubectl(s, ['create', 'namespace', 'netzlive']);
      await kubectl(s, ['apply', '-f', '-'], SAMPLE);
      io.out('== kubectl get clustertopology -n netzlive');
      io.out(await kubectl(s, ['get', 'clustertopology', '-n', 'netzlive']));
      if (keep)
        io.out(
          `== kept running: export KUBECONFIG=${s.kubeconfig}; stop with: ctopo dev-cluster down --state ${dir}`,
        );
      return 0;
    } finally {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      if (!keep) await teardown();
    }
  },
};
