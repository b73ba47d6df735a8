import { Counter, Gauge, Registry, collectProcessMetrics } from '../observability/metrics.js';
import { TROUBLE_CAUSES } from './round.js';

export function agentMetrics() {
  const registry = new Registry();
  collectProcessMetrics(registry, 'ctopo_agent_');
  const trouble = new Gauge({
    name: 'ctopo_agent_trouble',
    help: '1 while the agent keeps its connections because of this trouble.',
    labelNames: ['cause'],
    registers: [registry],
  });
  for (const cause of TROUBLE_CAUSES) trouble.set({ cause }, 0);
  return {
    registry,
    trouble,
    connectedPeers: new Gauge({
      name: 'ctopo_agent_connected_peers',
      help: 'Peers this agent connected and holds.',
      registers: [registry],
    }),
    rounds: new Counter({ name: 'ctopo_agent_rounds_total', help: 'Rounds run.', registers: [registry] }),
    connects: new Counter({
      name: 'ctopo_agent_connects_total',
      help: 'Connect calls by result.',
      labelNames: ['result'],
      registers: [registry],
    }),
    disconnects: new Counter({
      name: 'ctopo_agent_disconnects_total',
      help: 'Disconnect calls by result.',
      labelNames: ['result'],
      registers: [registry],
    }),
    failedConnects: new Counter({
      name: 'ctopo_agent_failed_connects_total',
      help: 'Connects that failed (retried next round).',
      registers: [registry],
    }),
    lastStatus: new Gauge({
      name: 'ctopo_agent_last_status_seen_timestamp_seconds',
      help: 'The lastPollTime of the status the agent last acted on: the poll that produced its content (the status is written only when it changes).',
      registers: [registry],
    }),
    liveness: new Gauge({
      name: 'ctopo_agent_operator_liveness',
      help: "1 for the state of the operator's liveness Lease for this topology (live, stale, unknown); see docs/status-protocol.md.",
      labelNames: ['state'],
      registers: [registry],
    }),
    reportWrites: new Counter({
      name: 'ctopo_agent_member_report_writes_total',
      help: 'Writes of this member report (ClusterTopologyMember) by outcome: ok, forbidden (401/403/404), failed.',
      labelNames: ['result'],
      registers: [registry],
    }),
    selfCheck: new Gauge({
      name: 'ctopo_agent_self_check_ok',
      help: "1 when the operator's name for this pod is the local node's real name.",
      registers: [registry],
    }),
  };
}

export type AgentMetrics = ReturnType<typeof agentMetrics>;
