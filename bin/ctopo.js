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
import('../dist/operator/cli/main.js').then(
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
