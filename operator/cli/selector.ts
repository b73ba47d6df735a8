/**
 * Splits a label selector in kubectl syntax into its requirements (`app=web, tier in (a,b), !x`
 * → `app=web`, `tier in (a,b)`, `!x`): the commas that separate requirements are those outside
 * parentheses. `ctopo explain` asks the API server about each requirement alone to say which one
 * a pod fails, so the selector's meaning stays the server's; this only cuts the text. Pure.
 */
export function splitSelector(selector: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < selector.length; i++) {
    const ch = selector[i];
    if (ch === '(') depth++;
    else if (ch === ')') depth = Math.max(0, depth - 1);
    else if (ch === ',' && depth === 0) {
      parts.push(selector.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(selector.slice(start));
  return parts.map((p) => p.trim()).filter((p) => p !== '');
}
