import { describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import { repoRoot } from './paths.js';

/**
 * What a process loads, seen from a fresh Node.js process: a resolve hook registered first
 * records every module URL resolved after it — and sees nothing that a hook registered later
 * short-circuits (the last registered hook runs first).
 */

const dist = (...p: string[]) => pathToFileURL(join(repoRoot, 'dist', ...p)).href;

function loadedBy(body: string): Promise<string[]> {
  const script = [
    "import { registerHooks } from 'node:module';",
    'const seen = [];',
    'registerHooks({ resolve(specifier, context, next) { const r = next(specifier, context); seen.push({ specifier, parent: context.parentURL, url: r.url }); return r; } });',
    body,
    'process.stdout.write(JSON.stringify(seen));',
  ].join('\n');
  return new Promise((ok, fail) =>
    execFile(
      process.execPath,
      ['--input-type=module', '-e', script],
      { cwd: repoRoot, timeout: 60_000 },
      (err, stdout, stderr) => (err ? fail(new Error(`${err.message}\n${stderr}`)) : ok(JSON.parse(stdout))),
    ),
  ).then((seen) =>
    (seen as { specifier: string; parent?: string; url: string }[]).map((s) => JSON.stringify(s)),
  );
}

const quiet = '{ out: () => {}, err: () => {} }';

/** The relative specifiers of a compiled module's static and dynamic imports. */
export const relativeImports = (source: string): string[] =>
  [...source.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)['"](\.{1,2}\/[^'"]+)['"]/g)].map(
    (m) => m[1]!,
  );
const devOnly = /\/dist\/(dev|bench|test)\//;

