/**
 * Safe rendering of untrusted values (annotation values, JSONPath results, pod names) inside
 * messages and tables: always one line, always quoted, never longer than asked, and free of
 * characters a terminal would act on (control characters, bidi overrides).
 */

/** Longest excerpt of a value a message quotes; the rest is counted, not shown. */
export const QUOTE_MAX_CHARS = 80;

// Beyond what JSON.stringify escapes: DEL and C1 controls, line/paragraph separators and the
// bidirectional overrides/isolates that can make text read differently from what it is.
const EXTRA_UNSAFE = /[\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
// What a table cell must not carry raw: every control character plus the above.
// eslint-disable-next-line no-control-regex -- control characters are what it matches
const CELL_UNSAFE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

function escapeCodeUnit(ch: string): string {
  return `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

function cut(text: string, max: number): { head: string; rest: number } {
  if (text.length <= max) return { head: text, rest: 0 };
  let end = max;
  // Do not split a surrogate pair.
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return { head: text.slice(0, end), rest: text.length - end };
}

/** A string as a double-quoted, escaped literal, shortened to `max` characters of content. */
export function quoteString(text: string, max = QUOTE_MAX_CHARS): string {
  const { head, rest } = cut(text, max);
  const literal = JSON.stringify(head).replace(EXTRA_UNSAFE, escapeCodeUnit);
  return rest > 0 ? `${literal}… (${rest} more characters)` : literal;
}

/** Any JSON value as it would appear in JSON, shortened; strings are quoted. */
export function quoteValue(value: unknown, max = QUOTE_MAX_CHARS): string {
  if (typeof value === 'string') return quoteString(value, max);
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch {
    json = undefined;
  }
  if (json === undefined) return `<${typeof value}>`;
  const { head, rest } = cut(json, max);
  const safe = head.replace(CELL_UNSAFE, escapeCodeUnit);
  return rest > 0 ? `${safe}… (${rest} more characters)` : safe;
}

/** "a number", "an object", "null", … — the kind of a JSON value, for messages. */
export function describeKind(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  switch (typeof value) {
    case 'string':
      return 'a string';
    case 'number':
      return 'a number';
    case 'boolean':
      return 'a boolean';
    case 'object':
      return 'an object';
    case 'undefined':
      return 'undefined';
    default:
      return `a ${typeof value}`;
  }
}

/** Text for a table cell: unchanged unless it holds characters a terminal would act on. */
export function sanitizeCell(text: string): string {
  return text.replace(CELL_UNSAFE, escapeCodeUnit);
}
