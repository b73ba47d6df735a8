import type { ClusterTopologyStatus, ExcludedPod, Peer } from '../api/types.generated.js';
import { LIGHT_PEERS_ABOVE } from '../api/schema.js';
import { describeFallback } from '../naming/messages.js';
import type { NamingSettings } from '../naming/index.js';
import { quoteString, sanitizeCell } from '../naming/quote.js';
import { statusCaveats } from './status-caveats.js';
import { exclusionsOfPod, peerOfPod, type LeaseRead } from '../protocol/read.js';
import { memberReportLines, type MemberReportRead } from './member-report-lines.js';

/**
 * What `ctopo explain` says about one pod, from facts the command gathered: the topology (spec
 * and status) and, when the status does not mention the pod, what the API server says about it.
 * Pure, so every branch is unit-tested; the command only reads and prints.
 *
 * Exit 0 when the pod is a peer, 1 otherwise: "is this pod in?" is the question, and scripts ask
 * it. Every value that came from the cluster is printed terminal-safe.
 */

export type SelectorCheck =
  /** The API server lists the pod with the topology's selector. */
  | { kind: 'matches' }
  /** It does not; `unmet` are the requirements the pod fails, each asked alone. */
  | { kind: 'fails'; unmet: string[] }
  /** The server refused the selector itself (400). */
  | { kind: 'invalid'; message: string }
  /** The list could not be made (e.g. no permission to list pods). */
  | { kind: 'unknown'; message: string };

export type PodLookup =
  | { kind: 'missing' }
  | { kind: 'unreadable'; message: string }
  | { kind: 'exists'; labels: Record<string, string>; selector: SelectorCheck };

export interface TopologyFacts {
  namespace: string;
  name: string;
  /** Where its pods are: spec.namespace, else its own namespace. */
  podNamespace: string;
  selector: string;
  naming: NamingSettings;
  /** The liveness Lease, to tell a status nobody polls any more (default: not read). */
  lease?: LeaseRead;
  generation?: number;
  status?: ClusterTopologyStatus;
}

export type Standing =
  { kind: 'peer'; peer: Peer } | { kind: 'excluded'; entries: ExcludedPod[] } | { kind: 'unlisted' };

/** Where the status puts the pod. */
export function standingOf(status: ClusterTopologyStatus | undefined, pod: string): Standing {
  const peer = peerOfPod(status, pod);
  if (peer !== undefined) return { kind: 'peer', peer };
  const entries = exclusionsOfPod(status, pod);
  return entries.length > 0 ? { kind: 'excluded', entries } : { kind: 'unlisted' };
}

export interface ExplainFacts {
  topology: TopologyFacts;
  pod: string;
  standing: Standing;
  /** A peer's annotations, when the pod could be read (to show the expressions used). */
  annotations?: Record<string, string>;
  /** Only for an unlisted pod. */
  lookup?: PodLookup;
  /** The pod's member report (ClusterTopologyMember), when it was looked up. */
  report?: MemberReportRead;
  /** The time the facts were gathered; default: now. */
  now?: Date;
}

const safe = sanitizeCell;

export function explain(f: ExplainFacts): { lines: string[]; code: 0 | 1 } {
  const t = f.topology;
  const topo = `ClusterTopology ${safe(t.namespace)}/${safe(t.name)}`;
  const pod = safe(f.pod);
  const lines: string[] = [];
  let code: 0 | 1 = 1;
  switch (f.standing.kind) {
    case 'peer': {
      code = 0;
      lines.push(`${pod} is a peer of ${topo}.`, ...peerLines(f.standing.peer, t.naming, f.annotations));
      break;
    }
    case 'excluded': {
      lines.push(`${pod} is not a peer of ${topo}: the operator excludes it.`);
      for (const e of f.standing.entries)
        lines.push(`  Reason:   ${safe(e.reason)}`, `  Message:  ${safe(e.message)}`);
      break;
    }
    case 'unlisted': {
      lines.push(`${pod} is not a peer of ${topo}, and its status does not list it as excluded.`);
      lines.push(...unlistedLines(f, t));
      break;
    }
  }
  // A member's own report, when it has one (or, for a peer, that it has none).
  if (f.report !== undefined && (f.report.kind !== 'missing' || f.standing.kind === 'peer'))
    lines.push(
      '',
      ...memberReportLines(f.report, {
        pod: f.pod,
        topology: t.name,
        ...(t.status !== undefined ? { status: t.status } : {}),
        now: f.now ?? new Date(),
      }),
    );
  const notes = statusNotes(t, f.now ?? new Date());
  if (notes.length > 0) lines.push('', ...notes.map((n) => `Note: ${n}`));
  return { lines, code };
}

/** What a large topology's status does not say of a peer (LIGHT_PEERS_ABOVE). */
const LEFT_OUT = `not in the status (a topology of more than ${LIGHT_PEERS_ABOVE} peers lists only what readers use)`;

