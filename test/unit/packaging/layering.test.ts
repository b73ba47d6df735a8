import { beforeAll, describe, expect, it } from '@jest/globals';
import { ESLint } from 'eslint';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, posix, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { repoRoot } from './paths.js';

/**
 * The layering rules (eslint.config.js: LAYERS by folder, PURE for the pure core) on sample
 * imports, as if written in files of each folder: every import a folder's rule forbids is caught,
 * the allowed ones pass; the folders form no cycle, and neither do the source files.
 */

const eslint = new ESLint({ cwd: repoRoot });
const RULES = new Set(['no-restricted-imports', 'layers/imports']);

async function refused(file: string, source: string): Promise<string[]> {
  const [result] = await eslint.lintText(`${source}\nexport {};\n`, { filePath: join(repoRoot, file) });
  return result!.messages.filter((m) => RULES.has(m.ruleId ?? '')).map((m) => m.message);
}

/** An import of `target` (a repository path) written in `file`. */
const importOf = (file: string, target: string) => {
  const spec = posix.relative(posix.dirname(file), target).replace(/\.ts$/, '.js');
  return `import * as probe from '${spec.startsWith('.') ? spec : `./${spec}`}';`;
};

let LAYERS: Record<string, string[]>;
beforeAll(async () => {
  ({ LAYERS } = (await import(pathToFileURL(join(repoRoot, 'eslint.config.js')).href)) as {
    LAYERS: Record<string, string[]>;
  });
});

