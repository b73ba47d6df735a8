import type { CommandEntry } from '../../operator/cli/program.js';

/** The dev tools' commands, in the order `npm run ctopo-dev -- --help` lists them (`dev/main.ts`). */
export const devCommands: readonly CommandEntry[] = [
  {
    name: 'demo',
    summary: 'run everything on a throwaway local control plane and print what a user sees',
    load: async () => (await import('./demo.js')).demoCommand,
  },
  {
    name: 'dev-cluster',
    summary: 'start or stop a throwaway local control plane (etcd + kube-apiserver) for trying things out',
    load: async () => (await import('./dev-cluster.js')).devClusterCommand,
  },
];
