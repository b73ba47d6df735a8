// The one version number lives in package.json. This writes it into every other place that
// states it (the chart, the OTP library, the generated CRDs, the image tag in the examples and
// the Dockerfile's comments, the docs' artifact names), so that bumping is one command:
//
//   npm version 0.2.0 --no-git-tag-version    # package.json and package-lock.json; npm then runs
//                                             # this script (the `version` script) to write the rest
//   node tools/release/version.mjs            # the same by hand, from package.json
//
// test/unit/packaging/version.test.ts checks every place against package.json on its own.
import console from 'node:console';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const version = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version;
if (!/^\d+\.\d+\.\d+$/.test(version)) {
  console.error(`version: package.json's version ${JSON.stringify(version)} is not X.Y.Z`);
  process.exit(1);
}

const V = String.raw`\d+\.\d+\.\d+`;
// The OTP library's folder.
const lib = 'clients/cluster_topology';
/** [file, pattern whose group 2 is the version (groups 1 and 3 are kept)]. */
const places = [
  ['charts/cluster-topology/Chart.yaml', new RegExp(`^(version: )(${V})()$`, 'm')],
  ['charts/cluster-topology/Chart.yaml', new RegExp(`^(appVersion: ')(${V})(')$`, 'm')],
  [`${lib}/src/cluster_topology.app.src`, new RegExp(`(\\{vsn, ")(${V})("\\})`)],
  [`${lib}/mix.exs`, new RegExp(`(version: ")(${V})(")`)],
  ['examples/multi-replica.yaml', new RegExp(`(image: ghcr\\.io/netzlive/cluster-topology:)(${V})()`)],
  ['examples/single-replica.yaml', new RegExp(`(image: ghcr\\.io/netzlive/cluster-topology:)(${V})()`)],
  ['Dockerfile', new RegExp(`( cluster-topology:)(${V})( )`, 'g')],
  // The generated CRDs carry the release they come from (npm run generate writes the same).
  ...['crds', 'charts/cluster-topology/crds'].flatMap((dir) =>
    readdirSync(join(root, dir))
      .filter((f) => f.endsWith('.yaml'))
      .map((f) => [`${dir}/${f}`, new RegExp(`^(    cluster\\.netzlive\\.io/release: )(${V})()$`, 'm')]),
  ),
];
/** Where the docs quote the version (artifact names, the git tag): rewritten wherever found. */
const quoted = new RegExp(
  `(cluster-topology[-:]|cluster_topology-|release/|tag: "v|\\{tag, "v|--version )(${V})(\\b)`,
  'g',
);
const docs = ['README.md', 'CONTRIBUTING.md', 'charts/cluster-topology/README.md', `${lib}/README.md`];

let changed = 0;
for (const [file, pattern] of places) {
  const path = join(root, file);
  const before = readFileSync(path, 'utf8');
  if (!pattern.test(before)) {
    console.error(`version: ${file} no longer states the version where expected (${pattern})`);
    process.exit(1);
  }
  pattern.lastIndex = 0;
  const after = before.replace(pattern, (_m, a, _v, b) => `${a}${version}${b}`);
  if (after !== before) {
    writeFileSync(path, after);
    changed++;
    console.log(`version: ${file} → ${version}`);
  }
}
for (const file of docs) {
  const path = join(root, file);
  const before = readFileSync(path, 'utf8');
  const after = before.replace(quoted, (_m, a, _v, b) => `${a}${version}${b}`);
  if (after !== before) {
    writeFileSync(path, after);
    changed++;
    console.log(`version: ${file} → ${version}`);
  }
}
const changelog = readFileSync(join(root, 'CHANGELOG.md'), 'utf8');
if (!changelog.includes(`## [${version}]`))
  console.log(`version: CHANGELOG.md has no section "## [${version}] - <date>" yet; move [Unreleased] there`);
console.log(`version: ${version} everywhere (${changed} file(s) changed)`);
