import type { Command } from '../command.js';

/**
 * Every `ctopo` subcommand, in the order `ctopo --help` lists them. A command's code is loaded
 * only when it runs: `ctopo operator` and `ctopo agent` never load the dev cluster or the demo.
 */

export interface CommandEntry {
  name: string;
  /** One line for the overview. */
  summary: string;
  load: () => Promise<Command>;
}

/**
 * The dev cluster and the demo build a control plane with the repository's tools/: they run
 * from a clone, and the published package leaves them out.
 */
const fromClone = async (name: string, load: () => Promise<Command>): Promise<Command> => {
  try {
    return await load();
  } catch (e) {
    if ((e as { code?: string }).code !== 'ERR_MODULE_NOT_FOUND') throw e;
    throw new Error(
      `${name} runs from a clone of the repository (it builds its control plane with tools/build-binaries.sh); this installation does not include it`,
      { cause: e },
    );
  }
};

export const commands: readonly CommandEntry[] = [
  {
    name: 'operator',
    summary:
      'run the operator: watch ClusterTopology objects and their pods, publish peers and analysis in .status',
    load: async () => (await import('./operator.js')).operatorCommand,
  },
  {
    name: 'agent',
    summary: "run beside an application: follow one ClusterTopology's peers and connect/disconnect them",
    load: async () => (await import('./agent.js')).agentCommand,
  },
  {
    name: 'resolve',
    summary: 'offline: the node names the operator would compute for pods from kubectl get pods -o json',
    load: async () => (await import('./resolve.js')).resolveCommand,
  },
  {
    name: 'analyze',
    summary: 'failure domains: which single loss (site, zone, hypervisor, host, link) costs the quorum',
    load: async () => (await import('./analyze.js')).analyzeCommand,
  },
  {
    name: 'explain',
    summary: 'why a pod is, or is not, a peer of a ClusterTopology',
    load: async () => (await import('./explain.js')).explainCommand,
  },
  {
    name: 'check',
    summary: 'is it installed and working: CRDs, the operator leading, the reader role, a topology',
    load: async () => (await import('./check.js')).checkCommand,
  },
  {
    name: 'demo',
    summary: 'run everything on a throwaway local control plane and print what a user sees',
    load: () => fromClone('demo', async () => (await import('./demo.js')).demoCommand),
  },
  {
    name: 'dev-cluster',
    summary: 'start or stop a throwaway local control plane (etcd + kube-apiserver) for trying things out',
    load: () => fromClone('dev-cluster', async () => (await import('./dev-cluster.js')).devClusterCommand),
  },
];
