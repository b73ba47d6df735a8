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
import { getLease } from '../../protocol/get.js';
import { InputReadError, readInput } from '../read-input.js';
import { analysisFromStatus } from '../status-analysis.js';
import { statusCaveats } from '../status-caveats.js';
import { formatAnalysisTable } from '../analysis-table.js';
import { compareLayout } from '../layout-compare.js';
import {
  analysisExitCode,
  EXIT_CANNOT_ANALYSE,
  EXIT_DIFFERENT,
  EXIT_NO_ANALYSIS_YET,
  EXIT_OFF,
} from '../analysis-exit.js';
import { sanitizeCell } from '../../naming/quote.js';
import {
  analyzeFailureDomains,
  parseLayout,
  type FailureDomainSettings,
  type Member,
} from '../../failure-domains/index.js';
import { KIND } from '../../api/schema.js';

/**
 * `ctopo analyze`: the failure-domain table, either from a layout written on paper (offline),
 * from what the operator published in a ClusterTopology's status (live), or both: the layout
 * compared with the live placement. The exit status tells verdicts apart from errors (see
 * `analysis-exit.ts`), so CI can gate on it.
 */

export { EXIT_NO_ANALYSIS_YET };

export const analyzeCommand: Command = {
  name: 'analyze',
  help: `Usage: ctopo analyze --layout FILE|- [-o table|json]
       ctopo analyze [-n NAMESPACE] NAME [--kubeconfig FILE] [-o table|json]
       ctopo analyze [-n NAMESPACE] NAME --layout FILE|-

Prints, for every failure domain (each value of each level: a site, a zone, a hypervisor, a
host), how many votes are left if all of it disappears and whether writes still commit; each
site cut off from the rest; what a partition between all of them leaves on each side; each
shared link (a transport level) lost alone; and per level how many simultaneous losses are
survived.

  --layout FILE   offline, "on paper": a YAML/JSON file listing the voters and what each shares
                  (levels: [{key: site}, {key: hypervisor}, {key: vpn, transport: true}];
                  voters: [{name, labels, votes, ready}]).
  NAME            live: the analysis the operator wrote to the ClusterTopology's
                  .status.failureDomains (its declared voters, placed by their Nodes' labels).
  NAME --layout   compare: the layout (the diagram) against the live placement; lists every
                  member, placement and count that differs.

Flags:
  --layout FILE          the layout file; - reads standard input
  -n, --namespace NS     namespace of the ClusterTopology (default: the kubeconfig context's)
  --kubeconfig FILE      kubeconfig (default: $KUBECONFIG, ~/.kube/config, in-cluster)
  -o, --output FORMAT    table (default) or json (the analysis exactly as in .status.failureDomains)

Exit status:
 verdicts
  0   Survives: every single loss leaves a majority (compare: the layout matches)
  1   Breaks: some single loss costs the majority
  2   AtRisk: the answer depends on members of unknown placement (unscheduled pods, Nodes
      without the label)
  3   NoVoters: no member holds a vote
  4   Off: the topology declares no quorum (spec.failureDomains.analysis: Off)
  5   compare: the layout and the live placement differ
 could not analyse
  64  bad usage or a bad layout file (every problem is listed)
  69  the ClusterTopology is not found or cannot be read (API server refused or unreachable,
      status malformed)
  75  the ClusterTopology's status holds no analysis yet (the operator has not listed its pods
      successfully yet): try again later

Examples:
  ctopo analyze --layout etcd-layout.yaml
  ctopo analyze -n netzlive web -o json
  ctopo analyze -n kube-system control-plane-etcd --layout etcd-diagram.yaml
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
    if (layout !== undefined && positionals.length === 0) {
      for (const flag of ['namespace', 'kubeconfig'])
        if (values[flag] !== undefined)
          throw new UsageError(
            `analyze: --${flag} applies to a live ClusterTopology NAME; --layout alone is offline`,
          );
      return analyzeLayout(layout, format, io);
    }
    if (positionals.length === 0)
      throw new UsageError('analyze: give a ClusterTopology NAME (live) or --layout FILE (offline)');
    const [name] = positionalsExactly('analyze', positionals, ['NAME']);
    if (layout !== undefined && format === 'json')
      throw new UsageError(
        'analyze: comparing NAME with --layout prints a list of differences; -o json does not apply',
      );
    return analyzeLive(values, name!, format, io, layout);
  },
};

/** `-o json` prints `document` exactly; the table is only rendered when asked for. */
function print(document: unknown, table: () => string, format: OutputFormat, io: CommandContext): void {
  io.out(format === 'json' ? JSON.stringify(document, null, 2) : table());
}

type Layout = { members: Member[]; settings: FailureDomainSettings };

/** The layout, or the exit code after saying what is wrong with it. */
async function readLayout(source: string, io: CommandContext): Promise<Layout | number> {
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
  return parsed;
}

async function analyzeLayout(source: string, format: OutputFormat, io: CommandContext): Promise<number> {
  const layout = await readLayout(source, io);
  if (typeof layout === 'number') return layout;
  const analysis = analyzeFailureDomains(layout.members, layout.settings);
  print(analysis, () => formatAnalysisTable(analysis), format, io);
  return analysisExitCode(analysis);
}

async function analyzeLive(
  values: Record<string, unknown>,
  name: string,
  format: OutputFormat,
  io: CommandContext,
  layoutSource: string | undefined,
): Promise<number> {
  const layout = layoutSource === undefined ? undefined : await readLayout(layoutSource, io);
  if (typeof layout === 'number') return layout;
  try {
    const { kube, namespace } = connectCluster('analyze', values);
    const lookup = await getTopology(kube, namespace, name);
    if (!lookup.found) {
      io.err(`ctopo analyze: ${sanitizeCell(lookup.message)}`);
      return EXIT_CANNOT_ANALYSE;
    }
    const { metadata, status } = lookup.topology;
    const id = `${KIND} ${namespace}/${metadata.name}`;
    if (status?.failureDomains === undefined) {
      io.err(
        `ctopo analyze: ${id} has no failure-domain analysis in its status yet: the operator writes it ` +
          `after its first successful list of the topology's pods.${describeLastResponse(status)} ` +
          `Check that the operator is running and serves namespace ${namespace}.`,
      );
      return EXIT_NO_ANALYSIS_YET;
    }
    const read = analysisFromStatus(status.failureDomains);
    if (!read.ok) throw new ClusterReadError(`${id}: ${read.problem}`);
    // Caveats go to stderr, so -o json stays exactly the status.
    const caveats = statusCaveats({
      status,
      lease: await getLease(kube, namespace, name),
      now: new Date(),
      ...(metadata.generation !== undefined ? { generation: metadata.generation } : {}),
    });
    for (const caveat of caveats) io.err(`ctopo analyze: note: ${caveat}`);
    const analysis = read.analysis;
    if (analysis.verdict === 'Off') {
      print(
        status.failureDomains,
        () =>
          `${id}\nFailure-domain analysis is off (spec.failureDomains.analysis: Off): this cluster declares no quorum.\n`,
        format,
        io,
      );
      return EXIT_OFF;
    }
    if (layout !== undefined) {
      const c = compareLayout(layout, analysis);
      const where = layoutSource === '-' ? 'standard input' : layoutSource;
      const lines = [
        c.differences.length === 0
          ? `The layout ${where} matches ${id}.`
          : `The layout ${where} and ${id} differ (${c.differences.length}):`,
        ...c.differences.map((d) => `- ${sanitizeCell(d)}`),
        ...(c.notes.length > 0 ? ['Not compared:', ...c.notes.map((n) => `- ${sanitizeCell(n)}`)] : []),
      ];
      io.out(lines.join('\n') + '\n');
      return c.differences.length === 0 ? 0 : EXIT_DIFFERENT;
    }
    print(status.failureDomains, () => `${id}\n${formatAnalysisTable(analysis)}`, format, io);
    return analysisExitCode(analysis);
  } catch (e) {
    if (e instanceof ClusterReadError) {
      io.err(`ctopo analyze: ${sanitizeCell(e.message)}`);
      return EXIT_CANNOT_ANALYSE;
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
