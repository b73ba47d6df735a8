/** Where two JSON values differ, as paths (pure). */

/** Paths where two JSON values differ, with both values (at most 20 paths). */
export function differences(a: unknown, b: unknown, path: string, out: string[] = []): string[] {
  if (out.length >= 20) return out;
  if (typeof a !== typeof b || Array.isArray(a) !== Array.isArray(b) || (a === null) !== (b === null)) {
    out.push(`${path || '/'}: ${JSON.stringify(a)} vs ${JSON.stringify(b)}`);
    return out;
  }
  if (typeof a !== 'object' || a === null) {
    if (a !== b) out.push(`${path || '/'}: ${JSON.stringify(a)} vs ${JSON.stringify(b)}`);
    return out;
  }
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  for (const k of new Set([...Object.keys(ao), ...Object.keys(bo)]))
    differences(ao[k], bo[k], `${path}/${k}`, out);
  return out;
}
