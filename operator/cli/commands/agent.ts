import type { Command } from '../command.js';
import { flagsFor, helpFor, loadConfig } from '../../config/load.js';
import { agentOptions, connectorConfigFrom, type AgentConfig } from '../../agent/config.js';
import { runAgent } from '../../agent/run.js';

export const agentCommand: Command = {
  name: 'agent',
  help: `Usage: ctopo agent --topology NAME [--namespace NS] --connector erlang|exec|file [flags]

Reads one ClusterTopology (get/watch on that object only; no permission on pods needed) and runs
a round on every status change and every pollingInterval: disconnect the nodes that left the
list, connect every node in it; a failed connect is retried next round. Only nodes this agent
connected are ever disconnected by it, and never because of its own trouble (API unreachable,
401/403, object gone, status stale): then it keeps every connection and says so in logs
and metrics (ctopo_agent_trouble). The self check compares the operator's node name for this pod with the
local node's real name and fails /readyz (with an error log each round) when they differ.

Connectors:
  erlang  drives the local BEAM node with erl_call (net_kernel:connect_node/1,
          erlang:disconnect_node/1). The cookie comes from $RELEASE_COOKIE (or --cookie-env /
          --cookie-file) and never appears on a command line; no shell is ever involved.
  exec    runs --exec-program [--exec-args…] connect|disconnect NODE per change (no shell).
  file    rewrites --file-path atomically with the current peers (lines or JSON).

Flags:
${helpFor(agentOptions)}

Example (a sidecar of an Elixir release):
  ctopo agent --topology web --connector erlang      # RELEASE_NODE, RELEASE_COOKIE, POD_NAME from the pod`,
  options: flagsFor(agentOptions),
  async run(values, _positionals, io) {
    const config = loadConfig<AgentConfig>(agentOptions, values);
    connectorConfigFrom(config, 10_000); // refuse a bad combination before connecting anywhere
    const agent = await runAgent(config);
    io.err(`ctopo agent: health and metrics on ${config.httpHost}:${agent.port}`);
    await new Promise<void>((resolve) => {
      const done = () => void agent.stop().then(resolve);
      process.once('SIGTERM', done);
      process.once('SIGINT', done);
    });
    return 0;
  },
};
