// Runs the Dockerfile's build without a Docker engine, as faithfully as a machine without one
// allows, and checks the result. Started by tools/image-build-check.sh (which picks the Node.js
// that stands in for the base image's). What it does:
//
//  1. The build context: the working tree's files that git would commit (tracked and untracked,
//     minus .gitignore — so no node_modules or dist), or `--ref REF`'s tree, filtered by
//     .dockerignore. A clean copy: nothing from the checkout's own builds gets in.
//  2. Every stage of the Dockerfile in a directory of its own that stands for the stage's root
//     file system: WORKDIR, COPY (from the context or `--from` an earlier stage) and RUN are
//     carried out; RUN steps that need the base image's Debian as root (apt-get) are reported
//     and skipped. The base image itself is not there: its `node` is stood in for by the given
//     Node.js, put first on PATH.
//  3. The final stage is checked: only bin/, dist/operator/, crds/ and the package files beside
//     node_modules (no dev tools, generators, benchmarks or tests); no devDependency in its
//     node_modules (typescript, jest, the `node` package...), every dependency present, every package the compiled code imports is
//     a dependency or a Node.js built-in; USER numeric and not root; then the ENTRYPOINT runs
//     `--help`, `operator --help` and, when `ctopo --help` lists it, `agent --help` — as that
//     user when this runs as root (setpriv), with the stage read-only and only a temporary
//     directory writable, and nothing may be written into the stage.
//
// Exit 0 when all holds; otherwise a message and a non-zero exit. `--keep` keeps the directory;
// `--dockerfile FILE` checks another Dockerfile against the same context (the tests use it to
// show that a broken one is caught).
import { execFileSync, spawnSync } from 'node:child_process';
import console from 'node:console';
import {
  chmodSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
} from 'node:fs';
import { builtinModules } from 'node:module';
import { homedir, tmpdir } from 'node:os';
import { dirname, join, matchesGlob, posix, resolve } from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const keep = args.includes('--keep');
const refAt = args.indexOf('--ref');
const ref = refAt >= 0 ? args[refAt + 1] : undefined;
const dfAt = args.indexOf('--dockerfile');
const dockerfilePath = dfAt >= 0 ? resolve(args[dfAt + 1]) : join(root, 'Dockerfile');
const baseNode = process.env.CTOPO_IMAGE_NODE ?? process.execPath;
const t0 = Date.now();
const cacheDir = process.env.CTOPO_CACHE_DIR ?? join(homedir(), '.cache', 'cluster-topology');

const say = (msg) => console.log(`image-build-check: ${msg} (${((Date.now() - t0) / 1000).toFixed(0)} s)`);
class CheckFailed extends Error {}
const fail = (msg) => {
  throw new CheckFailed(msg);
};

// ---- Dockerfile -------------------------------------------------------------------------------

