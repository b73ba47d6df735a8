import type { ControlPlaneState } from '../../dev/cluster/control-plane.js';
import { freshNamespace, installCrd, kubeconfigForUser, sharedCluster } from './cluster.js';
import { grantOperatorRbac } from './objects.js';

export interface OperatorNamespace {
  s: ControlPlaneState;
  ns: string;
  /** For user `op-<ns>`, who holds what the chart grants the operator, pods in `ns` included. */
  kubeconfig: string;
}

/**
 * Where most integration tests start: a namespace of the test's own on the run's shared control
 * plane, the CRD served, and an operator identity allowed to serve that namespace (and
 * `alsoServed`, whose pods it may list too).
 */
export async function operatorNamespace(
  prefix: string,
  alsoServed: string[] = [],
): Promise<OperatorNamespace> {
  const s = await sharedCluster();
  await installCrd(s);
  const ns = await freshNamespace(s, prefix);
  await grantOperatorRbac(s, { kind: 'User', name: `op-${ns}` }, [ns, ...alsoServed], ns);
  return { s, ns, kubeconfig: await kubeconfigForUser(s, `op-${ns}`) };
}
