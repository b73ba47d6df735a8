import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** The operator's metrics, on their own registry (several operators can run in one test process). */
export function operatorMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'ctopo_operator_' });
  const m = {
    registry,
    reconciles: new Counter({
      name: 'ctopo_reconcile_total',
      help: 'Reconciles by result.',
      labelNames: ['result'],
      registers: [registry],
    }),
    reconcileSeconds: new Histogram({
      name: 'ctopo_reconcile_duration_seconds',
      help: 'Time to reconcile one topology.',
      buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5],
      registers: [registry],
    }),
    apiResponses: new Counter({
      name: 'ctopo_api_responses_total',
      help: 'Kubernetes API responses by verb and code (TransportError when none).',
      labelNames: ['verb', 'code'],
      registers: [registry],
    }),
    watchRestarts: new Counter({
      name: 'ctopo_watch_restarts_total',
      help: 'Watch restarts by resource and why.',
      labelNames: ['resource', 'why'],
      registers: [registry],
    }),
    peers: new Gauge({
      name: 'ctopo_peers',
      help: 'Peers per topology.',
      labelNames: ['namespace', 'name'],
      registers: [registry],
    }),
    excluded: new Gauge({
      name: 'ctopo_excluded_pods',
      help: 'Excluded pods per topology.',
      labelNames: ['namespace', 'name'],
      registers: [registry],
    }),
    lastSuccessfulPoll: new Gauge({
      name: 'ctopo_last_successful_poll_timestamp_seconds',
      help: 'When the pods of a topology were last listed successfully.',
      labelNames: ['namespace', 'name'],
      registers: [registry],
    }),
    statusWrites: new Counter({
      name: 'ctopo_status_writes_total',
      help: 'Status patches by result.',
      labelNames: ['result'],
      registers: [registry],
    }),
    leader: new Gauge({
      name: 'ctopo_leader',
      help: '1 while this replica is the leader.',
      registers: [registry],
    }),
    leaseProblem: new Gauge({
      name: 'ctopo_lease_problem',
      help: '1 while this replica cannot read or take its leader-election Lease (see the log and /readyz).',
      registers: [registry],
    }),
    watchesUp: new Gauge({
      name: 'ctopo_watches_up',
      help: 'Watches currently streaming, by resource (pods: one per namespace served).',
      labelNames: ['resource'],
      registers: [registry],
    }),
  };
  return m;
}

export type OperatorMetrics = ReturnType<typeof operatorMetrics>;
