import { EXIT_USAGE, UsageError, type Command, type CommandContext } from '../command.js';
import {
  clusterOptions,
  outputFormat,
  outputOption,
  positionalsExactly,
  stringFlag,
  type OutputFormat,
} from '../args.js';
import { ClusterReadError, connectCluster, getTopology } from '../cluster-access.js';
import { InputReadError, readInput } from '../read-input.js';
import { analysisFromStatus } from '../status-analysis.js';
import { statusCaveats } from '../status-caveats.js';
import { sanitizeCell } from '../../naming/quote.js';
import {
  analysisExitCode,
  analyzeFailureDomains,
  formatAnalysisTable,
  parseLayout,
} from '../../failure-domains/index.js';
import { KIND } from '../../api/schema.js';

/**
 * `ctopo analyze`: the seed's failure-domain table, either from a layout written on paper
 * (offline) or from what the operator published in a ClusterTopology's status (live). The exit
 * status is the verdict, so CI can gate on it. When the operator has not published an analysis
 * yet there is no verdict to give: that is exit 75 (EX_TEMPFAIL, "try again later"), distinct
 * from every verdict, so a script can wait for it rather than mistake it for NoVoters.
 */

/** sysexits' EX_TEMPFAIL: the status holds no analysis yet; asking again later may answer. */
export const EXIT_NO_ANALYSIS_YET = 75;

export const analyzeCommand: Command = {
  name: 'analyze',
  help: `Usage: ctopo analyze --layout FILE|- [-o table|json]
       ctopo analyze [-n NAMESPACE] NAME [--kubeconfig FILE] [-o table|json]

Prints, for every failure domain (each value of each level: a site, a zone, a hypervisor, a
host), how many votes are left if all of it disappears and whether writes still commit; then what
a network partition between the domains of the top level leaves on each side, and per level how
many simultaneous losses are survived.

  --layout FILE   offline, "on paper": a YAML/JSON file listing the voters and what each shares
                  (levels: [{key: site}, {key: hypervisor}]; voters: [{name, labels, votes, ready}]).
  NAME            live: the analysis the operator wrote to the ClusterTopology's
                  .status.failureDomains (voters = its peers, placed by their Nodes' labels).

Flags:
  --layout FILE          the layout file; - reads standard input
  -n, --namespace NS     namespace of the ClusterTopology (default: the kubeconfig context's)
  --kubeconfig FILE      kubeconfig (default: $KUBECONFIG, ~/.kube/config, in-cluster)
  -o, --output FORMAT    table (default) or json (the analysis exactly as in .status.failureDomains)

Exit status:
  0   Survives: every single domain loss leaves a majority
  1   Breaks: some single loss costs the majority; also: the ClusterTopology was not found or
      could not be read
  2   AtRisk: the answer depends on members of unknown placement (unscheduled pods, Nodes
      without the label)
  3   NoVoters: no member holds a vote
  64  bad usage or a bad layout file (every problem is listed)
  75  the ClusterTopology's status holds no analysis yet (the operator has not listed its pods
      successfully yet): try again later

Examples:
  ctopo analyze --layout etcd-layout.yaml
  ctopo analyze -n netzlive web -o json
  kubectl ctopo analyze -n netzlive web          # the same, as a kubectl plugin

Live, notes on standard error say when the status may be out of date (the last list of pods
failed, the spec changed since, nobody refreshes it); -o json output stays exactly the status.
The package installs this CLI also as kubectl-ctopo: with its bin directory on PATH (and Node.js
22.19 or newer first on PATH), kubectl runs it as "kubectl ctopo".`,
  options: { layout: { type: 'string' }, ...clusterOptions, ...outputOption },
  allowPositionals: true,
  async run(values, positionals, io) {
    const format = outputFormat('analyze', values);
    const layout = stringFlag('analyze', values, 'layout');
    if (layout !== undefined) {
      if (positionals.length > 0)
        throw new UsageError(
          `analyze: give either --layout FILE or a ClusterTopology NAME, not both (got ${JSON.stringify(positionals[0])})`,
        );
      for (const flag of ['namespace', 'kubeconfig'])
        if (values[flag] !== undefined)
          throw new UsageError(`analyze: --${flag} applies to a live ClusterTopology, not to --layout`);
      return analyzeLayout(layout, format, io);
    }
    if (positionals.length === 0)
      throw new UsageError('analyze: give a ClusterTopology NAME (live) or --layout FILE (offline)');
    const [name] = positionalsExactly('analyze', positionals, ['NAME']);
    return analyzeLive(values, name!, format, io);
  },
};

