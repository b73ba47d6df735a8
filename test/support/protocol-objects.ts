import type { KubeObject } from '../../operator/kube/client.js';
import { leaseNameFor } from '../../operator/protocol/read.js';

/** The status protocol's objects as a reader gets them, for tests on the fake API server. */

/** The liveness Lease of topology `name` in `namespace`, renewed `agoMs` ago with a limit of `limitS`. */
export const livenessLease = (namespace: string, name: string, agoMs: number, limitS = 120): KubeObject => ({
  apiVersion: 'coordination.k8s.io/v1',
  kind: 'Lease',
  metadata: { name: leaseNameFor(name), namespace },
  spec: {
    holderIdentity: 'op-1',
    renewTime: new Date(Date.now() - agoMs).toISOString(),
    leaseDurationSeconds: limitS,
  },
});
