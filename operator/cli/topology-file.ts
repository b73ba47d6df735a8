import { parseAllDocuments } from 'yaml';
import { GROUP, KIND } from '../api/schema.js';
import { isRecord } from '../api/json.js';
import { validateSpec, type ResolvedSpec } from '../api/validate.js';
import { quoteValue } from '../naming/quote.js';

/**
 * Reads the ClusterTopology given to `ctopo resolve --topology FILE`: a manifest as applied with
 * kubectl (YAML or JSON; other objects in the same file, such as its Namespace, are skipped),
 * or what `kubectl get ctopo NAME -o yaml|json` prints (a List too). Exactly one ClusterTopology
 * must be found. Its whole spec is checked as the API server and the operator check it, so a
 * dry run never accepts a topology the cluster would refuse. Pure: no I/O.
 */

export type TopologyFile =
  { ok: true; name: string | undefined; spec: ResolvedSpec } | { ok: false; problems: string[] };

/** Every object in the documents, with List items taken out of their List. */
function objectsOf(docs: unknown[]): unknown[] {
  const out: unknown[] = [];
  for (const doc of docs) {
    if (
      isRecord(doc) &&
      typeof doc.kind === 'string' &&
      doc.kind.endsWith('List') &&
      Array.isArray(doc.items)
    )
      out.push(...(doc.items as unknown[]));
    else if (Array.isArray(doc)) out.push(...(doc as unknown[]));
    else out.push(doc);
  }
  return out;
}

function parse(text: string): { ok: true; docs: unknown[] } | { ok: false; problem: string } {
  try {
    return { ok: true, docs: [JSON.parse(text)] };
  } catch {
    // Not JSON; YAML is a superset for every ClusterTopology anybody writes.
  }
  const docs = parseAllDocuments(text, { uniqueKeys: true, prettyErrors: true, logLevel: 'silent' });
  const values: unknown[] = [];
  for (const doc of docs) {
    const error = doc.errors[0];
    if (error) return { ok: false, problem: `not valid YAML or JSON: ${error.message.split('\n', 1)[0]}` };
    try {
      values.push(doc.toJS({ maxAliasCount: 100 }));
    } catch (e) {
      return { ok: false, problem: `the YAML cannot be read: ${(e as Error).message.split('\n', 1)[0]}` };
    }
  }
  return { ok: true, docs: values.filter((v) => v !== null && v !== undefined) };
}

export function parseTopologyFile(text: string): TopologyFile {
  const body = text.startsWith('\uFEFF') ? text.slice(1) : text;
  if (body.trim() === '') return { ok: false, problems: ['the file is empty; expected a ClusterTopology'] };
  const parsed = parse(body);
  if (!parsed.ok) return { ok: false, problems: [parsed.problem] };
  const objects = objectsOf(parsed.docs);
  const topologies = objects.filter((o): o is Record<string, unknown> => isRecord(o) && o.kind === KIND);
  if (topologies.length === 0) {
    const kinds = objects.map((o) => (isRecord(o) && typeof o.kind === 'string' ? o.kind : '(no kind)'));
    return {
      ok: false,
      problems: [
        `no ${KIND} found${kinds.length > 0 ? ` (found: ${[...new Set(kinds)].map((k) => quoteValue(k)).join(', ')})` : ''}; ` +
          `expected an object with apiVersion ${GROUP}/… and kind ${KIND}`,
      ],
    };
  }
  if (topologies.length > 1) {
    const names = topologies.map((t) =>
      quoteValue((t.metadata as { name?: unknown } | undefined)?.name ?? '(no name)'),
    );
    return {
      ok: false,
      problems: [
        `${topologies.length} ${KIND} objects found (${names.join(', ')}); pass a file with exactly one`,
      ],
    };
  }
  const topology = topologies[0]!;
  const problems: string[] = [];
  const apiVersion = topology.apiVersion;
  if (apiVersion !== undefined && (typeof apiVersion !== 'string' || !apiVersion.startsWith(`${GROUP}/`)))
    problems.push(`apiVersion: ${quoteValue(apiVersion)} is not of group ${GROUP}`);
  if (!isRecord(topology.spec)) problems.push('spec: is required (a map with at least selector)');
  else {
    const checked = validateSpec(topology.spec);
    if (!checked.ok) problems.push(...checked.problems);
    else if (problems.length === 0) {
      const name = (topology.metadata as { name?: unknown } | undefined)?.name;
      return { ok: true, name: typeof name === 'string' ? name : undefined, spec: checked.spec };
    }
  }
  return { ok: false, problems };
}