/** Instructions with continuation lines joined and comments dropped. */
function instructions(text) {
  const out = [];
  let cur = '';
  for (const raw of text.split('\n')) {
    const line = raw.trimEnd();
    if (!cur && (/^\s*#/.test(line) || !line.trim())) continue;
    if (cur && /^\s*#/.test(line)) continue;
    if (line.endsWith('\\')) cur += line.slice(0, -1) + ' ';
    else {
      out.push((cur + line).trim());
      cur = '';
    }
  }
  if (cur.trim()) out.push(cur.trim());
  return out.map((l) => {
    const m = /^(\S+)\s*(.*)$/.exec(l);
    return { op: m[1].toUpperCase(), rest: m[2] };
  });
}

function stagesOf(text) {
  const stages = [];
  for (const { op, rest } of instructions(text)) {
    if (op === 'FROM') {
      const m = /^(?:--platform=\S+\s+)?(\S+)(?:\s+AS\s+(\S+))?$/i.exec(rest);
      if (!m) fail(`cannot read FROM ${rest}`);
      stages.push({ name: m[2] ?? String(stages.length), base: m[1], steps: [] });
    } else if (op === 'ARG' && !stages.length) continue;
    else if (!stages.length) fail(`${op} before the first FROM`);
    else stages.at(-1).steps.push({ op, rest });
  }
  return stages;
}

// ---- Build context ---------------------------------------------------------------------------

/** The subset of .dockerignore syntax that matters here: globs with ** and !exceptions, last match wins. */
function dockerignore(file) {
  if (!existsSync(file)) return () => false;
  const patterns = readFileSync(file, 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => ({
      negate: l.startsWith('!'),
      glob: posix.normalize(l.replace(/^!/, '').replace(/^\//, '')).replace(/\/$/, ''),
    }));
  return (path) => {
    let excluded = false;
    for (const p of patterns)
      if (matchesGlob(path, p.glob) || matchesGlob(path, `${p.glob}/**`)) excluded = !p.negate;
    return excluded;
  };
}

function buildContext(dir) {
  const raw = join(dir, 'raw');
  mkdirSync(raw, { recursive: true });
  if (ref) {
    execFileSync('bash', ['-c', 'git -C "$1" archive "$2" | tar -x -C "$3"', 'x', root, ref, raw]);
  } else {
    const files = execFileSync('git', [
      '-C',
      root,
      'ls-files',
      '-z',
      '--cached',
      '--others',
      '--exclude-standard',
    ])
      .toString()
      .split('\0')
      .filter(Boolean);
    for (const f of files) {
      const src = join(root, f);
      if (!existsSync(src)) continue; // deleted in the working tree
      mkdirSync(dirname(join(raw, f)), { recursive: true });
      cpSync(src, join(raw, f));
    }
  }
  const ignored = dockerignore(join(raw, '.dockerignore'));
  const ctx = join(dir, 'context');
  let kept = 0;
  const walk = (rel) => {
    for (const e of readdirSync(join(raw, rel), { withFileTypes: true })) {
      const p = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) walk(p);
      else if (!ignored(p)) {
        mkdirSync(dirname(join(ctx, p)), { recursive: true });
        cpSync(join(raw, p), join(ctx, p));
        kept++;
      }
    }
  };
  walk('');
  rmSync(raw, { recursive: true, force: true });
  return { ctx, kept };
}

// ---- Stages ----------------------------------------------------------------------------------

/** Docker's COPY: a directory source copies its contents; several sources or a trailing / copy into a directory. */
function copy(srcs, destAbs, destIsDir) {
  for (const src of srcs) {
    if (!existsSync(src)) fail(`COPY source ${src} does not exist (missing from the build context?)`);
    if (statSync(src).isDirectory()) {
      mkdirSync(destAbs, { recursive: true });
      cpSync(src, destAbs, { recursive: true });
    } else {
      const target = destIsDir ? join(destAbs, src.split('/').at(-1)) : destAbs;
      mkdirSync(dirname(target), { recursive: true });
      cpSync(src, target);
    }
  }
}

function runStages(stages, ctx, work, shim) {
  const fs = new Map(); // stage name → { dir, workdir, env, user, entrypoint }
  for (const stage of stages) {
    const dir = join(work, 'stages', stage.name);
    mkdirSync(dir, { recursive: true });
    const st = { dir, workdir: '/', env: {}, user: '0', entrypoint: undefined, cmd: undefined, skipped: [] };
    fs.set(stage.name, st);
    const inStage = (p) => join(dir, posix.resolve(st.workdir, p));
    say(`stage ${stage.name} (FROM ${stage.base})`);
    for (const { op, rest } of stage.steps) {
      if (op === 'WORKDIR') {
        st.workdir = posix.resolve(st.workdir, rest);
        mkdirSync(inStage('.'), { recursive: true });
      } else if (op === 'ENV') {
        for (const m of rest.matchAll(/(\w+)=("[^"]*"|\S+)/g)) st.env[m[1]] = m[2].replace(/^"|"$/g, '');
      } else if (op === 'USER') st.user = rest.trim();
      else if (op === 'ENTRYPOINT') st.entrypoint = JSON.parse(rest);
      else if (op === 'CMD') st.cmd = JSON.parse(rest);
      else if (op === 'COPY') {
        const words = rest.split(/\s+/);
        const flags = words.filter((w) => w.startsWith('--'));
        const paths = words.filter((w) => !w.startsWith('--'));
        const dest = paths.pop();
        const from = flags.find((f) => f.startsWith('--from='))?.slice('--from='.length);
        let srcs;
        if (from) {
          const other = fs.get(from) ?? fail(`COPY --from=${from}: no such earlier stage`);
          srcs = paths.map((p) => join(other.dir, posix.resolve(other.workdir, p)));
        } else srcs = paths.map((p) => join(ctx, posix.normalize(p)));
        copy(srcs, inStage(dest), dest.endsWith('/') || paths.length > 1);
      } else if (op === 'RUN') {
        if (/\bapt-get\b/.test(rest)) {
          st.skipped.push(rest);
          say(`  skipped (needs the base image's Debian, as root): RUN ${rest}`);
          continue;
        }
        say(`  RUN ${rest}`);
        const { PATH: _p, HOME: _h, ...stageEnv } = st.env;
        // npm's cache: one per stage, kept between runs under the project's cache directory —
        // never the user's ~/.npm, which a Dockerfile's `npm cache clean` would wipe.
        const npmCache = join(cacheDir, 'image-check-npm', stage.name);
        const r = spawnSync('bash', ['-euo', 'pipefail', '-c', rest], {
          cwd: inStage('.'),
          stdio: ['ignore', 'inherit', 'inherit'],
          env: {
            ...cleanEnv(),
            ...stageEnv,
            PATH: `${shim}:${cleanPath()}`,
            npm_config_cache: npmCache,
            npm_config_update_notifier: 'false',
          },
        });
        if (r.status !== 0) fail(`RUN ${rest} failed with exit code ${r.status}`);
      }
    }
  }
  return fs;
}

/**
 * The caller's environment without what an `npm run` or `npm test` around this script adds
 * (npm_* settings, node_modules/.bin on PATH): a RUN step must not find tools the stage lacks.
 */
function cleanEnv() {
  return Object.fromEntries(
    Object.entries(process.env).filter(
      ([k]) => !/^npm_/i.test(k) && k !== 'INIT_CWD' && k !== 'NODE_OPTIONS',
    ),
  );
}
function cleanPath() {
  return (process.env.PATH ?? '/usr/bin:/bin')
    .split(':')
    .filter((p) => p && !p.includes('node_modules') && !p.includes('node-gyp-bin'))
    .join(':');
}

// ---- Checks of the final stage ---------------------------------------------------------------

function checkDependencies(app) {
  const pkg = JSON.parse(readFileSync(join(app, 'package.json'), 'utf8'));
  const lock = JSON.parse(readFileSync(join(app, 'package-lock.json'), 'utf8'));
  const nm = join(app, 'node_modules');
  // Everything the lockfile marks dev-only must be absent...
  const devOnly = Object.entries(lock.packages ?? {})
    .filter(([path, v]) => path.startsWith('node_modules/') && v.dev)
    .map(([path]) => path);
  const present = devOnly.filter((p) => existsSync(join(app, p)));
  if (present.length) fail(`dev-only packages in the final image: ${present.slice(0, 20).join(', ')}`);
  // ...and, whatever the lockfile says, the tools that must never ship.
  for (const name of ['typescript', 'jest', 'node', 'eslint', 'prettier', 'ts-node', 'fast-check'])
    if (existsSync(join(nm, name))) fail(`${name} is in the final image`);
  for (const bin of ['node', 'tsc', 'jest', 'eslint', 'prettier'])
    if (existsSync(join(nm, '.bin', bin))) fail(`node_modules/.bin/${bin} is in the final image`);
  const missing = Object.keys(pkg.dependencies ?? {}).filter((d) => !existsSync(join(nm, d, 'package.json')));
  if (missing.length) fail(`dependencies missing from the final image: ${missing.join(', ')}`);
  // A devDependency may still be there because a production dependency needs it (@types/node).
  const shared = Object.keys(pkg.devDependencies ?? {}).filter((d) => existsSync(join(nm, d)));
  say(
    `final node_modules: ${Object.keys(pkg.dependencies ?? {}).length} dependencies; none of ${devOnly.length} dev-only packages` +
      (shared.length ? ` (${shared.join(', ')}: needed by a production dependency)` : ''),
  );
  return pkg;
}

/** Every bare specifier the compiled code imports must be a dependency or a Node.js built-in. */
function checkImports(app, pkg) {
  const allowed = new Set(Object.keys(pkg.dependencies ?? {}));
  const builtins = new Set(builtinModules);
  const bad = new Set();
  const walk = (dir) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.js')) {
        const text = readFileSync(p, 'utf8');
        // Import and export statements start a line in tsc's output; a word "from" in a comment or
        // beside a string (required: ['from', 'to']) is none.
        const specifiers =
          /^\s*(?:import|export)\b[^'"]*?\bfrom\s*['"]([^'"]+)['"]|^\s*import\s*['"]([^'"]+)['"]|\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/gm;
        for (const m of text.matchAll(specifiers)) {
          const spec = m[1] ?? m[2] ?? m[3];
          if (spec.startsWith('.') || spec.startsWith('/') || spec.startsWith('node:')) continue;
          const name = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0];
          if (!allowed.has(name) && !builtins.has(name)) bad.add(`${name} (in ${p.slice(app.length + 1)})`);
        }
      }
    }
  };
  for (const d of ['dist', 'bin']) if (existsSync(join(app, d))) walk(join(app, d));
  if (bad.size) fail(`the compiled code imports packages that are not dependencies: ${[...bad].join(', ')}`);
  say('every package the compiled code imports is a dependency or a Node.js built-in');
}

/**
 * Only what `ctopo operator`, `ctopo agent` and the user commands run: bin/, dist/operator/, the
 * CRDs, the package files and production node_modules — no dev tools (dev/), generators,
 * benchmarks or tests, wherever they would sit.
 */
function checkShippedTree(app) {
  const shipped = /^(bin|dist\/operator|crds)\/|^(package\.json|package-lock\.json)$/;
  const devOnly = /(^|\/)(dev|bench|test|generate)(\/|$)/;
  const bad = [];
  const walk = (dir) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      const rel = p.slice(app.length + 1);
      if (rel === 'node_modules') continue;
      if (e.isDirectory()) {
        if (devOnly.test(rel)) bad.push(`${rel}/`);
        else walk(p);
      } else if (!shipped.test(rel)) bad.push(rel);
    }
  };
  walk(app);
  if (bad.length) fail(`the final image holds more than what runs: ${bad.slice(0, 20).join(', ')}`);
  say(
    'the final stage holds bin/, dist/operator/, crds/ and production node_modules: no dev tools, generators, benchmarks or tests',
  );
}

