import { GROUP } from './schema.js';

/**
 * How the operator marks its leader-election Lease, so tools find it without being told the
 * release's name (`ctopo check` lists Leases by these labels) and see which version leads.
 */
export const OPERATOR_LEASE_LABELS: Readonly<Record<string, string>> = {
  'app.kubernetes.io/name': 'cluster-topology',
  'app.kubernetes.io/component': 'leader-election',
};
/** The label selector for OPERATOR_LEASE_LABELS. */
export const OPERATOR_LEASE_SELECTOR = Object.entries(OPERATOR_LEASE_LABELS)
  .map(([k, v]) => `${k}=${v}`)
  .join(',');
/** The version of the operator that holds the Lease, written by the holder with every renewal. */
export const OPERATOR_VERSION_ANNOTATION = `${GROUP}/operator-version`;
