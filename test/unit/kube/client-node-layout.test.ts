import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

// operator/kube/client.ts hands client-node's config.js a module with two names in place of the
// generated API's index. These are the facts about client-node that this rests on; a version
// that changes them fails here, by name, rather than at an operator's start.
const dist = join(
  dirname(createRequire(import.meta.url).resolve('@kubernetes/client-node/package.json')),
  'dist',
);

describe("client-node's layout, as the slim import of its KubeConfig assumes", () => {
  it('config.js takes exactly createConfiguration and ServerConfiguration from ./gen/index.js', () => {
    const source = readFileSync(join(dist, 'config.js'), 'utf8');
    const imports = [...source.matchAll(/import\s*\{([^}]*)\}\s*from\s*'\.\/gen\/index\.js'/g)];
    expect(imports).toHaveLength(1);
    const names = imports[0]![1]!
      .split(',')
      .map((n) => n.trim())
      .filter(Boolean)
      .sort();
    expect(names).toEqual(['ServerConfiguration', 'createConfiguration']);
    // …and nothing else there mentions the index (no `export *`, no namespace import).
    expect(source.split('./gen/index.js')).toHaveLength(2);
  });

  it('the two names live in gen/configuration.js and gen/servers.js', async () => {
    const configuration = (await import(join(dist, 'gen', 'configuration.js'))) as Record<string, unknown>;
    const servers = (await import(join(dist, 'gen', 'servers.js'))) as Record<string, unknown>;
    expect(typeof configuration.createConfiguration).toBe('function');
    expect(typeof servers.ServerConfiguration).toBe('function');
  });

  it('watch.js does not import the index (only gen/http/http.js)', () => {
    const source = readFileSync(join(dist, 'watch.js'), 'utf8');
    expect(source).not.toMatch(/gen\/index\.js/);
  });
});
