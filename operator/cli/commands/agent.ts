import type { Command } from '../command.js';
import { flagsFor, helpFor, loadConfig } from '../../config/load.js';
import { agentOptions, connectorConfigFrom, type AgentConfig } from '../../agent/config.js';
import { CONNECTORS, CONNECTOR_KINDS } from '../../agent/connectors/index.js';
import { runAgent } from '../../agent/run.js';

const connectorHelp = CONNECTORS.map(
  (d) => `  ${d.kind.padEnd(7)} ${d.help.split('\n').join('\n          ')}`,
).join('\n');

export const agentCommand: Command = {
  name: 'agent',
  help: `Usage: ctopo agent --topology NAME [--namespace NS] --connector ${CONNECTOR_KINDS.join('|')} [flags]

Reads one ClusterTopology (get/watch on that object only; no permission on pods needed) and runs
a round on every status change and every pollingInterval: disconnect the nodes that left the
list, connect every node in it; a failed connect is retried next round. Only nodes this agent
connected are ever disconnected by it, and never because of its own trouble (API unreachable,
401/403, object gone, status stale): then it keeps every connection and says so in logs
and metrics (ctopo_agent_trouble). The self check compares the operator's node name for this pod with the
local node's real name and fails /readyz (with an error log each round) when they differ.

Restarts: with --state-file the agent writes the nodes it connected (before a round, what it
may connect; after it, what it holds) and reads them back at start, so a peer removed while it was
down is still disconnected. When the application restarts and forgets its peers, the erlang
connector notices (it reads nodes() each round); an exec program notices with --exec-list, or
with --resync-interval every node is connected again now and then.

Connectors:
${connectorHelp}

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
      // Once stopped, calls still in flight (an erl_call to a node that is going away) must not
      // keep the process alive: exit a moment later if anything still holds the event loop.
      const done = () =>
        void agent.stop().then(() => {
          setTimeout(() => process.exit(process.exitCode ?? 0), 1_000).unref();
          resolve();
        });
      process.once('SIGTERM', done);
      process.once('SIGINT', done);
    });
    return 0;
  },
};
