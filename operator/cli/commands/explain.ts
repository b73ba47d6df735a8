import type { Command } from '../command.js';
import { clusterOptions, positionalsExactly } from '../args.js';
import { ClusterReadError, connectCluster, describeFailure, getTopology } from '../cluster-access.js';
import {
  explain,
  standingOf,
  type PodLookup,
  type SelectorCheck,
  type TopologyFacts,
} from '../explain-report.js';
import { splitSelector } from '../../api/label-selector.js';
import { ApiError, type Kube } from '../../kube/client.js';
import { readMemberReport } from '../member-reports-access.js';
import { podsPath } from '../../kube/paths.js';
import { getLease } from '../../protocol/get.js';
import { DEFAULT_NAMING_SETTINGS } from '../../naming/index.js';
import { sanitizeCell } from '../../naming/quote.js';

/** sysexits' EX_UNAVAILABLE, as for `ctopo analyze`: a script tells "not a peer" (1) from "cannot tell". */
const EXIT_CANNOT_READ = 69;

/**
 * `ctopo explain`: why one pod is in or out of a topology. The status answers for every pod the
 * operator selected; for any other pod the API server is asked whether it exists and whether the
 * topology's selector matches it (a list with the selector and metadata.name, so the selector
 * means exactly what it means to the operator), and, if not, which requirement it fails.
 */
export const explainCommand: Command = {
  name: 'explain',
  help: `Usage: ctopo explain [-n NAMESPACE] NAME POD [--kubeconfig FILE]

Reads the ClusterTopology NAME and says what it makes of the pod POD:
  - a peer: its node name, and where the host and name parts came from (an annotation's JSONPath,
    or the fallbacks), its IP, Node and its state: ready, serving, terminating;
  - excluded: the reason and the message saying what to change;
  - neither: whether the pod exists, whether it matches the topology's selector (and which
    requirement it fails), or that the operator has not listed it yet — and what to check;
  - its member report (ClusterTopologyMember POD.NAME), if it has one: the name it runs as, whom it
    is connected to and whom not (with the reason), its trouble, and whether the mesh counts it.
Notes follow when the status may be out of date: the topology is not Ready, its last list of
pods failed, the operator has not caught up with a spec change, or nobody refreshes it any more.

Flags:
  -n, --namespace NS   namespace of the ClusterTopology (default: the kubeconfig context's);
                       the pod is looked up where the topology selects pods (spec.namespace,
                       else this namespace)
  --kubeconfig FILE    kubeconfig (default: $KUBECONFIG, ~/.kube/config, in-cluster)

Exit status:
  0   the pod is a peer
  1   it is not (excluded, not selected, not there)
  64  bad usage
  69  the ClusterTopology is not found or cannot be read (no usable kubeconfig, API server refused
      or unreachable)

Examples:
  ctopo explain -n netzlive web myname-web-0
  kubectl ctopo explain -n netzlive web redispatch-1     # the same, as a kubectl plugin

The package installs this CLI also as kubectl-ctopo: with its bin directory on PATH (and Node.js
22.19 or newer first on PATH), kubectl runs it as "kubectl ctopo".`,
  options: { ...clusterOptions },
  allowPositionals: true,
  async run(values, positionals, io) {
    const [name, pod] = positionalsExactly('explain', positionals, ['NAME', 'POD']) as [string, string];
    try {
      const { kube, namespace } = connectCluster('explain', values);
      const lookup = await getTopology(kube, namespace, name);
      if (!lookup.found) {
        io.err(`ctopo explain: ${sanitizeCell(lookup.message)}`);
        return EXIT_CANNOT_READ;
      }
      const { metadata, spec, status } = lookup.topology;
      const topology: TopologyFacts = {
        namespace,
        name: metadata.name,
        podNamespace: spec?.namespace || namespace,
        selector: spec?.selector ?? '',
        naming: {
          hostnameAnnotation: spec?.naming?.hostnameAnnotation ?? DEFAULT_NAMING_SETTINGS.hostnameAnnotation,
          nodenameAnnotation: spec?.naming?.nodenameAnnotation ?? DEFAULT_NAMING_SETTINGS.nodenameAnnotation,
          ...(spec?.naming?.basename !== undefined ? { basename: spec.naming.basename } : {}),
          ...(spec?.naming?.hostFallback !== undefined ? { hostFallback: spec.naming.hostFallback } : {}),
          ...(spec?.naming?.clusterDomain !== undefined ? { clusterDomain: spec.naming.clusterDomain } : {}),
        },
        lease: await getLease(kube, namespace, name),
        ...(metadata.generation !== undefined ? { generation: metadata.generation } : {}),
        ...(status !== undefined ? { status } : {}),
      };
      const standing = standingOf(status, pod);
      const facts: Parameters<typeof explain>[0] = { topology, pod, standing };
      if (standing.kind === 'peer') {
        // Only to quote the expressions used; a peer is a peer whether or not the pod is readable.
        const read = await readPod(kube, topology.podNamespace, pod);
        if (read.kind === 'found') facts.annotations = read.annotations;
      } else if (standing.kind === 'unlisted' && status !== undefined) {
        facts.lookup = await lookUpPod(kube, topology, pod);
      }
      facts.report = await readMemberReport(kube, namespace, pod, metadata.name);
      const { lines, code } = explain(facts);
      io.out(lines.join('\n'));
      return code;
    } catch (e) {
      if (e instanceof ClusterReadError) {
        io.err(`ctopo explain: ${sanitizeCell(e.message)}`);
        return EXIT_CANNOT_READ;
      }
      throw e;
    }
  },
};

