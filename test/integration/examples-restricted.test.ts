import { beforeAll, describe, expect, it } from '@jest/globals';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ControlPlaneState } from '../../dev/cluster/control-plane.js';
import { freshNamespace, installCrd, kubectl, kubectlOk, sharedCluster } from '../support/cluster.js';
import { EXAMPLES_DIR } from '../unit/packaging/paths.js';

/**
 * The examples pass Pod Security "restricted" without a warning, on the real API server: each is
 * applied to a namespace that enforces and warns at that level (the examples' own namespace
 * name is replaced by that namespace).
 */
describe('the examples under Pod Security "restricted" (real API server)', () => {
  let s: ControlPlaneState;

  beforeAll(async () => {
    s = await sharedCluster();
    await installCrd(s);
  });

  async function restrictedNamespace(prefix: string): Promise<string> {
    const ns = await freshNamespace(s, prefix);
    await kubectlOk(s, [
      'label',
      'namespace',
      ns,
      'pod-security.kubernetes.io/enforce=restricted',
      'pod-security.kubernetes.io/warn=restricted',
      'pod-security.kubernetes.io/audit=restricted',
    ]);
    return ns;
  }

  async function apply(file: string, ns: string, edit: (yaml: string) => string = (y) => y) {
    const text = edit(await readFile(join(EXAMPLES_DIR, file), 'utf8')).replaceAll(
      /namespace: netzlive$/gm,
      `namespace: ${ns}`,
    );
    return kubectl(s, ['apply', '-f', '-'], { input: text });
  }

  it.each(['single-replica.yaml', 'multi-replica.yaml', 'agent-rbac.yaml'])(
    '%s applies without a warning',
    async (file) => {
      const ns = await restrictedNamespace('psa');
      const r = await apply(file, ns);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
    },
  );

  // The check above can fail: the same example without the application container's security
  // context draws the warnings Pod Security gives for it.
  it('warns for an example whose application container drops its security context', async () => {
    const ns = await restrictedNamespace('psa-neg');
    const r = await apply('single-replica.yaml', ns, (y) =>
      y.replace(
        /\n {10}securityContext:\n {12}allowPrivilegeEscalation: false\n {12}capabilities:\n {14}drop: \[ALL\]\n/,
        '\n',
      ),
    );
    expect(r.stderr).toMatch(/Warning: would violate PodSecurity "restricted:[^"]*"/);
    expect(r.stderr).toMatch(/allowPrivilegeEscalation != false \(container "web"/);
  });
});
