import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { TROUBLE_CAUSES } from './round.js';

export function agentMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'ctopo_agent_' });
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
      help: "The lastPollTime of the operator's status the agent last acted on.",
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