describe('the shipped tree holds what runs', () => {
  it.each(['operator', 'agent'])(
    '`ctopo %s` loads no dev-cluster, demo, bench or test code',
    async (command) => {
      const seen = await loadedBy(
        `const { main } = await import(${JSON.stringify(dist('operator', 'cli', 'main.js'))});\n` +
          `await main([${JSON.stringify(command)}, '--help'], ${quiet});`,
      );
      expect(seen.some((s) => s.includes(`/cli/commands/${command}.js`))).toBe(true);
      expect(seen.filter((s) => devOnly.test(s))).toEqual([]);
    },
  );

  it('`ctopo agent` loads no npm package, and not the bundled undici (an ES import of node:http reads its lazy WebSocket getters)', async () => {
    const seen = await loadedBy(
      `const { main } = await import(${JSON.stringify(dist('operator', 'cli', 'main.js'))});\n` +
        `await main(['agent', '--help'], ${quiet});\n` +
        "seen.push({ undici: process.moduleLoadList.filter((m) => m.includes('undici')) });",
    );
    expect(seen.some((s) => s.includes('/agent/run.js'))).toBe(true);
    expect(seen.filter((s) => s.includes('/node_modules/'))).toEqual([]);
    expect(seen.filter((s) => s.includes('undici'))).toEqual(['{"undici":[]}']);
  });

  it('the dev tools’ entry does load the demo (the check above can see it)', async () => {
    const seen = await loadedBy(
      // The entry runs its command line on import; its help text must not mix with the JSON.
      `const write = process.stdout.write.bind(process.stdout);\n` +
        `process.stdout.write = () => true;\n` +
        `process.argv = [process.argv[0], 'main.js', 'demo', '--help'];\n` +
        `await import(${JSON.stringify(dist('dev', 'main.js'))});\n` +
        `process.stdout.write = write;`,
    );
    expect(seen.filter((s) => devOnly.test(s)).length).toBeGreaterThan(0);
  });

  it('`ctopo` has no dev command: `ctopo demo` is an unknown command', async () => {
    const seen = await loadedBy(
      `const { main } = await import(${JSON.stringify(dist('operator', 'cli', 'main.js'))});\n` +
        `const lines = [];\n` +
        `const code = await main(['demo'], { out: (t) => lines.push(t), err: (t) => lines.push(t) });\n` +
        `seen.push({ code, lines });\nprocess.exitCode = 0;`,
    );
    expect(seen.at(-1)).toBe(
      JSON.stringify({
        code: 64,
        lines: [
          "ctopo: unknown command 'demo'. Commands: operator, agent, resolve, analyze, explain, check, mesh.",
        ],
      }),
    );
  });

  it('the shipped tree (dist/operator, bin/) imports nothing outside itself', async () => {
    const shipped = join(repoRoot, 'dist', 'operator');
    const outside: string[] = [];
    const files = [
      join(repoRoot, 'bin', 'ctopo.js'),
      ...(await readdir(shipped, { recursive: true }))
        .filter((f) => f.endsWith('.js'))
        .map((f) => join(shipped, f)),
    ];
    expect(files.length).toBeGreaterThan(100);
    for (const file of files)
      for (const spec of relativeImports(readFileSync(file, 'utf8'))) {
        const target = resolve(dirname(file), spec);
        if (!target.startsWith(shipped + sep)) outside.push(`${relative(repoRoot, file)} → ${spec}`);
      }
    expect(outside).toEqual([]);
  });

  const generatedIndexFromConfig = (seen: string[]) =>
    seen.some((s) => {
      const r = JSON.parse(s) as { specifier: string; parent?: string };
      return (
        r.specifier === './gen/index.js' &&
        (r.parent ?? '').endsWith('/@kubernetes/client-node/dist/config.js')
      );
    });

  // The Kubernetes transport loads client-node only for kubeconfigs it cannot serve itself
  // (exec plugins…): the import below stands for that lazy load.
  const clientNodeConfig = `await import('@kubernetes/client-node/dist/config.js');`;

  it('importing the package as a library loads no client-node and installs no import hook: client-node loads as it is', async () => {
    const alone = await loadedBy(
      `const lib = await import(${JSON.stringify(dist('operator', 'index.js'))});`,
    );
    expect(alone.some((s) => s.includes('/@kubernetes/client-node/'))).toBe(false);
    const seen = await loadedBy(
      `const lib = await import(${JSON.stringify(dist('operator', 'index.js'))});\n${clientNodeConfig}`,
    );
    expect(seen.some((s) => s.includes('/@kubernetes/client-node/dist/config.js'))).toBe(true);
    expect(generatedIndexFromConfig(seen)).toBe(true);
  });

  it('the launcher’s slim import narrows it (the check above can see a hook)', async () => {
    const seen = await loadedBy(
      `(await import(${JSON.stringify(dist('operator', 'kube', 'slim-client-node.js'))})).installSlimClientNodeImport();\n` +
        `await import(${JSON.stringify(dist('operator', 'index.js'))});\n${clientNodeConfig}`,
    );
    expect(generatedIndexFromConfig(seen)).toBe(false);
    // bin/ctopo.js installs it before it loads the CLI.
    const launcher = readFileSync(join(repoRoot, 'bin', 'ctopo.js'), 'utf8');
    expect(launcher.indexOf('installSlimClientNodeImport()')).toBeGreaterThan(-1);
    expect(launcher.indexOf('installSlimClientNodeImport()')).toBeLessThan(launcher.indexOf('cli/main.js'));
  });

  it('npm pack: bin/, dist/operator/ and the CRDs — no dev tools, generators, benchmarks or tests', async () => {
    const out = await new Promise<string>((ok, fail) =>
      execFile(
        'npm',
        ['pack', '--dry-run', '--json', '--ignore-scripts'],
        { cwd: repoRoot, timeout: 60_000, maxBuffer: 64 * 1024 * 1024 },
        (err, stdout, stderr) => (err ? fail(new Error(`${err.message}\n${stderr}`)) : ok(stdout)),
      ),
    );
    const paths = (JSON.parse(out) as { files: { path: string }[] }[])[0]!.files.map((f) => f.path);
    expect(paths).toEqual(
      expect.arrayContaining(['bin/ctopo.js', 'dist/operator/cli/main.js', 'package.json']),
    );
    // Top-level files (package.json, README, the licence) and these folders only.
    expect(paths.filter((p) => p.includes('/') && !/^(bin|dist\/operator|crds)\//.test(p))).toEqual([]);
    expect(paths.filter((p) => /(^|\/)(dev|bench|test|generate)(\/|\.)|reference\.js/.test(p))).toEqual([]);
  });
});