function peerLines(
  p: Peer,
  naming: NamingSettings,
  annotations: Record<string, string> | undefined,
): string[] {
  const at = p.nodeName.indexOf('@');
  const name = at < 0 ? p.nodeName : p.nodeName.slice(0, at);
  const host = at < 0 ? '' : p.nodeName.slice(at + 1);
  const from = (half: 'host' | 'name', source: string | undefined, key: string): string => {
    if (source === undefined) return LEFT_OUT;
    if (source !== 'Annotation') {
      const fallback =
        source === 'PodIP'
          ? 'status.podIP'
          : source === 'PodName'
            ? 'metadata.name'
            : describeFallback(half, naming);
      return `from ${fallback} (the pod has no ${key} annotation)`;
    }
    const expression = annotations?.[key];
    return expression === undefined
      ? `from the annotation ${key}`
      : `from the annotation ${key}, JSONPath ${quoteString(expression, 200)}`;
  };
  const state = (b: boolean | undefined, yes: string, no: string) =>
    b === undefined ? 'unknown (the status was written before the operator published it)' : b ? yes : no;
  return [
    `  Node name:    ${safe(p.nodeName)}`,
    `  Host part:    ${safe(host)} — ${from('host', p.hostSource, naming.hostnameAnnotation)}`,
    `  Name part:    ${safe(name)} — ${from('name', p.nameSource, naming.nodenameAnnotation)}`,
    `  Pod IP:       ${p.podIP === undefined ? LEFT_OUT : safe(p.podIP) || '(none)'}`,
    `  Runs on:      ${p.node === undefined ? LEFT_OUT : p.node ? `Node ${safe(p.node)}` : 'no Node yet (unscheduled)'}`,
    `  Ready:        ${state(p.ready, 'yes', 'no — its Ready condition is not True, or it is terminating')}`,
    `  Serving:      ${state(p.serving, 'yes — its Ready condition is True', 'no')}`,
    `  Terminating:  ${p.terminating ? 'yes — it stays a peer until the pod is gone' : 'no'}`,
    '',
    `The pod's own Erlang node name (what its release sets, e.g. RELEASE_NODE in rel/env.sh.eex) must be`,
    `exactly ${safe(p.nodeName)}, or its peers cannot connect to it; the agent checks this.`,
  ];
}

function unlistedLines(f: ExplainFacts, t: TopologyFacts): string[] {
  const where = `${safe(t.podNamespace)}/${safe(f.pod)}`;
  const listCmd = `kubectl get pods -n ${safe(t.podNamespace)} -l ${quoteShell(t.selector)}`;
  const lookup = f.lookup;
  if (t.status === undefined)
    return [
      `  The topology has no status yet: no operator has processed it.`,
      `  Check that the operator is running and serves namespace ${safe(t.namespace)} (ctopo operator --namespaces).`,
    ];
  if (lookup === undefined) return [];
  switch (lookup.kind) {
    case 'missing':
      return [
        `  Pod ${where} does not exist.`,
        `  The topology selects pods in namespace ${safe(t.podNamespace)} with the selector ${quoteString(t.selector, 200)};`,
        `  list them with: ${listCmd}`,
      ];
    case 'unreadable':
      return [`  Whether pod ${where} exists cannot be told: ${safe(lookup.message)}`];
    case 'exists':
      return existsLines(where, lookup.labels, lookup.selector, t, listCmd);
  }
}

function existsLines(
  where: string,
  labels: Record<string, string>,
  check: SelectorCheck,
  t: TopologyFacts,
  listCmd: string,
): string[] {
  const sel = quoteString(t.selector, 200);
  const labelText =
    Object.keys(labels).length === 0
      ? '(none)'
      : Object.entries(labels)
          .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
          .map(([k, v]) => safe(`${k}=${v}`))
          .join(', ');
  switch (check.kind) {
    case 'matches':
      return [
        `  Pod ${where} exists and matches the selector ${sel}, but the status does not list it yet.`,
        `  The status is from ${t.status?.lastPollTime ? safe(t.status.lastPollTime) : 'no poll yet'}; a pod the operator has seen appears within seconds.`,
        `  Check that the operator is running, serves namespace ${safe(t.namespace)} and may list pods in ${safe(t.podNamespace)}; see its log.`,
      ];
    case 'fails':
      return [
        `  Pod ${where} exists but does not match the selector ${sel}.`,
        ...(check.unmet.length > 0
          ? [`  Requirements it fails: ${check.unmet.map((r) => quoteString(r, 200)).join(', ')}`]
          : []),
        `  Its labels: ${labelText}`,
        `  Change the pod's labels or the topology's spec.selector; the selected pods: ${listCmd}`,
      ];
    case 'invalid':
      return [
        `  Pod ${where} exists, but the API server refuses the topology's selector ${sel}: ${safe(check.message)}`,
        `  Fix spec.selector (kubectl syntax: key=value, key!=value, key in (a,b), key notin (a,b), key, !key).`,
      ];
    case 'unknown':
      return [
        `  Pod ${where} exists (labels: ${labelText}); whether it matches the selector ${sel} cannot be told: ${safe(check.message)}`,
      ];
  }
}

/** The Ready condition when it is not True (its message says why), then the general caveats. */
function statusNotes(t: TopologyFacts, now: Date): string[] {
  const s = t.status;
  if (s === undefined) return [];
  const notes: string[] = [];
  const ready = s.conditions?.find((c) => c.type === 'Ready');
  if (ready !== undefined && ready.status !== 'True')
    notes.push(`the topology is not Ready (${safe(ready.reason)}): ${safe(ready.message)}`);
  const input: Parameters<typeof statusCaveats>[0] = { status: s, now };
  if (t.generation !== undefined) input.generation = t.generation;
  if (t.lease !== undefined) input.lease = t.lease;
  notes.push(...statusCaveats(input));
  return notes;
}

/** Single-quotes a value for a POSIX shell command line shown to the user. */
export function quoteShell(value: string): string {
  if (/^[A-Za-z0-9_./=,:@%+-]+$/.test(value)) return value;
  return `'${safe(value).replace(/'/g, `'\\''`)}'`;
}
