#!/usr/bin/env node
// Entry of the `ctopo` CLI (also installed as the kubectl plugin `kubectl-ctopo`).
// Kept to syntax any Node.js can parse, so an old Node gets this message instead of a SyntaxError.
var parts = process.versions.node.split('.').map(Number);
if (parts[0] < 22 || (parts[0] === 22 && parts[1] < 19)) {
  process.stderr.write(
    'ctopo: needs Node.js 22.19 or newer (Node.js 24 LTS recommended); this is Node.js ' +
      process.versions.node +
      '.\n' +
      'Inside the repository, run it through npm (npm run demo, npm test, npx ctopo …): the package brings Node.js 24.\n',
  );
  process.exit(1);
}

// `ctopo operator` and `ctopo agent` run for months. With V8's defaults their young generation
// grows to 64 MB a semi-space and old space runs far ahead of what is live: at 5,000 pods the
// operator's resident memory was twice what it held. They run with smaller heap settings
// instead, by re-executing themselves once with these flags (process.execve: same PID, same
// signals and streams). The agent, a sidecar that reads one object and runs a few calls a round,
// also runs in V8's lite mode (no optimizing compilers: ~3 MB less resident, its CPU is in the
// calls it runs). CTOPO_RUNTIME_FLAGS replaces the flags; empty keeps Node's defaults.
// The same re-execution sets MALLOC_ARENA_MAX=2 unless it is set: glibc gives each thread that
// allocates (V8's GC and compiler workers) an arena of its own and keeps what they freed — at
// 5,000 pods ~30 MB of the operator's resident memory after a few status writes (measured).
var DEFAULT_RUNTIME_FLAGS = {
  operator: '--max-semi-space-size=2',
  agent: '--max-semi-space-size=2 --lite-mode',
};
var command = process.argv[2];
var longRunning = Object.prototype.hasOwnProperty.call(DEFAULT_RUNTIME_FLAGS, command);
var runtimeFlags = (
  process.env.CTOPO_RUNTIME_FLAGS === undefined
    ? longRunning
      ? DEFAULT_RUNTIME_FLAGS[command]
      : ''
    : process.env.CTOPO_RUNTIME_FLAGS
)
  .split(' ')
  .filter(Boolean);
// execve aborts the process when it fails, so first ask whether this user may run the binary.
function mayExecute(path) {
  var fs = typeof process.getBuiltinModule === 'function' ? process.getBuiltinModule('node:fs') : undefined;
  if (!fs) return false;
  try {
    fs.accessSync(path, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
if (
  longRunning &&
  typeof process.execve === 'function' &&
  mayExecute(process.execPath) &&
  runtimeFlags.length > 0 &&
  !runtimeFlags.every(function (f) {
    return process.execArgv.indexOf(f) >= 0;
  })
) {
  process.execve(
    process.execPath,
    [process.execPath].concat(process.execArgv, runtimeFlags, process.argv.slice(1)),
    Object.assign({ MALLOC_ARENA_MAX: '2' }, process.env),
  );
}

// The launcher, not the library, narrows what client-node loads (a process-wide import hook):
// see operator/kube/slim-client-node.ts.
import('../dist/operator/kube/slim-client-node.js')
  .then(function (slim) {
    slim.installSlimClientNodeImport();
    return import('../dist/operator/cli/main.js');
  })
  .then(
    function (m) {
      return m.main(process.argv.slice(2));
    },
    function (e) {
      process.stderr.write(
        'ctopo: cannot load its compiled code (run `npm run build` first): ' + e.message + '\n',
      );
      process.exit(1);
    },
  );