describe('the layers by folder', () => {
  it('every folder of operator/ has its rule (a new folder cannot slip past)', () => {
    const folders = readdirSync(join(repoRoot, 'operator'), { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => `operator/${e.name}`);
    expect(folders.filter((f) => !(f in LAYERS))).toEqual([]);
  });

  it('each folder’s rule refuses every folder it does not allow, dev/, bench/ and test/ included', async () => {
    const missed: string[] = [];
    let tried = 0;
    for (const [folder, allowed] of Object.entries(LAYERS)) {
      if (folder === 'dev') continue;
      // A shell file of the folder where there is one, so only the folder rule speaks.
      const file = `${folder}/probe-shell.ts`;
      const others = [...Object.keys(LAYERS), 'bench', 'test'].filter(
        (f) => f !== folder && !allowed.includes(f),
      );
      for (const other of others) {
        tried++;
        const messages = await refused(file, importOf(file, `${other}/x.ts`));
        if (!messages.some((m) => m.includes(`may not import ${other}/`)))
          missed.push(`${folder} → ${other}`);
      }
    }
    expect(tried).toBeGreaterThan(80);
    expect(missed).toEqual([]);
  });

  it.each([
    ['operator/api/validate.ts', '../failure-domains/index.js', 'api imports the analysis (the old cycle)'],
    ['operator/api/validate.ts', '../config/schema-check.js', 'api imports config'],
    ['operator/api/validate.ts', '../../dev/generate/api.js', 'api imports a generator'],
    ['operator/failure-domains/voters.ts', '../cli/main.js', 'the analysis imports the CLI'],
    ['operator/config/load.ts', '../cli/command.js', 'config imports the CLI'],
    ['operator/kube/reflector.ts', '../controller/controller.js', 'the runtime imports the controller'],
    ['operator/kube/event-recorder.ts', '../agent/run.js', 'the runtime imports the agent'],
    ['operator/protocol/read.ts', '../controller/status.js', 'the protocol imports the controller'],
    ['operator/agent/run.ts', '../controller/events.js', 'the agent imports the controller'],
    ['operator/agent/connectors/exec.ts', '../../manager/run.js', 'a connector imports the operator process'],
    ['operator/cli/commands/analyze.ts', '../../../dev/demo/run.js', 'the shipped CLI imports a dev tool'],
    ['operator/index.ts', './controller/controller.js', 'the library entry exposes the controller'],
  ])('%s: refuses %s (%s)', async (file, spec) => {
    expect(await refused(file, `import * as probe from '${spec}';`)).toHaveLength(1);
  });

  it('the folders form no cycle', () => {
    const state = new Map<string, 'open' | 'done'>();
    const cycles: string[] = [];
    const visit = (f: string, path: string[]) => {
      if (state.get(f) === 'done') return;
      if (state.get(f) === 'open') return void cycles.push([...path, f].join(' → '));
      state.set(f, 'open');
      for (const to of LAYERS[f] ?? []) visit(to, [...path, f]);
      state.set(f, 'done');
    };
    for (const f of Object.keys(LAYERS)) visit(f, []);
    expect(cycles).toEqual([]);
  });

  it('no source file of operator/ or dev/ takes part in an import cycle', () => {
    expect(importCycles(['operator', 'dev'])).toEqual([]);
  });

  it('the cycle check sees a cycle (two files of a sample tree that import each other)', () => {
    expect(importCycles(['test/fixtures/import-cycle'])).toEqual([
      ['test/fixtures/import-cycle/a.ts', 'test/fixtures/import-cycle/b.ts'],
    ]);
  });
});

describe('the pure core', () => {
  it.each([
    ['operator/controller/plan.ts', "import { StatusApplier } from './apply.js';", 'imports the shell'],
    ['operator/naming/resolve.ts', "import { connect } from '../kube/client.js';", 'imports the client'],
    ['operator/failure-domains/analysis.ts', "import { log } from '../observability/logger.js';", 'logs'],
    [
      'operator/kube/reflector-machine.ts',
      "import { Reflector } from './reflector.js';",
      'imports its shell',
    ],
    [
      'operator/protocol/publish.ts',
      "import { LivenessWriter } from './liveness-writer.js';",
      'protocol shell',
    ],
    ['operator/agent/round.ts', "import { runAgent } from './run.js';", 'a pure file of a shell folder'],
    ['operator/controller/status.ts', "import { readFileSync } from 'node:fs';", 'does I/O'],
    ['operator/api/validate.ts', "import { readFile } from 'node:fs/promises';", 'does I/O'],
    // Not named anywhere: a new file of a pure folder is pure, so what it imports is checked too —
    // which is what makes the rule transitive.
    ['operator/naming/new-module.ts', "import { execFile } from 'node:child_process';", 'a new file'],
    ['operator/kube/new-module.ts', "import { request } from 'node:https';", 'a new file'],
    [
      'operator/controller/controller.ts',
      "import { KubeConfig } from '@kubernetes/client-node';",
      'client-node outside kube/client.ts',
    ],
    [
      'operator/kube/reflector.ts',
      "import { Watch } from '@kubernetes/client-node/dist/watch.js';",
      'client-node in another kube/ module',
    ],
  ])('%s: refuses %s (%s)', async (file, source) => {
    expect(await refused(file, source)).toHaveLength(1);
  });
});

describe('allowed imports pass', () => {
  it.each([
    ['operator/kube/client.ts', "import { KubeConfig } from '@kubernetes/client-node';"],
    ['operator/controller/plan.ts', "import { computeStatus } from './status.js';"],
    ['operator/controller/controller.ts', "import { planReconcile } from './plan.js';"],
    ['operator/controller/apply.ts', "import { leasesPath } from '../kube/paths.js';"],
    ['operator/agent/run.ts', "import { EventRecorder } from '../kube/event-recorder.js';"],
    ['operator/agent/observe.ts', "import { livenessOf } from '../protocol/read.js';"],
    ['operator/protocol/liveness-writer.ts', "import type { Kube } from '../kube/client.js';"],
    ['operator/failure-domains/voters.ts', "import { VOTES_ANNOTATION } from '../api/schema.js';"],
    ['operator/cli/commands/analyze.ts', "import { UsageError } from '../command.js';"],
    ['operator/naming/node-name.ts', "import { isIPv4 } from 'node:net';"],
    ['dev/demo/run.ts', "import { connect } from '../../operator/kube/client.js';"],
  ])('%s: allows %s', async (file, source) => {
    expect(await refused(file, source)).toEqual([]);
  });
});

/** The strongly connected sets of more than one file among the .ts files under `folders`. */
function importCycles(folders: string[]): string[][] {
  const graph = new Map<string, string[]>();
  for (const folder of folders)
    for (const f of readdirSync(join(repoRoot, folder), { recursive: true }) as string[]) {
      if (!f.endsWith('.ts')) continue;
      const file = join(repoRoot, folder, f);
      const deps = [
        ...readFileSync(file, 'utf8').matchAll(
          /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)['"](\.{1,2}\/[^'"]+)['"]/g,
        ),
      ].map((m) => resolve(dirname(file), m[1]!).replace(/\.js$/, '.ts'));
      graph.set(file, deps);
    }
  // Tarjan's algorithm.
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const sets: string[][] = [];
  const strong = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v)!) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        strong(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const set: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      set.push(relative(repoRoot, w));
    } while (w !== v);
    if (set.length > 1) sets.push(set.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) strong(v);
  return sets;
}
