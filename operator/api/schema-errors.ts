/**
 * Schema errors as lines, for a user: Ajv's (a spec, a layout file) and the config checker's
 * (`config/schema-check.ts`) alike.
 */

/** One line per error, `root` standing for the checked value: `config.httpPort: must be >= 0`. */
export function formatSchemaErrors(
  errors:
    | readonly { instancePath: string; keyword: string; params: Record<string, unknown>; message?: string }[]
    | null
    | undefined,
  root: string,
): string[] {
  return (errors ?? []).map((e) => {
    const path = root + e.instancePath.replace(/\/(\d+)/g, '[$1]').replace(/\//g, '.');
    if (e.keyword === 'additionalProperties')
      return `${path}: unknown field "${(e.params as { additionalProperty: string }).additionalProperty}"`;
    if (e.keyword === 'enum')
      return `${path}: must be one of ${(e.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}`;
    return `${path}: ${e.message ?? e.keyword}`;
  });
}
