import { beforeAll, describe, expect, it } from '@jest/globals';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { repoRoot } from './paths.js';

/**
 * The Dockerfile's promises, read from the file: multi-stage, pinned bases, production
 * dependencies only and no build tooling in the final stage, a numeric non-root user, one
 * entrypoint for operator and agent. (tools/image-build-check.sh runs its steps; the
 * integration test chart-image runs that.)
 */

interface Instruction {
  op: string;
  rest: string;
}
interface Stage {
  base: string;
  name: string;
  steps: Instruction[];
}

function parseDockerfile(text: string): Stage[] {
  const joined: string[] = [];
  let cur = '';
  for (const raw of text.split('\n')) {
    const line = raw.trimEnd();
    if (/^\s*#/.test(line) || (!cur && !line.trim())) continue;
    if (line.endsWith('\\')) cur += line.slice(0, -1) + ' ';
    else {
      joined.push((cur + line).trim());
      cur = '';
    }
  }
  const stages: Stage[] = [];
  for (const l of joined) {
    const [, op, rest] = /^(\S+)\s*(.*)$/.exec(l)!;
    if (op!.toUpperCase() === 'FROM') {
      const m = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(rest!)!;
      stages.push({ base: m[1]!, name: m[2] ?? String(stages.length), steps: [] });
    } else stages.at(-1)?.steps.push({ op: op!.toUpperCase(), rest: rest!.replace(/\s+/g, ' ') });
  }
  return stages;
}

const copies = (s: Stage) =>
  s.steps
    .filter((i) => i.op === 'COPY')
    .map((i) => {
      const words = i.rest.split(' ');
      const from = words.find((w) => w.startsWith('--from='))?.slice(7);
      const paths = words.filter((w) => !w.startsWith('--'));
      return { from, srcs: paths.slice(0, -1), dest: paths.at(-1)! };
    });

describe('Dockerfile', () => {
  let stages: Stage[];
  let final: Stage;
  beforeAll(async () => {
    stages = parseDockerfile(await readFile(join(repoRoot, 'Dockerfile'), 'utf8'));
    final = stages.at(-1)!;
  });

  it('is multi-stage: a build stage and a final stage', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    expect(copies(final).some((c) => c.from === stages[0]!.name)).toBe(true);
  });

  it('pins every base image to an exact version (no latest, no floating tag), the Node.js the tests run on', async () => {
    const lock = JSON.parse(await readFile(join(repoRoot, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { version?: string }>;
    };
    const testNode = lock.packages['node_modules/node']!.version!;
    for (const s of stages) {
      expect(s.base).toMatch(/^[a-z0-9./-]+:\d+\.\d+\.\d+(-[a-z0-9.]+)*(@sha256:[a-f0-9]{64})?$/);
      expect(s.base).not.toMatch(/latest/);
      expect(s.base.startsWith(`node:${testNode}-`)).toBe(true);
    }
  });

  it('final stage: production dependencies only, no build tooling copied in', () => {
    const runs = final.steps.filter((i) => i.op === 'RUN').map((i) => i.rest);
    const installs = runs.filter((r) => /\bnpm (ci|install|i)\b/.test(r));
    expect(installs.length).toBe(1);
    expect(installs[0]).toMatch(/npm ci\b.*--omit=dev/);
    expect(runs.join('\n')).not.toMatch(/npm run build|tsc\b/);
    for (const c of copies(final)) {
      if (c.from) {
        // From the build stage: compiled code, the CLI entry and the CRDs — never node_modules, sources or configs.
        for (const src of c.srcs) {
          expect(src).toMatch(/^\/src\/(bin|dist\/operator|crds)$/);
        }
      } else expect(c.srcs.sort()).toEqual(['package-lock.json', 'package.json']);
    }
  });

  it('final stage: a numeric, non-root USER; HOME in /tmp; one entrypoint, node /app/bin/ctopo.js, for operator and agent', () => {
    const user = final.steps.filter((i) => i.op === 'USER').at(-1)?.rest;
    expect(user).toMatch(/^\d+(:\d+)?$/);
    expect(Number(user!.split(':')[0])).toBeGreaterThan(0);
    const env = final.steps.filter((i) => i.op === 'ENV').map((i) => i.rest);
    expect(env).toContain('HOME=/tmp');
    expect(final.steps.find((i) => i.op === 'WORKDIR')?.rest).toBe('/app');
    const entry = final.steps.filter((i) => i.op === 'ENTRYPOINT').at(-1)!.rest;
    expect(JSON.parse(entry)).toEqual(['node', '/app/bin/ctopo.js']);
  });

  it('final stage: erlang-base for the agent’s erlang connector (erl_call), without recommends, apt lists removed', () => {
    const apt = final.steps.find((i) => i.op === 'RUN' && /apt-get install/.test(i.rest))?.rest ?? '';
    expect(apt).toMatch(/apt-get install -y --no-install-recommends erlang-base/);
    expect(apt).toMatch(/rm -rf \/var\/lib\/apt\/lists/);
  });

  it('no remote downloads outside the package managers (no ADD of URLs, no curl | sh)', () => {
    for (const s of stages)
      for (const i of s.steps) {
        expect(i.op).not.toBe('ADD');
        expect(i.rest).not.toMatch(/\b(curl|wget)\b/);
      }
  });

  it('.dockerignore is an allowlist that lets in exactly what the build stage copies', async () => {
    const lines = (await readFile(join(repoRoot, '.dockerignore'), 'utf8'))
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith('#'));
    expect(lines[0]).toBe('*');
    const allowed = lines.filter((l) => l.startsWith('!')).map((l) => l.slice(1).replace(/\/$/, ''));
    const needed = stages.flatMap((s) =>
      copies(s)
        .filter((c) => !c.from)
        .flatMap((c) => c.srcs),
    );
    expect([...new Set(needed)].sort()).toEqual([...allowed].sort());
    for (const never of ['node_modules', 'dist', '.git', 'test', 'charts'])
      expect(allowed).not.toContain(never);
  });
});
