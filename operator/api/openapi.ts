import type { JSONSchema } from './schema.js';

/** The schema as the API server wants it: generator-only keys removed. */
export function toOpenApi(s: JSONSchema): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(s)) {
    if (k === 'x-ts-type') continue;
    if (k === 'properties')
      out[k] = Object.fromEntries(
        Object.entries(v as Record<string, JSONSchema>).map(([p, ps]) => [p, toOpenApi(ps)]),
      );
    else if (k === 'items') out[k] = toOpenApi(v as JSONSchema);
    else out[k] = v;
  }
  return out;
}