function snapshot(dir) {
  const out = [];
  const walk = (d) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      const s = lstatSync(p);
      out.push(`${p} ${s.size} ${s.mtimeMs}`);
      if (e.isDirectory()) walk(p);
    }
  };
  walk(dir);
  return out.sort().join('\n');
}

function setReadOnly(dir, ro) {
  const walk = (d) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isSymbolicLink()) continue;
      const mode = statSync(p).mode & 0o777;
      chmodSync(p, ro ? mode & ~0o222 : mode | 0o200);
      if (e.isDirectory()) walk(p);
    }
  };
  walk(dir);
}

function runEntrypoint(final, shim, work) {
  const user = final.user;
  const m = /^(\d+)(?::(\d+))?$/.exec(user);
  if (!m) fail(`USER of the final stage must be numeric (uid[:gid]), not "${user}"`);
  if (m[1] === '0') fail('the final stage runs as root');
  const entry = final.entrypoint ?? fail('the final stage has no ENTRYPOINT');
  if (entry[0] !== 'node') fail(`ENTRYPOINT should start the base image's node, not ${entry[0]}`);
  const script = join(final.dir, entry[1]);
  const tmp = join(work, 'tmp'); // stands for the emptyDir on /tmp
  mkdirSync(tmp, { recursive: true });
  chmodSync(tmp, 0o1777);
  const asUser = process.getuid?.() === 0 && spawnSync('setpriv', ['--version']).status === 0;
  const uid = m[1];
  const gid = m[2] ?? m[1];
  say(
    asUser
      ? `running the entrypoint as ${uid}:${gid} with the stage read-only`
      : 'running the entrypoint (not root: as this user)',
  );
  const run = (cliArgs) => {
    const cmd = [join(shim, 'node'), script, ...entry.slice(2), ...cliArgs];
    const r = asUser
      ? spawnSync('setpriv', [`--reuid=${uid}`, `--regid=${gid}`, '--clear-groups', ...cmd], {
          cwd: '/',
          encoding: 'utf8',
          env: runtimeEnv(final, shim, tmp),
        })
      : spawnSync(cmd[0], cmd.slice(1), { cwd: '/', encoding: 'utf8', env: runtimeEnv(final, shim, tmp) });
    if (r.status !== 0)
      fail(
        `ctopo ${cliArgs.join(' ')} exited with ${r.status ?? r.signal}: ${(r.stderr || r.stdout).slice(0, 2000)}`,
      );
    return r.stdout;
  };
  const before = snapshot(final.dir);
  setReadOnly(final.dir, true);
  try {
    const help = run(['--help']);
    if (!/Usage: ctopo/.test(help)) fail(`ctopo --help printed no usage: ${help}`);
    const op = run(['operator', '--help']);
    if (!/Usage: ctopo operator/.test(op)) fail(`ctopo operator --help printed no usage: ${op}`);
    say('ctopo --help and ctopo operator --help work');
    if (/^\s+agent\s/m.test(help)) {
      const ag = run(['agent', '--help']);
      if (!/Usage: ctopo agent/.test(ag)) fail(`ctopo agent --help printed no usage: ${ag}`);
      say('ctopo agent --help works');
    } else say('ctopo --help lists no agent command yet: agent --help not run');
  } finally {
    setReadOnly(final.dir, false);
  }
  if (snapshot(final.dir) !== before)
    fail('running ctopo wrote into the image file system (only /tmp may be written)');
}

