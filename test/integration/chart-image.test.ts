import { describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from '../support/helm.js';

/**
 * The container image without a Docker engine: tools/image-build-check.sh runs the Dockerfile's
 * stages in a clean copy of the build context (npm ci, tsc, npm ci --omit=dev) and starts ctopo
 * from the final stage as the image's non-root user. Slow (two npm installs): in the integration
 * project, never skipped.
 */

function check(args: string[] = []): Promise<{ code: number; out: string }> {
  return new Promise((ok) =>
    execFile(
      'bash',
      [join(repoRoot, 'tools', 'image-build-check.sh'), ...args],
      { timeout: 240_000, maxBuffer: 64 * 1024 * 1024, cwd: tmpdir() },
      (err, stdout, stderr) =>
        ok({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, out: stdout + stderr }),
    ),
  );
}

describe('the container image (Dockerfile build steps, emulated)', () => {
  it('builds; production dependencies only; ctopo --help and ctopo operator --help run as 65532 from a read-only result', async () => {
    const r = await check();
    expect({ code: r.code, tail: r.out.slice(-3000) }).toEqual({ code: 0, tail: expect.any(String) });
    expect(r.out).toMatch(/RUN npm ci --no-audit/);
    expect(r.out).toMatch(/RUN npm run build/);
    expect(r.out).toMatch(/RUN npm ci --omit=dev/);
    expect(r.out).toMatch(/none of \d+ dev-only packages/);
    expect(r.out).toMatch(
      /the final stage holds bin\/, dist\/operator\/, crds\/ and production node_modules/,
    );
    expect(r.out).toMatch(/running the entrypoint as 65532:65532 with the stage read-only/);
    expect(r.out).toMatch(/ctopo --help and ctopo operator --help work/);
    expect(r.out).toMatch(/ctopo agent --help works/);
    expect(r.out).not.toMatch(/lists no agent command yet/);
    expect(r.out).toMatch(/image-build-check: OK/);
  }, 300_000);

  it('catches a final stage that installs dev dependencies', async () => {
    const dockerfile = await readFile(join(repoRoot, 'Dockerfile'), 'utf8');
    // (NODE_ENV=production alone already omits dev dependencies, so the broken one asks for them.)
    const broken = dockerfile.replace(
      /npm ci --omit=dev --ignore-scripts/,
      'npm ci --include=dev --ignore-scripts',
    );
    expect(broken).not.toBe(dockerfile);
    const file = join(await mkdtemp(join(tmpdir(), 'ctopo-dockerfile-')), 'Dockerfile');
    await writeFile(file, broken);
    const r = await check(['--dockerfile', file]);
    expect(r.code).not.toBe(0);
    expect(r.out).toMatch(/FAILED: dev-only packages in the final image: .*node_modules\//);
  }, 300_000);

  it('catches a final stage that carries more than what runs (a dev tool in dist/)', async () => {
    const dockerfile = await readFile(join(repoRoot, 'Dockerfile'), 'utf8');
    const broken = dockerfile
      .replace(
        /RUN npm run build\n/,
        'RUN npm run build && mkdir -p dist/dev && echo "" > dist/dev/main.js\n',
      )
      .replace('COPY --from=build /src/dist/operator ./dist/operator', 'COPY --from=build /src/dist ./dist');
    expect(broken).not.toBe(dockerfile);
    const file = join(await mkdtemp(join(tmpdir(), 'ctopo-dockerfile-')), 'Dockerfile');
    await writeFile(file, broken);
    const r = await check(['--dockerfile', file]);
    expect(r.code).not.toBe(0);
    expect(r.out).toMatch(/FAILED: the final image holds more than what runs: dist\/dev\//);
  }, 300_000);
});
