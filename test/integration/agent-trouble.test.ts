import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { ControlPlaneState } from '../../dev/cluster/control-plane.js';
import {
  freshNamespace,
  installCrd,
  kubectlOk,
  kubeconfigForToken,
  sharedCluster,
} from '../support/cluster.js';
import { applyObjects, applyTopology, readerRbac, serviceAccountToken } from '../support/objects.js';
import { CtopoProcess, localAgentArgs } from '../support/operator-process.js';
import { waitFor } from '../support/wait.js';

/**
 * Two of the agent's trouble causes (docs/agent.md, "Trouble keeps connections") on the real API
 * server, with the file connector (a round would write the file): a topology with no status yet
 * (NoStatusYet), and a token the API server stops accepting — 401, reported as Forbidden.
 */
describe('the agent in trouble does nothing to its peers', () => {
  let s: ControlPlaneState;
  let ns: string;
  const agent = (kubeconfig: string, file: string) =>
    new CtopoProcess([
      ...localAgentArgs({ kubeconfig, namespace: ns, topology: 'web', pod: 'web-0', logLevel: 'warn' }),
      '--connector',
      'file',
      '--file-path',
      file,
    ]);
  const trouble = (a: CtopoProcess, cause: string) => a.metric('ctopo_agent_trouble', { cause });
  /** What the examples grant an agent, for ServiceAccount `sa`: its topology and Lease, read only. */
  const readerOf = (sa: string) =>
    readerRbac({
      namespace: ns,
      name: sa,
      topologies: ['web'],
      verbs: ['get', 'list', 'watch'],
      leases: true,
      subject: { kind: 'ServiceAccount', name: sa, namespace: ns },
    });

  beforeAll(async () => {
    s = await sharedCluster();
    await installCrd(s);
    ns = await freshNamespace(s, 'agent-trouble');
    // No operator serves this namespace: the topology never gets a status.
    await applyTopology(s, ns, 'web', {
      selector: 'netzlive/pod-type=cluster-service',
      pollingInterval: '1s',
    });
    await applyObjects(s, readerOf('agent'));
  });
  afterAll(async () => {
    await CtopoProcess.stopAll();
  });

  it('a topology without a status: NoStatusYet, no round, /readyz 503 saying why', async () => {
    const file = join(s.dir, `${ns}-nostatus.peers`);
    const a = agent(
      await kubeconfigForToken(s, `${ns}-a.kubeconfig`, await serviceAccountToken(s, ns, 'agent')),
      file,
    );
    await waitFor('NoStatusYet', async () => (await trouble(a, 'NoStatusYet')) === 1, 30_000);
    expect(await a.metricSum('ctopo_agent_rounds_total')).toBe(0);
    const ready = await a.get('/readyz');
    expect(ready.status).toBe(503);
    expect(ready.body).toContain('the ClusterTopology has no status yet');
    expect(existsSync(file)).toBe(false);
    await a.stop();
  });

  it('its token refused (401): reported as Forbidden, no round, and /healthz still 200', async () => {
    const file = join(s.dir, `${ns}-401.peers`);
    await kubectlOk(s, ['-n', ns, 'create', 'serviceaccount', 'gone']);
    await applyObjects(s, readerOf('gone'));
    const token = (await kubectlOk(s, ['-n', ns, 'create', 'token', 'gone', '--duration=1h'])).trim();
    // The token is bound to the account: deleting it makes the API server answer 401 from now on.
    await kubectlOk(s, ['-n', ns, 'delete', 'serviceaccount', 'gone', '--wait=true']);
    const a = agent(await kubeconfigForToken(s, `${ns}-gone.kubeconfig`, token), file);
    await waitFor('Forbidden (401)', async () => (await trouble(a, 'Forbidden')) === 1, 30_000);
    expect(a.output).toMatch(/401/);
    expect(await a.metricSum('ctopo_agent_rounds_total')).toBe(0);
    expect((await a.get('/healthz')).status).toBe(200);
    expect(existsSync(file)).toBe(false);
    await a.stop();
  });
});
