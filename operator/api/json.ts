/** JSON utilities: what the code reads from the API server or a file, compared and patched. */

/** A JSON object (not an array, not null), as read from the API server or a file. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Whether two JSON values are equal; a key whose value is undefined counts as absent. */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((x, i) => deepEqual(x, bb[i]));
  }
  const ka = Object.keys(a).filter((k) => (a as Record<string, unknown>)[k] !== undefined);
  const kb = Object.keys(b).filter((k) => (b as Record<string, unknown>)[k] !== undefined);
  return (
    ka.length === kb.length &&
    ka.every((k) => deepEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]))
  );
}

/**
 * A JSON merge patch (RFC 7386) that turns `from` into `to`: changed and new keys are set,
 * removed keys are set to null, arrays are replaced whole.
 */
export function mergePatch(from: unknown, to: unknown): unknown {
  if (!isRecord(to) || !isRecord(from)) return to;
  const patch: Record<string, unknown> = {};
  // defineProperty: a key named __proto__ is data, never the object's prototype.
  const put = (k: string, v: unknown) =>
    Object.defineProperty(patch, k, { value: v, enumerable: true, writable: true, configurable: true });
  for (const k of Object.keys(from)) if (from[k] !== undefined && to[k] === undefined) put(k, null);
  for (const k of Object.keys(to)) {
    if (to[k] === undefined || deepEqual(from[k], to[k])) continue;
    put(k, mergePatch(from[k], to[k]));
  }
  return patch;
}

/**
 * `value` as JSON with every object's keys sorted and undefined members left out: one text per
 * value, however its keys were ordered (the API server returns an object's keys sorted).
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value))
    return `[${value.map((v) => canonicalJson(v === undefined ? null : v)).join(',')}]`;
  if (!isRecord(value)) return JSON.stringify(value) ?? 'null';
  const keys = Object.keys(value)
    .filter((k) => value[k] !== undefined)
    .sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k])}`).join(',')}}`;
}
