import type { CommandEntry } from '../program.js';

/**
 * Every `ctopo` subcommand, in the order `ctopo --help` lists them. A command's code is loaded
 * only when it runs. The repository's dev tools (the demo, the dev cluster) are a program of
 * their own, `dev/main.ts`: nothing here loads them.
 */

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
    name: 'mesh',
    summary: "who is connected to whom, by the members' own reports: a members × members matrix",
    load: async () => (await import('./mesh.js')).meshCommand,
  },
];
