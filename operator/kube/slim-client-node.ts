import { existsSync } from 'node:fs';
import * as nodeModule from 'node:module';
import { fileURLToPath } from 'node:url';

/**
 * client-node's KubeConfig module imports the generated API's index — every API group and model,
 * 25 MB of JavaScript, about 40 MB of a process's memory — for two names. A resolve hook scoped
 * to that one import hands it a module with just those two names.
 *
 * A hook is process-wide, so only the `ctopo` launcher (bin/ctopo.js) installs it, before it
 * loads anything else; importing the package as a library changes nothing in the host process.
 * If this version of client-node keeps the names elsewhere, or the runtime has no synchronous
 * hooks, the import is left alone: more memory, the same behaviour. Returns whether it is installed.
 */
export function installSlimClientNodeImport(): boolean {
  const registerHooks = (nodeModule as { registerHooks?: typeof nodeModule.registerHooks }).registerHooks;
  let configUrl: string;
  try {
    configUrl = import.meta.resolve('@kubernetes/client-node/dist/config.js');
  } catch {
    return false; // a loader without import.meta.resolve: nothing to narrow
  }
  if (!registerHooks || !configUrl.startsWith('file:')) return false;
  const names = {
    createConfiguration: new URL('./gen/configuration.js', configUrl).href,
    ServerConfiguration: new URL('./gen/servers.js', configUrl).href,
  };
  if (!Object.values(names).every((u) => existsSync(fileURLToPath(u)))) return false;
  const source = Object.entries(names)
    .map(([name, url]) => `export { ${name} } from ${JSON.stringify(url)};`)
    .join('\n');
  const slim = `data:text/javascript,${encodeURIComponent(source)}`;
  try {
    registerHooks({
      resolve: (specifier, context, next) =>
        specifier === './gen/index.js' && context.parentURL === configUrl
          ? { url: slim, format: 'module', shortCircuit: true }
          : next(specifier, context),
    });
    return true;
  } catch {
    return false; // a sandboxing loader (a test runner's) refuses hooks: the whole index it is
  }
}
