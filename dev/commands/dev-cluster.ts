import { resolve } from 'node:path';
import { UsageError, type Command } from '../../operator/cli/command.js';
import {
  componentStates,
  kubeconfigFor,
  readState,
  startControlPlane,
  stopControlPlane,
} from '../cluster/control-plane.js';
import { isOurs } from '../cluster/processes.js';
import { installCrd } from '../cluster/crd.js';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

export const DEFAULT_STATE_DIR = '.ctopo/dev-cluster';

export const devClusterCommand: Command = {
  name: 'dev-cluster',
  help: `Usage: npm run dev-cluster -- up|down|status [--state DIR] [--node | --ip-family ipv6]
       npm run dev-cluster -- kubeconfig --as NAMESPACE/SERVICEACCOUNT --out FILE [--state DIR]

  up      builds kube-apiserver, etcd and kubectl from Go modules if they are not cached
          (~/.cache/cluster-topology; or takes them from $KUBEBUILDER_ASSETS), starts them on free
          loopback ports with their own certificates and RBAC, waits until /readyz answers,
          installs the project's CRDs, and writes DIR/kubeconfig (admin) and DIR/kubectl
          (kubectl already pointed at it). \`up\` on a stopped DIR starts the same cluster again:
          same CA, same ports (when free) and the same etcd data, so running operators and
          agents reconnect as after any API outage. On a DIR where only some processes still
          run (the API server died), \`up\` starts the rest beside them.
  down    stops both processes; the state directory stays (delete it yourself when done).
  status  says whether the control plane in DIR runs, and which of its processes run when
          only some do; exit 0 only when all run.
  kubeconfig
          writes FILE: a kubeconfig for the running dev cluster that authenticates as the
          service account (a token from the TokenRequest API, valid 24 h), so an agent or an
          operator run by hand gets exactly that account's permissions
          (e.g. --as netzlive/web-agent after kubectl apply -f examples/agent-rbac.yaml).

Flags:
  --state DIR   state directory (default ${DEFAULT_STATE_DIR})
  --node        also a real node where pods run (needs root, cgroups and overlayfs): a kubelet,
                containerd, runc, a CNI bridge and kube-proxy in a network namespace of their own,
                plus kube-controller-manager and kube-scheduler; the images of this repository
                (localhost/cluster-topology:dev) and a BEAM image (localhost/ctopo-beam:dev) are
                built and imported. The API server then listens on 10.87.0.1, the node's link.
                See docs/real-node.md.
  --ip-family ipv4|ipv6
                up: where etcd and the API server listen: 127.0.0.1 (default), or [::1] only, with
                an IPv6 Service range and a serving certificate for ::1 (the kubeconfig then says
                https://[::1]:PORT). A stopped cluster starts again in its own family.
  --as NAMESPACE/SERVICEACCOUNT
                kubeconfig: the service account to authenticate as
  --out FILE    kubeconfig: the file to write

Without --node there are no kubelets, scheduler or controllers: pods are objects whose status
you set yourself.`,
  options: {
    state: { type: 'string' },
    as: { type: 'string' },
    out: { type: 'string' },
    node: { type: 'boolean' },
    'ip-family': { type: 'string' },
  },
  allowPositionals: true,
  async run(values, positionals, io) {
    const [action, ...extra] = positionals;
    if (extra.length) throw new UsageError(`dev-cluster: unexpected argument '${extra[0]}'`);
    const dir = resolve((values.state as string | undefined) ?? DEFAULT_STATE_DIR);
    switch (action) {
      case 'up': {
        const t0 = Date.now();
        const family = values['ip-family'] as string | undefined;
        if (family !== undefined && family !== 'ipv4' && family !== 'ipv6')
          throw new UsageError(`dev-cluster: --ip-family is ipv4 or ipv6, not '${family}'`);
        if (family === 'ipv6' && values.node === true)
          throw new UsageError(
            'dev-cluster: the real node (--node) runs IPv4 only; leave out --ip-family ipv6',
          );
        const s = await startControlPlane(dir, {
          log: (l) => io.err(l),
          node: values.node === true,
          ...(family ? { ipFamily: family } : {}),
        });
        await installCrd(s);
        io.out(
          [
            `dev cluster${s.node ? ' with a real node' : ''} up in ${((Date.now() - t0) / 1000).toFixed(1)} s: ${s.server}`,
            `  export KUBECONFIG=${s.kubeconfig}`,
            `  ${dir}/kubectl get clustertopologies -A     # the CRD is installed`,
            `  stop it with: npm run dev-cluster -- down --state ${dir}`,
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
        const parts = s ? await componentStates(s) : [];
        const running = parts.filter((c) => c.running);
        if (s && running.length === parts.length) {
          io.out(`running: ${s.server} (KUBECONFIG=${s.kubeconfig})`);
          return 0;
        }
        if (running.length === 0) io.out(`not running (${dir})`);
        else
          io.out(
            [
              `partly running (${dir}):`,
              ...parts.map((c) => `  ${c.name}: ${c.running ? `runs (pid ${c.pid})` : 'not running'}`),
              `  npm run dev-cluster -- up --state ${dir}     # starts what is not running`,
              `  npm run dev-cluster -- down --state ${dir}   # stops the rest`,
            ].join('\n'),
          );
        return 1;
      }
      case 'kubeconfig': {
        const as = values.as as string | undefined;
        const out = values.out as string | undefined;
        const m = /^([a-z0-9-]+)\/([a-z0-9.-]+)$/.exec(as ?? '');
        if (!m) throw new UsageError('dev-cluster kubeconfig: --as NAMESPACE/SERVICEACCOUNT is needed');
        if (!out) throw new UsageError('dev-cluster kubeconfig: --out FILE is needed');
        const s = await readState(dir);
        if (!s || !(await isOurs(s.apiserver.pid, s.binaries.kubeApiserver))) {
          io.err(
            `no running dev cluster in ${dir} (start it with: npm run dev-cluster -- up --state ${dir})`,
          );
          return 1;
        }
        const { stdout } = await promisify(execFile)(s.binaries.kubectl, [
          '--kubeconfig',
          s.kubeconfig,
          '-n',
          m[1]!,
          'create',
          'token',
          m[2]!,
          '--duration=24h',
        ]);
        const file = await kubeconfigFor(s, resolve(out), { token: stdout.trim() });
        io.out(`wrote ${file}: authenticates as system:serviceaccount:${m[1]}:${m[2]} for 24 h`);
        return 0;
      }
      case undefined:
        throw new UsageError('dev-cluster: say up, down, status or kubeconfig');
      default:
        throw new UsageError(`dev-cluster: unknown action '${action}' (up, down, status or kubeconfig)`);
    }
  },
};
