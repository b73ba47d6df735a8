/**
 * Reads the pods `ctopo resolve -f` is given. Accepted, as JSON or YAML:
 * - a single Pod (`kind: Pod`);
 * - a `List` or `PodList` whose `items` are pods — what `kubectl get pods -o json|yaml` prints
 *   and what the API returns (API list items carry no `kind`, so an item without one is taken
 *   as a pod; an item with another kind is refused, naming its index and kind);
 * - a bare array of pods;
 * - several YAML documents (`---`), each one of the above; empty documents are skipped.
 * Refused, with a message saying what was found: empty input, text that is neither JSON nor
 * YAML, anything else (a Service, a string, …). Pure: no I/O, the YAML parser logs nothing.
 */
import { parseAllDocuments } from 'yaml';
import { isRecord } from '../api/json.js';
import { describeKind, quoteString, quoteValue } from './quote.js';

export type PodInput = { ok: true; pods: object[] } | { ok: false; problem: string };

const WHAT_TO_PASS = 'pass the output of kubectl get pods -o json (or -o yaml), or a single Pod';
const LIST_KINDS = new Set(['List', 'PodList']);

class InputError extends Error {}

function kindOf(value: Record<string, unknown>): unknown {
  return Object.hasOwn(value, 'kind') ? value['kind'] : undefined;
}

function itemPod(item: unknown, where: string): object {
  if (!isRecord(item)) throw new InputError(`${where} is ${describeKind(item)}, not a Pod object`);
  const kind = kindOf(item);
  if (kind !== undefined && kind !== 'Pod')
    throw new InputError(`${where} has kind ${quoteValue(kind)}, not Pod; only pods can be resolved`);
  return item;
}

function podsOf(doc: unknown, prefix: string): object[] {
  const where = (s: string) => (prefix ? `${prefix}, ${s}` : s);
  if (Array.isArray(doc)) return doc.map((item, k) => itemPod(item, where(`item ${k}`)));
  if (!isRecord(doc))
    throw new InputError(
      `${prefix || 'the input'} is ${describeKind(doc)}${typeof doc === 'string' ? ` (${quoteString(doc, 40)})` : ''}, not a Pod or a list of pods; ${WHAT_TO_PASS}`,
    );
  const kind = kindOf(doc);
  if (kind === 'Pod') return [doc];
  if (typeof kind === 'string' && LIST_KINDS.has(kind)) {
    const items = Object.hasOwn(doc, 'items') ? doc['items'] : undefined;
    if (items === null || items === undefined) return []; // an empty list may print items: null
    if (!Array.isArray(items))
      throw new InputError(`${where(`the ${kind}`)}'s items is ${describeKind(items)}, not an array`);
    return items.map((item, k) => itemPod(item, where(`items[${k}]`)));
  }
  if (kind === undefined)
    throw new InputError(
      `${prefix || 'the input'} has no kind; expected kind Pod, List or PodList — ${WHAT_TO_PASS}`,
    );
  throw new InputError(
    `${prefix || 'the input'} has kind ${quoteValue(kind)}, not Pod, List or PodList; ${WHAT_TO_PASS}`,
  );
}

function firstLine(text: string): string {
  const line = text.split('\n', 1)[0] ?? '';
  return line.trim();
}

function parseDocuments(text: string): unknown[] {
  try {
    return [JSON.parse(text)];
  } catch (jsonError) {
    const docs = parseAllDocuments(text, { prettyErrors: true, uniqueKeys: true, logLevel: 'silent' });
    const looksLikeJson = /^\s*[{[]/.test(text);
    for (const doc of docs) {
      const error = doc.errors[0];
      if (error) {
        const detail = looksLikeJson
          ? `JSON: ${(jsonError as Error).message}`
          : `YAML: ${firstLine(error.message)}`;
        throw new InputError(`the input is neither valid JSON nor valid YAML (${detail})`);
      }
    }
    const values: unknown[] = [];
    for (const doc of docs) {
      try {
        values.push(doc.toJS({ maxAliasCount: 100 }));
      } catch (e) {
        throw new InputError(
          `the YAML could not be read: ${e instanceof Error ? firstLine(e.message) : String(e)}`,
        );
      }
    }
    // Empty documents (a trailing ---, comments only) carry nothing to resolve.
    return values.filter((v) => v !== null && v !== undefined);
  }
}

export function parsePodInput(text: string): PodInput {
  // A byte-order mark is file encoding, not content.
  const body = text.startsWith('\uFEFF') ? text.slice(1) : text;
  if (body.trim() === '') return { ok: false, problem: `the input is empty; ${WHAT_TO_PASS}` };
  try {
    const docs = parseDocuments(body);
    if (docs.length === 0) return { ok: false, problem: `the input holds no document; ${WHAT_TO_PASS}` };
    const pods: object[] = [];
    docs.forEach((doc, d) => {
      for (const pod of podsOf(doc, docs.length > 1 ? `document ${d + 1}` : '')) pods.push(pod);
    });
    return { ok: true, pods };
  } catch (e) {
    if (e instanceof InputError) return { ok: false, problem: e.message };
    throw e;
  }
}
