import { resolve } from 'node:path';
import { UsageError, type Command } from '../../operator/cli/command.js';
import { runDemo } from '../demo/run.js';

export const demoCommand: Command = {
  name: 'demo',
  help: `Usage: npm run demo -- [--sidecar | --connector erlang|file] [--keep] [--state DIR]

Starts a local control plane (building kube-apiserver and etcd first if they are not cached),
installs the CRDs, creates Nodes over two sites (three voters placed 2 + 1 over
sites A and B; site A's two nodes on one hypervisor), pods for the two usual naming set-ups (one
replica named by a stable DNS name, several named by pod IP) plus one pod of each
kind of trouble (no IP yet, a broken JSONPath, a shared DNS name), and a ClusterTopology; runs
the operator; starts real BEAM nodes that join through the OTP client library (clients/cluster_topology) in
their own VM where Erlang is installed (else the sidecar agent with the file connector); prints
kubectl get ctopo, the peers and excluded pods, the failure-domain table, the Erlang cluster's
membership and what each node's client reports. Tears everything down at the end unless --keep;
an interrupt (Ctrl-C) tears down too. Exit 0 when every quorum verdict is the one this layout
must give.

Flags:
  --sidecar     the BEAM nodes join through the sidecar agent (erlang connector, erl_call)
                instead of the library
  --connector erlang|file
                the sidecar agent with this connector: erlang, real BEAM nodes each with an agent;
                file, one agent writing its peer list to a file
  --keep        leave the control plane running (stop it with: npm run dev-cluster -- down --state DIR)
  --state DIR   state directory (default: a new temporary directory)`,
  options: {
    keep: { type: 'boolean' },
    state: { type: 'string' },
    connector: { type: 'string' },
    sidecar: { type: 'boolean' },
  },
  async run(values, _positionals, io) {
    const given = values.connector as string | undefined;
    if (given !== undefined && given !== 'erlang' && given !== 'file')
      throw new UsageError(`demo: --connector must be erlang or file, not '${given}'`);
    const connector = given ?? (values.sidecar === true ? 'erlang' : undefined);
    return runDemo({
      ...(connector ? { connector } : {}),
      keep: values.keep === true,
      ...(values.state ? { dir: resolve(values.state as string) } : {}),
      out: io.out,
      err: io.err,
    });
  },
};
