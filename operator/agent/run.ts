import { setTimeout as delay } from 'node:timers/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { API_VERSION } from '../api/schema.js';
import { parseDuration } from '../api/duration.js';
import { connect } from '../kube/client.js';
import { EventRecorder } from '../kube/event-recorder.js';
import { startHttpServer } from '../observability/http.js';
import { createLogger, type Log } from '../observability/logger.js';
import { createConnector, type Connector } from './connectors/index.js';
import { connectorConfigFrom, type AgentConfig } from './config.js';
import { fileMemory } from './memory.js';
import { agentMetrics, type AgentMetrics } from './metrics.js';
import { TopologySubscription } from '../protocol/subscription.js';
import { pollingMsOf, type SelfCheck } from './observe.js';
import { RoundLoop } from './round-loop.js';
import { TROUBLE_CAUSES } from './round.js';
import { agentStep, START, type AgentEffect, type AgentState } from './step.js';
import type { Peer, ReaderTroubleReport } from '../api/types.generated.js';
import { MemberReportWriter } from '../protocol/member-report-writer.js';
import type { AgentRoundReport } from './round-runner.js';
import { agentView, linksAfterRound, NO_LINKS, reportedTrouble, type Links } from './member-view.js';

/**
 * The agent beside one application: it follows one ClusterTopology and runs the round
 * (disconnect who left, connect everyone listed, retry failures next round) on every status
 * change and every polling interval, through a connector. Its own trouble never disconnects
 * anyone. Health: /healthz answers while the process runs — trouble shows in logs and metrics
 * (ctopo_agent_trouble), since restarting the sidecar would not fix the API server; /readyz
 * fails before the first status and while the self check fails, a configuration error to fix.
 */

export interface RunningAgent {
  metrics: AgentMetrics;
  port: number;
  connector: Connector;
  selfCheck(): SelfCheck | undefined;
  stop(): Promise<void>;
}

async function realNodeName(
  connector: Connector,
  configured: string | undefined,
  log: Log,
): Promise<string | undefined> {
  if (connector.selfName) {
    const r = await connector.selfName();
    if (r.ok) return r.name;
    log('warn', 'could not ask the local node its name', { error: r.error });
    const discover = (
      connector as Partial<{
        discoverLocalNodes(): Promise<{ ok: boolean; nodes?: { fullName?: string }[] }>;
      }>
    ).discoverLocalNodes;
    if (discover) {
      const d = await discover.call(connector);
      const names = (d.nodes ?? []).map((n) => n.fullName).filter((n): n is string => !!n);
      if (names.length === 1) return names[0];
    }
  }
  return configured;
}

/** How long stopping waits for a round in flight. */
const STOP_GRACE_MS = 2_000;

