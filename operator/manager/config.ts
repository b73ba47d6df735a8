import { hostname } from 'node:os';
import { processOptions, type OptionsSpec, type ProcessConfig } from '../config/load.js';

/** The operator's configuration keys: flags `--kebab-case`, env `CTOPO_UPPER_SNAKE`, or `--config FILE`. */
export const operatorOptions = {
  kubeconfig: {
    type: 'string',
    description: 'kubeconfig file (default: $KUBECONFIG, ~/.kube/config, or the in-cluster service account)',
  },
  namespaces: {
    type: 'list',
    description: 'namespaces whose ClusterTopology objects are served, comma-separated; empty: all',
    default: [],
  },
  allowTargetNamespaces: {
    type: 'list',
    description:
      'namespaces a topology may select pods in besides its own ("*": any); others are refused with CrossNamespaceDenied',
    default: [],
  },
  concurrency: { type: 'integer', description: 'topologies reconciled at once', default: 4, minimum: 1 },
  watchNodes: {
    type: 'boolean',
    description: 'watch Node labels for the failure-domain analysis',
    default: true,
  },
  leaderElect: {
    type: 'boolean',
    description: 'elect one leader among replicas through a Lease',
    default: true,
  },
  leaseNamespace: {
    type: 'string',
    description: 'namespace of the Lease (default: the namespace of the current context / the pod)',
  },
  leaseName: { type: 'string', description: 'name of the Lease', default: 'cluster-topology-operator' },
  leaseDuration: {
    type: 'duration',
    description: 'how long a leader holds the lease without renewing',
    default: '15s',
  },
  renewDeadline: {
    type: 'duration',
    description: 'how long a leader keeps trying to renew before giving up',
    default: '10s',
  },
  retryPeriod: { type: 'duration', description: 'interval between lease attempts', default: '2s' },
  identity: { type: 'string', description: 'this replica in the Lease (default: hostname_pid)' },
  requestTimeout: {
    type: 'duration',
    description: 'how long an API request may go unanswered before it counts as a transport error',
    default: '30s',
  },
  watchTimeout: {
    type: 'duration',
    description: 'how long the API server keeps one watch open before it is renewed',
    default: '290s',
  },
  ...processOptions(8080),
} satisfies OptionsSpec;

export interface OperatorConfig extends ProcessConfig {
  kubeconfig?: string;
  namespaces: string[];
  allowTargetNamespaces: string[];
  concurrency: number;
  watchNodes: boolean;
  leaderElect: boolean;
  leaseNamespace?: string;
  leaseName: string;
  leaseDuration: string;
  renewDeadline: string;
  retryPeriod: string;
  identity?: string;
  requestTimeout: string;
  watchTimeout: string;
}

export const defaultIdentity = () => `${hostname()}_${process.pid}`;
