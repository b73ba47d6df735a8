import type { Command } from '../command.js';
import { clusterOptions, positionalsExactly } from '../args.js';
import { ClusterReadError, connectCluster, getTopology } from '../cluster-access.js';
import { EXIT_CANNOT_ANALYSE, EXIT_NO_ANALYSIS_YET } from '../analysis-exit.js';
import { listMemberReports } from '../member-reports-access.js';
import { meshReport } from '../mesh-report.js';
import { aggregateModel } from '../../mesh/aggregate.js';
import { meshModel } from '../../mesh/standing.js';
import { REPORT_STALE_AFTER_MS } from '../../protocol/report-plan.js';
import { statusMeaning } from '../../protocol/read.js';
import { sanitizeCell } from '../../naming/quote.js';

/**
 * `ctopo mesh`: who is connected to whom, by the members' own reports (ClusterTopologyMember), as
 * the operator aggregates them (operator/mesh/), computed here from the reports themselves so it
 * answers even where no operator aggregates yet.
 */
export const meshCommand: Command = {
  name: 'mesh',
  help: `Usage: ctopo mesh [-n NAMESPACE] NAME [--kubeconfig FILE]

Reads the ClusterTopology NAME and its members' reports (ClusterTopologyMember objects labelled
cluster.netzlive.io/topology=NAME) and prints the mesh they describe: MESH (the members in the
largest group connected to each other, over the listed members), the Meshed verdict and why, and
for up to 50 members a members × members matrix — each row is that member's own report of its link
to the column's member:
  ✓  connected          ✗r refused   ✗t timeout   ✗d node down   ✗n not tried yet   ✗i invalid name
  ?  unknown: the row's member has no current view (no report, stale, of another peer list, or
     its connector cannot see connections)
Beyond 50 members: the groups and the broken links. Then the members without a current view,
self-check failures (a member running under another name than the one listed) and trouble.
A link counts for the groups only when both ends report it connected.

Flags:
  -n, --namespace NS   namespace of the ClusterTopology (default: the kubeconfig context's)
  --kubeconfig FILE    kubeconfig (default: $KUBECONFIG, ~/.kube/config, in-cluster)

Exit status:
  0   meshed: every listed member reports a current view connected to every other
  1   not meshed: a broken link, a split, or a self-check failure
  2   unknown: some members have no current view
  64  bad usage
  69  the ClusterTopology or its reports cannot be read
  75  the operator has not listed the members yet

Examples:
  ctopo mesh -n netzlive web
  kubectl ctopo mesh -n netzlive web`,
  options: { ...clusterOptions },
  allowPositionals: true,
  async run(values, positionals, io) {
    const [name] = positionalsExactly('mesh', positionals, ['NAME']) as [string];
    const { kube, namespace } = connectCluster('mesh', values);
    try {
      const lookup = await getTopology(kube, namespace, name);
      if (!lookup.found) {
        io.err(`ctopo mesh: ${sanitizeCell(lookup.message)}`);
        return EXIT_CANNOT_ANALYSE;
      }
      const list = statusMeaning(lookup.topology.status);
      if (list.kind !== 'current') {
        io.err(
          `ctopo mesh: ClusterTopology ${sanitizeCell(namespace)}/${sanitizeCell(name)} lists no members yet (the operator has not listed its pods); try again later`,
        );
        return EXIT_NO_ANALYSIS_YET;
      }
      const reports = await listMemberReports(kube, namespace, name);
      const now = new Date();
      const model = meshModel({ topology: name, peers: list.peers, reports, now: now.getTime() });
      const aggregate = aggregateModel(model, now.getTime(), REPORT_STALE_AFTER_MS);
      const { lines, code } = meshReport({ namespace, name, model, aggregate, now });
      io.out(lines.join('\n'));
      return code;
    } catch (e) {
      if (e instanceof ClusterReadError) {
        io.err(`ctopo mesh: ${sanitizeCell(e.message)}`);
        return EXIT_CANNOT_ANALYSE;
      }
      throw e;
    }
  },
};
