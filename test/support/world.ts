import type { ControlPlaneState } from '../../dev/cluster/control-plane.js';
import {
  freshNamespace,
  installCrd,
  kubeconfigForToken,
  kubeconfigForUser,
  sharedCluster,
} from './cluster.js';
import { FaultProxy } from './fault-proxy.js';
import { grantOperatorRbac, serviceAccountToken } from './objects.js';

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

export interface ProxiedOperatorNamespace extends OperatorNamespace {
  /** The fault proxy in front of the API server (stop it in afterAll). */
  proxy: FaultProxy;
}

/**
 * The same, for tests that put faults between the operator and the API server: the identity is
 * the namespace's ServiceAccount `operator` (a bearer token passes the proxy; a client certificate
 * cannot), and `kubeconfig` reaches the API server through a fault proxy of its own.
 */
export async function proxiedOperatorNamespace(prefix: string): Promise<ProxiedOperatorNamespace> {
  const s = await sharedCluster();
  await installCrd(s);
  const ns = await freshNamespace(s, prefix);
  const token = await serviceAccountToken(s, ns, 'operator');
  await grantOperatorRbac(s, { kind: 'ServiceAccount', name: 'operator', namespace: ns }, [ns], ns);
  const proxy = await new FaultProxy(s).start();
  return {
    s,
    ns,
    proxy,
    kubeconfig: await kubeconfigForToken(s, `proxy-${ns}.kubeconfig`, token, proxy.url),
  };
}
