/**
 * What loading the operator's code costs a fresh Node.js process before it does anything:
 * resident memory of a bare process, after importing the kube client module (the one importer
 * of @kubernetes/client-node), and after importing the whole CLI. Each reading is its own
 * child process, so nothing is shared or cached between them.
 */
import { execFile } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const distRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');

export interface Footprint {
  bareBytes: number;
  kubeClientBytes: number;
  cliBytes: number;
}

const script = (modules: string[]) =>
  [
    'const rss = [process.memoryUsage().rss];',
    ...modules.map((m) => `await import(${JSON.stringify(m)}); rss.push(process.memoryUsage().rss);`),
    'console.log(JSON.stringify(rss));',
  ].join('\n');

export function measureFootprint(): Promise<Footprint> {
  const kube = pathToFileURL(join(distRoot, 'operator', 'kube', 'client.js')).href;
  const cli = pathToFileURL(join(distRoot, 'operator', 'cli', 'main.js')).href;
  // As bin/ctopo.js starts: the slim client-node import first.
  const slim = pathToFileURL(join(distRoot, 'operator', 'kube', 'slim-client-node.js')).href;
  const install = `(await import(${JSON.stringify(slim)})).installSlimClientNodeImport();`;
  return new Promise((ok, fail) =>
    execFile(
      process.execPath,
      ['--input-type=module', '-e', `${install}\n${script([kube, cli])}`],
      { timeout: 60_000 },
      (err, stdout) => {
        if (err) return fail(err);
        const [bare, kubeClient, all] = JSON.parse(stdout) as number[];
        ok({ bareBytes: bare!, kubeClientBytes: kubeClient!, cliBytes: all! });
      },
    ),
  );
}