type PodRead =
  | { kind: 'found'; labels: Record<string, string>; annotations: Record<string, string> }
  | { kind: 'missing' }
  | { kind: 'unreadable'; message: string };

interface PodObject {
  metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
}

async function readPod(kube: Kube, namespace: string, pod: string): Promise<PodRead> {
  try {
    const p = await kube.request<PodObject>('GET', podsPath(namespace, pod));
    return { kind: 'found', labels: p.metadata?.labels ?? {}, annotations: p.metadata?.annotations ?? {} };
  } catch (e) {
    if (e instanceof ApiError && e.code === 404) return { kind: 'missing' };
    return { kind: 'unreadable', message: describeFailure(e, `pod ${namespace}/${pod}`, kube) };
  }
}

async function lookUpPod(kube: Kube, t: TopologyFacts, pod: string): Promise<PodLookup> {
  const read = await readPod(kube, t.podNamespace, pod);
  if (read.kind !== 'found') return read;
  return { kind: 'exists', labels: read.labels, selector: await checkSelector(kube, t, pod) };
}

/** Does the server list the pod under `selector`? (fieldSelector narrows the list to that pod.) */
async function selects(kube: Kube, namespace: string, selector: string, pod: string): Promise<boolean> {
  const list = await kube.request<{ items?: unknown[] }>('GET', podsPath(namespace), {
    query: { labelSelector: selector, fieldSelector: `metadata.name=${pod}`, limit: 1 },
  });
  return (list.items ?? []).length > 0;
}

async function checkSelector(kube: Kube, t: TopologyFacts, pod: string): Promise<SelectorCheck> {
  try {
    if (await selects(kube, t.podNamespace, t.selector, pod)) return { kind: 'matches' };
    const unmet: string[] = [];
    for (const requirement of splitSelector(t.selector))
      if (!(await selects(kube, t.podNamespace, requirement, pod))) unmet.push(requirement);
    return { kind: 'fails', unmet };
  } catch (e) {
    if (e instanceof ApiError && e.code === 400) return { kind: 'invalid', message: e.message };
    return { kind: 'unknown', message: describeFailure(e, `the pods of ${t.podNamespace}`, kube) };
  }
}