/** `-o json` prints `document` exactly; the table is only rendered when asked for. */
function print(document: unknown, table: () => string, format: OutputFormat, io: CommandContext): void {
  io.out(format === 'json' ? JSON.stringify(document, null, 2) : table());
}

async function analyzeLayout(source: string, format: OutputFormat, io: CommandContext): Promise<number> {
  let text: string;
  try {
    text = await readInput(source, io.stdin, '--layout');
  } catch (e) {
    if (!(e instanceof InputReadError)) throw e;
    io.err(`ctopo analyze: ${e.message}`);
    return EXIT_USAGE;
  }
  const parsed = parseLayout(text);
  if (!parsed.ok) {
    const where = source === '-' ? 'standard input' : source;
    io.err(
      `ctopo analyze: the layout ${where} has ${parsed.problems.length} problem${parsed.problems.length === 1 ? '' : 's'}:`,
    );
    for (const p of parsed.problems) io.err(`  - ${p}`);
    return EXIT_USAGE;
  }
  const analysis = analyzeFailureDomains(parsed.members, parsed.settings);
  print(analysis, () => formatAnalysisTable(analysis), format, io);
  return analysisExitCode(analysis);
}

async function analyzeLive(
  values: Record<string, unknown>,
  name: string,
  format: OutputFormat,
  io: CommandContext,
): Promise<number> {
  const { kube, namespace } = connectCluster('analyze', values);
  try {
    const lookup = await getTopology(kube, namespace, name);
    if (!lookup.found) {
      io.err(`ctopo analyze: ${sanitizeCell(lookup.message)}`);
      return 1;
    }
    const { metadata, spec, status } = lookup.topology;
    const id = `${KIND} ${namespace}/${metadata.name}`;
    if (status?.failureDomains === undefined) {
      io.err(
        `ctopo analyze: ${id} has no failure-domain analysis in its status yet: the operator writes it ` +
          `after its first successful list of the topology's pods.${describeLastResponse(status)} ` +
          `Check that the operator is running and serves namespace ${namespace}.`,
      );
      return EXIT_NO_ANALYSIS_YET;
    }
    const read = analysisFromStatus(
      status.failureDomains,
      (status.peers ?? []).map((p) => p.pod),
    );
    if (!read.ok) throw new ClusterReadError(`${id}: ${read.problem}`);
    // Caveats go to stderr, so -o json stays exactly the status.
    const caveats = statusCaveats({
      status,
      now: new Date(),
      ...(metadata.generation !== undefined ? { generation: metadata.generation } : {}),
      ...(spec?.pollingInterval !== undefined ? { pollingInterval: spec.pollingInterval } : {}),
    });
    for (const caveat of caveats) io.err(`ctopo analyze: note: ${caveat}`);
    print(status.failureDomains, () => `${id}\n${formatAnalysisTable(read.analysis)}`, format, io);
    return analysisExitCode(read.analysis);
  } catch (e) {
    if (e instanceof ClusterReadError) {
      io.err(`ctopo analyze: ${sanitizeCell(e.message)}`);
      return 1;
    }
    throw e;
  }
}

function describeLastResponse(
  status: { lastResponse?: { code: string; reason: string; message?: string } } | undefined,
): string {
  const r = status?.lastResponse;
  if (r === undefined) return ' The status has no list result yet either.';
  if (r.code === '200') return '';
  return sanitizeCell(
    ` Its last list of pods failed: ${r.code} ${r.reason}${r.message ? ` (${r.message})` : ''}.`,
  );
}
