import { installSlimClientNodeImport } from '../operator/kube/slim-client-node.js';

/**
 * The entry of the repository's dev tools (`npm run demo`, `npm run dev-cluster`, or
 * `npm run ctopo-dev -- <command>`, which does not build first): a program of its own on the
 * CLI's command framework (`operator/cli/program.ts`), so the shipped `ctopo` never loads or
 * names anything under dev/. As bin/ctopo.js does, the slim client-node import goes first.
 */
installSlimClientNodeImport();
const { runProgram } = await import('../operator/cli/program.js');
const { devCommands } = await import('./commands/index.js');
await runProgram(
  {
    name: 'ctopo-dev',
    invoke: 'npm run ctopo-dev --',
    title: "ctopo-dev — the repository's dev tools: the demo and a local control plane.",
    commands: devCommands,
  },
  process.argv.slice(2),
);
