import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { preflight, PreflightRefusal } from '../../../operator/manager/preflight.js';
import { SELF_SUBJECT_ACCESS_REVIEWS_PATH } from '../../../operator/kube/paths.js';
import { FakeApiServer } from '../../support/fake-api-server.js';

/**
 * The operator's preflight (manager/preflight.ts) against the fake API server, which answers the
 * SelfSubjectAccessReviews as a test says: refused to start when a permission it needs is denied,
 * naming the setting to change; started (with a warning) when the reviews cannot be made.
 */

interface Review {
  spec: { resourceAttributes: { verb: string; resource: string; namespace?: string; name?: string } };
}

const input = {
  namespaces: ['shop'],
  leaderElect: true,
  leaseNamespace: 'ops',
  leaseName: 'cluster-topology',
};
const REVIEWS = new RegExp(`^${SELF_SUBJECT_ACCESS_REVIEWS_PATH}$`);

describe('the preflight, against the fake API server', () => {
  let api: FakeApiServer;
  const warnings: string[] = [];
  const log = (level: string, message: string) => level === 'warn' && warnings.push(message);
  const allow = (allowed: (a: Review['spec']['resourceAttributes']) => boolean) =>
    api.route('POST', REVIEWS, (body) => ({
      code: 201,
      body: { ...(body as object), status: { allowed: allowed((body as Review).spec.resourceAttributes) } },
    }));

  beforeEach(async () => {
    api = await FakeApiServer.start();
    warnings.length = 0;
  });
  afterEach(async () => {
    await api.close();
  });

  it('asks about each permission it needs, and starts when all are allowed', async () => {
    const asked: string[] = [];
    allow((a) => (asked.push(`${a.verb} ${a.resource} ${a.namespace ?? ''} ${a.name ?? ''}`.trim()), true));
    await preflight(api.kube(), input, log);
    expect(asked).toEqual([
      'list clustertopologies shop',
      'watch clustertopologies shop',
      'get leases ops cluster-topology',
      'update leases ops cluster-topology',
    ]);
    expect(warnings).toEqual([]);
  });

  it('refuses to start when one is denied, naming the setting that decides it', async () => {
    allow((a) => a.resource !== 'leases' || a.verb !== 'update');
    const refusal = await preflight(api.kube(), input, log).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(refusal).toBeInstanceOf(PreflightRefusal);
    expect((refusal as Error).message).toContain(
      'may not update leases.coordination.k8s.io "cluster-topology" in namespace "ops"',
    );
    expect((refusal as Error).message).toContain('--lease-name');
  });

  it('starts, with a warning, when the reviews cannot be made', async () => {
    api.fault({ method: 'POST', fault: { kind: 'status', code: 503, reason: 'ServiceUnavailable' } });
    await preflight(api.kube(), input, log);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('could not check whether this identity may list clustertopologies');
  });
});
