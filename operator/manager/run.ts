import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseDuration } from '../api/validate.js';
import { connect } from '../kube/client.js';
import { TopologyController, type ControllerParts } from '../controller/controller.js';

export type { ControllerParts };
import { LeaderElector } from '../kube/leader-election.js';
import { OPERATOR_LEASE_LABELS, OPERATOR_VERSION_ANNOTATION } from '../api/operator-lease.js';
import { PACKAGE_VERSION } from '../config/version.js';
import { startHttpServer } from '../observability/http.js';
import { createLogger, type Log } from '../observability/logger.js';
import { operatorMetrics, type OperatorMetrics } from '../observability/operator-metrics.js';
import { defaultIdentity, type OperatorConfig } from './config.js';
import { preflight } from './preflight.js';

export interface RunningOperator {
  metrics: OperatorMetrics;
  /** The port of the health/metrics server. */
  port: number;
  /** Resolves with the reason when this replica loses leadership (it has then stopped reconciling). */
  lost: Promise<string>;
  /** Graceful stop: reconciling stops, watches close, the lease is released. */
  stop(): Promise<void>;
}

/**
 * Starts the operator: refuses at once when its identity may not read its topologies or its
 * Lease (preflight.ts), then the health/metrics server, and the controller when this replica
 * leads (or at once without leader election). Losing the lease stops the controller at once.
 */
export async function runOperator(
  config: OperatorConfig,
  log: Log = createLogger(config.logLevel, 'operator'),
  /** How the controller works; the defaults are the operator's design (bench/ injects former ones). */
  parts?: ControllerParts,
): Promise<RunningOperator> {
  const metrics = operatorMetrics();
  const kube = connect({
    kubeconfig: config.kubeconfig,
    observe: ({ method, code }) => metrics.apiResponses.inc({ verb: method, code: String(code) }),
    requestTimeoutMs: parseDuration(config.requestTimeout),
  });
  await preflight(
    kube,
    {
      namespaces: config.namespaces,
      leaderElect: config.leaderElect,
      leaseNamespace: config.leaseNamespace ?? kube.namespace,
      leaseName: config.leaseName,
    },
    log,
  );
  const controller = new TopologyController(
    kube,
    {
      namespaces: config.namespaces,
      allowTargetNamespaces: config.allowTargetNamespaces,
      concurrency: config.concurrency,
      watchNodes: config.watchNodes,
      watchTimeoutSeconds: Math.max(1, Math.round((parseDuration(config.watchTimeout) ?? 290_000) / 1000)),
      holder: config.identity ?? defaultIdentity(),
      ...(parts ? { parts } : {}),
    },
    metrics,
    log,
  );
  let leading = !config.leaderElect;
  let stopped = false;
  let resolveLost: (why: string) => void = () => {};
  const lost = new Promise<string>((r) => (resolveLost = r));

  const elector = config.leaderElect
    ? new LeaderElector(kube, {
        namespace: config.leaseNamespace ?? kube.namespace,
        name: config.leaseName,
        identity: config.identity ?? defaultIdentity(),
        labels: { ...OPERATOR_LEASE_LABELS },
        annotations: { [OPERATOR_VERSION_ANNOTATION]: PACKAGE_VERSION },
        leaseDurationMs: parseDuration(config.leaseDuration),
        renewDeadlineMs: parseDuration(config.renewDeadline),
        retryPeriodMs: parseDuration(config.retryPeriod),
        log,
        onLeaseProblem: (problem) => metrics.leaseProblem.set(problem ? 1 : 0),
        onStartedLeading: () => {
          leading = true;
          metrics.leader.set(1);
          controller.start();
        },
        onStoppedLeading: (why) => {
          leading = false;
          metrics.leader.set(0);
          controller.stop();
          resolveLost(why);
        },
      })
    : undefined;

  const server: Server = await startHttpServer(config.httpHost, config.httpPort, metrics.registry, {
    notReady: () => {
      if (stopped) return ['stopping'];
      const lease = elector?.leaseProblem;
      const leaseLine = lease
        ? [`lease ${config.leaseNamespace ?? kube.namespace}/${config.leaseName}: ${lease}`]
        : [];
      return leading ? [...leaseLine, ...controller.notReady()] : leaseLine;
    },
  });
  const port = (server.address() as AddressInfo).port;
  log('info', 'operator started', {
    version: PACKAGE_VERSION,
    port,
    leaderElection: config.leaderElect,
    namespaces: config.namespaces,
  });

  if (elector) void elector.run();
  else {
    metrics.leader.set(1);
    controller.start();
  }

  return {
    metrics,
    port,
    lost,
    async stop() {
      if (stopped) return;
      stopped = true;
      controller.stop();
      await elector?.release();
      leading = false;
      metrics.leader.set(0);
      // A list the API server never answered would keep the process alive after SIGTERM (seen in
      // the chaos run: more than a minute after a hung pod list); nothing needs it now.
      kube.close();
      await new Promise<void>((r) => server.close(() => r()));
      server.closeAllConnections?.();
      log('info', 'operator stopped');
    },
  };
}