function runtimeEnv(final, shim, tmp) {
  return { ...final.env, PATH: `${shim}:/usr/local/bin:/usr/bin:/bin`, HOME: tmp, TMPDIR: tmp };
}

// ---- Main ------------------------------------------------------------------------------------

function main() {
  const work = mkdtempSync(join(process.env.TMPDIR ?? tmpdir(), 'ctopo-image-check-'));
  chmodSync(work, 0o755);
  try {
    const dockerfile = readFileSync(dockerfilePath, 'utf8');
    const stages = stagesOf(dockerfile);
    if (stages.length < 2) fail('the Dockerfile should have a build stage and a final stage');
    const tag = /^node:(\d+\.\d+\.\d+)/.exec(stages.at(-1).base)?.[1];
    const version = execFileSync(baseNode, ['--version']).toString().trim();
    say(`standing in for ${stages.at(-1).base}'s node: ${baseNode} (${version})`);
    if (tag && version.split('.')[0] !== `v${tag.split('.')[0]}`)
      fail(
        `the stand-in node is ${version}, the image's is ${tag}: use a Node.js ${tag.split('.')[0]} (CTOPO_IMAGE_NODE)`,
      );
    const shim = join(work, 'base-node');
    mkdirSync(shim);
    execFileSync('ln', ['-s', baseNode, join(shim, 'node')]);

    const { ctx, kept } = buildContext(work);
    say(`build context: ${kept} files from ${ref ? `git ${ref}` : 'the working tree'}, after .dockerignore`);
    const fsByStage = runStages(stages, ctx, work, shim);
    const final = fsByStage.get(stages.at(-1).name);
    execFileSync('chmod', ['-R', 'a+rX', work]);
    const app = join(final.dir, final.workdir);
    checkShippedTree(app);
    const pkg = checkDependencies(app);
    checkImports(app, pkg);
    runEntrypoint(final, shim, work);
    const size = execFileSync('du', ['-sh', join(app, 'node_modules')])
      .toString()
      .split('\t')[0];
    say(
      `OK — final stage ${stages.at(-1).name}: /app/node_modules ${size}; not emulated: ${final.skipped.length} apt-get step(s)`,
    );
  } finally {
    if (keep) say(`kept ${work}`);
    else rmSync(work, { recursive: true, force: true });
  }
}

try {
  main();
} catch (e) {
  console.error(`image-build-check: FAILED: ${e instanceof CheckFailed ? e.message : e.stack}`);
  process.exit(1);
}
