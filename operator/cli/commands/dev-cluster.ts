import { resolve } from 'node:path';
import { UsageError, type Command } from '../command.js';
import { readState, startControlPlane, stopControlPlane } from '../../devcluster/control-plane.js';
import { isOurs } from '../../devcluster/processes.js';

export const DEFAULT_STATE_DIR = '.ctopo/dev-cluster';

export const devClusterCommand: Command = {
  name: 'dev-cluster',
  summary: 'start or stop a throwaway local control plane (etcd + kube-apiserver) for trying things out',
  help: `Usage: ctopo dev-cluster up|down|status [--state DIR] [--node]

  up      builds kube-apiserver, etcd and kubectl from Go modules if they are not cached
          (~/.cache/cluster-topology; or takes them from $KUBEBUILDER_ASSETS), starts them on free
          loopback ports with their own certificates and RBAC, waits until /readyz answers, and
          writes DIR/kubeconfig (admin) and DIR/kubectl (kubectl already pointed at it).
  down    stops both processes; the state directory stays (delete it yourself when done).
  status  says whether the control plane in DIR runs.

Flags:
  --state DIR   state directory (default ${DEFAULT_STATE_DIR})
  --node        also a real node where pods run (needs root, cgroups and overlayfs): a kubelet,
                containerd, runc, a CNI bridge and kube-proxy in a network namespace of their own,
                plus kube-controller-manager and kube-scheduler; the images of this repository
                (localhost/cluster-topology:dev) and a BEAM image (localhost/ctopo-beam:dev) are
                built and imported. The API server then listens on 10.87.0.1, the node's link.
                See docs/real-node.md.

Without --node there are no kubelets, scheduler or controllers: pods are objects whose status
you set yourself.`,
  options: { state: { type: 'string' }, node: { type: 'boolean' } },
  allowPositionals: true,
  async run(values, positionals, io) {
    const [action, ...extra] = positionals;
    if (extra.length) throw new UsageError(`dev-cluster: unexpected argument '${extra[0]}'`);
    const dir = resolve((values.state as string | undefined) ?? DEFAULT_STATE_DIR);
    switch (action) {
      case 'up': {
        const t0 = Date.now();
        const s = await startControlPlane(dir, { log: (l) => io.err(l), node: values.node === true });
        io.out(
          [
            `dev cluster${s.node ? ' with a real node' : ''} up in ${((Date.now() - t0) / 1000).toFixed(1)} s: ${s.server}`,
            `  export KUBECONFIG=${s.kubeconfig}`,
            `  ${dir}/kubectl get namespaces`,
            `  stop it with: ctopo dev-cluster down --state ${dir}`,
          ].join('\n'),
        );
        return 0;
      }
      case 'down': {
        if (!(await stopControlPlane(dir, (l) => io.err(l)))) {
          io.err(`no dev cluster state in ${dir}`);
          return 1;
        }
        io.out(`dev cluster in ${dir} stopped (state kept in ${dir})`);
        return 0;
      }
      case 'status': {
        const s = await readState(dir);
        const up = s ? await isOurs(s.apiserver.pid, s.binaries.kubeApiserver) : false;
        io.out(up && s ? `running: ${s.server} (KUBECONFIG=${s.kubeconfig})` : `not running (${dir})`);
        return up ? 0 : 1;
      }
      case undefined:
        throw new UsageError('dev-cluster: say up, down or status');
      default:
        throw new UsageError(`dev-cluster: unknown action '${action}' (up, down or status)`);
    }
  },
};
