import { EXIT_USAGE, UsageError, type Command } from '../command.js';
import { outputFormat, outputOption, stringFlag } from '../args.js';
import { InputReadError, readInput } from '../read-input.js';
import { parseTopologyFile } from '../topology-file.js';
import {
  DEFAULT_NAMING_SETTINGS,
  formatResolveJson,
  formatResolveTable,
  parsePodInput,
  resolvePeers,
  type NamingSettings,
} from '../../naming/index.js';

/**
 * `ctopo resolve`: the naming engine on pods from a file, offline. It computes exactly what the
 * operator would write to .status.peers/.excluded for those pods, so a user can check their
 * annotations before installing anything. Exit 0 whenever the input could be read — exclusions
 * are the answer, not a failure (a pending pod without an IP is excluded too).
 */
export const resolveCommand: Command = {
  name: 'resolve',
  help: `Usage: ctopo resolve -f FILE|- [--topology FILE] [-o table|json]

Reads pods — one Pod, or the List that kubectl get pods -o json (or -o yaml) prints — and prints
what the operator would publish for them: each peer's node name (name@host) and where its host
and name came from, and every pod that would be left out, with the reason and what to change.
Nothing is sent anywhere: it is a dry run to try on your own pods before installing anything.
The selector is not applied: every pod given is treated as selected.

Flags:
  -f, --filename FILE   the pods (JSON or YAML); - reads standard input
  --topology FILE       a ClusterTopology manifest (YAML or JSON) whose spec.naming applies;
                        its whole spec is checked as the API server would check it
                        (default: the annotations netzlive/hostname-naming-jsonpath and
                        netzlive/nodename-naming-jsonpath)
  -o, --output FORMAT   table (default) or json: {"peers":[…],"excluded":[{"pod","reason","message"}]}

Exit status:
  0   the pods were read (whether or not some are excluded)
  64  bad usage or bad input: no -f, a file that cannot be read, input that is not pods,
      a topology file that is not one valid ClusterTopology

Examples:
  kubectl get pods -n netzlive -l netzlive/pod-type=cluster-service -o json | ctopo resolve -f -
  ctopo resolve -f pods.yaml --topology topology.yaml -o json
  kubectl ctopo resolve -f pods.json     # the same, as a kubectl plugin

The package installs this CLI also as kubectl-ctopo: with its bin directory on PATH (and Node.js
22.19 or newer first on PATH), kubectl runs it as "kubectl ctopo".`,
  options: {
    filename: { type: 'string', short: 'f' },
    topology: { type: 'string' },
    ...outputOption,
  },
  async run(values, _positionals, io) {
    const format = outputFormat('resolve', values);
    const source = stringFlag('resolve', values, 'filename');
    if (source === undefined)
      throw new UsageError('resolve: say which pods with -f FILE (or -f - for standard input)');
    const topologyPath = stringFlag('resolve', values, 'topology');
    if (source === '-' && topologyPath === '-')
      throw new UsageError('resolve: standard input can hold the pods or the topology, not both');

    // The topology first: a mistake in it is found before a long pod list is read.
    let naming: NamingSettings = DEFAULT_NAMING_SETTINGS;
    try {
      if (topologyPath !== undefined) {
        const topology = parseTopologyFile(await readInput(topologyPath, io.stdin, '--topology'));
        if (!topology.ok) {
          io.err(`ctopo resolve: the topology ${topologyPath} is not a valid ClusterTopology:`);
          for (const p of topology.problems) io.err(`  - ${p}`);
          return EXIT_USAGE;
        }
        naming = topology.spec.naming;
      }
      const input = parsePodInput(await readInput(source, io.stdin, '-f'));
      if (!input.ok) {
        io.err(`ctopo resolve: ${source === '-' ? 'standard input' : source}: ${input.problem}`);
        return EXIT_USAGE;
      }
      const result = resolvePeers(input.pods, naming);
      io.out(format === 'json' ? formatResolveJson(result) : formatResolveTable(result));
      return 0;
    } catch (e) {
      if (e instanceof InputReadError) {
        io.err(`ctopo resolve: ${e.message}`);
        return EXIT_USAGE;
      }
      throw e;
    }
  },
};