export async function runAgent(
  config: AgentConfig,
  log: Log = createLogger(config.logLevel, 'agent'),
): Promise<RunningAgent> {
  const timeoutMs = parseDuration(config.callTimeout) ?? 10_000;
  const connectorConfig = connectorConfigFrom(config, timeoutMs);
  const metrics = agentMetrics();
  const kube = connect({ kubeconfig: config.kubeconfig });
  const namespace = config.namespace ?? process.env.POD_NAMESPACE ?? kube.namespace;
  const name = config.topology!;
  const podName = config.podName ?? process.env.POD_NAME ?? process.env.HOSTNAME ?? '';
  const configuredName = config.nodeName ?? process.env.RELEASE_NODE;
  const connector = await createConnector(
    connectorConfig.kind === 'erlang' && configuredName
      ? { ...connectorConfig, nodeName: configuredName }
      : connectorConfig,
  );
  const events = new EventRecorder(kube, 'cluster-topology-agent', log, 60_000);
  // The member report (docs/status-protocol.md §8): out of a pod there is no report to write.
  const writer =
    config.report && podName
      ? new MemberReportWriter({
          kube,
          namespace,
          topology: name,
          fieldManager: 'ctopo-agent',
          say: (level, message, meta) => log(level, message, meta),
          onWrite: (outcome) => metrics.reportWrites.inc({ result: outcome }),
        })
      : undefined;
  let links: Links = NO_LINKS;
  let list: { peers: readonly Peer[]; resourceVersion?: string } | undefined;
  let reportTrouble: ReaderTroubleReport | undefined;

  let realName = await realNodeName(connector, configuredName, log);
  let state: AgentState = START;
  let stopped = false;

  // What this agent connected before a restart (--state-file); without it, nothing.
  const memory = config.stateFile ? fileMemory(config.stateFile, `${namespace}/${name}`) : undefined;
  const before = memory ? await memory.load() : { nodes: [] };
  if (memory)
    log(before.problem ? 'warn' : 'info', 'remembered connections read', {
      stateFile: config.stateFile,
      nodes: before.nodes.length,
      ...(before.problem ? { problem: before.problem } : {}),
    });

  const countRound = (r: AgentRoundReport) => {
    metrics.rounds.inc();
    for (const x of r.results.connect) metrics.connects.inc({ result: x.ok ? 'ok' : 'failed' });
    for (const x of r.results.disconnect) metrics.disconnects.inc({ result: x.ok ? 'ok' : 'failed' });
    metrics.failedConnects.inc(r.outcome.failedConnects.length);
    metrics.connectedPeers.set(r.outcome.remembered.length);
    if (r.outcome.connected.length || r.outcome.disconnected.length || r.outcome.failedConnects.length)
      log('info', 'round', {
        connected: r.outcome.connected,
        disconnected: r.outcome.disconnected,
        // Departed nodes OTP's global had connected again (round.ts: `departed`).
        ...(r.plan.again.length ? { disconnectedAgain: r.plan.again } : {}),
        failedConnects: r.outcome.failedConnects,
        holding: r.outcome.remembered.length,
      });
    for (const f of r.results.connect.filter((x) => !x.ok))
      log('debug', 'connect failed; retrying next round', {
        node: f.node,
        error: 'error' in f ? f.error : '',
      });
  };

  // The report says what the last round left: the node's own nodes() when the connector can ask
  // it, else what the round holds. One observation at a time, in the order of the rounds.
  const offerReport = () => {
    if (!writer) return;
    const v = agentView({
      node: realName,
      pod: podName,
      ...(list ? { list } : {}),
      links,
      observed: connector.observesConnections === true,
      ...(reportTrouble ? { trouble: reportTrouble } : {}),
    });
    if (v) writer.offer({ name: podName, uid: v.podUid ?? process.env.POD_UID }, v.view);
  };
  let observing: Promise<void> = Promise.resolve();
  const roundSeen = (r: AgentRoundReport) => {
    if (!writer) return;
    observing = observing.then(async () => {
      // What the round itself found, when it called nothing after asking; else ask now.
      const now = r.results.observed
        ? { ok: true as const, nodes: r.results.observed }
        : connector.observesConnections && connector.connected
          ? await connector.connected().catch(() => undefined)
          : undefined;
      links = linksAfterRound(links, {
        results: r.results,
        held: r.outcome.remembered,
        invalid: r.plan.invalid.map((x) => x.node),
        ...(now?.ok ? { observed: now.nodes } : {}),
      });
      offerReport();
    });
  };

  const loop = new RoundLoop({
    connector,
    self: realName ?? '',
    remembered: before.nodes,
    ...(memory ? { memory } : {}),
    resyncEveryMs: parseDuration(config.resyncInterval) ?? 0,
    onMemoryError: (e) =>
      log('warn', 'could not write the state file', {
        stateFile: config.stateFile,
        error: (e as Error).message,
      }),
    // Trouble is reported by tick() when it is read, not when the loop gets to it.
    onKeep: () => {},
    onRound: (r) => {
      roundSeen(r);
      countRound(r);
    },
    onError: (e) => log('error', 'round failed', { error: (e as Error).message }),
  });

  const apply = async (e: AgentEffect): Promise<void> => {
    switch (e.do) {
      case 'log':
        return log(e.level, e.message, e.meta);
      case 'gauges':
        for (const c of TROUBLE_CAUSES) metrics.trouble.set({ cause: c }, c === e.trouble ? 1 : 0);
        for (const st of ['live', 'stale', 'unknown'] as const)
          metrics.liveness.set({ state: st }, st === e.liveness ? 1 : 0);
        return;
      case 'lastStatus':
        return metrics.lastStatus.set(e.seconds);
      case 'selfCheck':
        return metrics.selfCheck.set(e.ok ? 1 : 0);
      case 'event':
        return events.record(
          { apiVersion: 'v1', kind: 'Pod', namespace, name: podName },
          'Warning',
          e.reason,
          e.message,
        );
      case 'submit':
        return loop.submit(e.input);
    }
  };
  // One reading, one step: the node's real name is asked (once it is known, never again) before
  // the step that may need it for the self check.
  const tick = async () => {
    if (stopped) return;
    const reading = subscription.reading();
    if (reading.act) realName ??= await realNodeName(connector, configuredName, log);
    const now = Date.now();
    const step = agentStep(state, reading, { podName, realName, now });
    state = step.state;
    reportTrouble = reportedTrouble(
      reportTrouble,
      state.trouble ? { cause: state.trouble.cause, message: state.troubleMessage } : undefined,
      now,
    );
    if (reading.act) {
      const rv = reading.object?.metadata?.resourceVersion;
      list = { peers: reading.list.peers, ...(rv !== undefined ? { resourceVersion: rv } : {}) };
    } else offerReport(); // with a list, the round's end offers the view
    for (const e of step.effects) await apply(e);
  };

  let timer: NodeJS.Timeout | undefined;
  const schedule = () => {
    const object = subscription.reading().object;
    // Until the object is read its interval is unknown: look again within a second.
    const ms = object ? pollingMsOf(object) : 1000;
    timer = setTimeout(() => {
      void tick().finally(() => !stopped && schedule());
    }, ms);
  };
  const subscription = new TopologySubscription(kube, { namespace, name, onReading: () => void tick() });

  const server: Server = await startHttpServer(config.httpHost, config.httpPort, metrics.registry, {
    notReady: () => {
      if (stopped) return ['stopping'];
      if (!state.statusSeen)
        return [
          `no status of ClusterTopology ${namespace}/${name} seen yet${state.troubleMessage ? `: ${state.troubleMessage}` : ''}`,
        ];
      if (state.self && !state.self.ok) return [`self check: ${state.self.message}`];
      return [];
    },
  });
  const port = (server.address() as AddressInfo).port;
  subscription.start();
  schedule();
  log('info', 'agent started', {
    topology: `${namespace}/${name}`,
    connector: connector.kind,
    node: realName,
    pod: podName,
    apiVersion: API_VERSION,
  });

  return {
    metrics,
    port,
    connector,
    selfCheck: () => state.self,
    async stop() {
      if (stopped) return;
      stopped = true;
      clearTimeout(timer);
      subscription.stop();
      writer?.stop();
      // A round in flight may be waiting on calls to a node that is stopping too (a pod shutting
      // down); the connections stay as they are anyway, so stopping waits for it only briefly.
      await Promise.race([loop.idle(), delay(STOP_GRACE_MS, undefined, { ref: false })]);
      // Stopping the agent leaves the connections as they are: the application decides its own fate.
      await connector.close();
      await new Promise<void>((r) => server.close(() => r()));
      server.closeAllConnections?.();
    },
  };
}
