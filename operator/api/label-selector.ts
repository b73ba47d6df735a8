/**
 * A label selector in kubectl syntax, matched locally: the operator decides which peers vote
 * from the pod labels it already holds, without asking the API server per pod. The grammar is
 * Kubernetes' own (`k8s.io/apimachinery/pkg/labels`): requirements separated by commas, each
 * `key`, `!key`, `key=value`, `key==value`, `key!=value`, `key in (a,b)` or `key notin (a,b)`;
 * all must hold. A requirement about a missing label: `!=` and `notin` hold, the others do not.
 * Pure; a selector that does not parse is refused with a message naming the requirement.
 */

export type LabelSelector = readonly Requirement[];

type Requirement =
  { op: 'exists' | 'absent'; key: string } | { op: 'in' | 'notin'; key: string; values: ReadonlySet<string> };

const KEY = String.raw`(?:[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?`;
const VALUE = String.raw`(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?`;
const EXISTS = new RegExp(`^(!?)\\s*(${KEY})$`);
const EQUALS = new RegExp(`^(${KEY})\\s*(==|=|!=)\\s*(${VALUE})$`);
const SET = new RegExp(`^(${KEY})\\s+(in|notin)\\s*\\(([^()]*)\\)$`);
const VALUE_ONLY = new RegExp(`^${VALUE}$`);

/** Selects no pod (an `in` with no values). */
export const matchesNothing: LabelSelector = Object.freeze([
  { op: 'in', key: 'none', values: new Set<string>() },
]);

export type SelectorParse = { ok: true; selector: LabelSelector } | { ok: false; problem: string };

export function parseLabelSelector(text: string): SelectorParse {
  const requirements: Requirement[] = [];
  for (const part of splitSelector(text)) {
    let m: RegExpExecArray | null;
    if ((m = EXISTS.exec(part))) requirements.push({ op: m[1] === '!' ? 'absent' : 'exists', key: m[2]! });
    else if ((m = EQUALS.exec(part)))
      requirements.push({ op: m[2] === '!=' ? 'notin' : 'in', key: m[1]!, values: new Set([m[3]!]) });
    else if ((m = SET.exec(part))) {
      const values = m[3]!.split(',').map((v) => v.trim());
      const bad = values.find((v) => !VALUE_ONLY.test(v));
      if (bad !== undefined)
        return { ok: false, problem: `${JSON.stringify(part)}: ${JSON.stringify(bad)} is not a label value` };
      requirements.push({ op: m[2] as 'in' | 'notin', key: m[1]!, values: new Set(values) });
    } else
      return {
        ok: false,
        problem: `${JSON.stringify(part)} is not a requirement (key, !key, key=value, key!=value, key in (a,b), key notin (a,b))`,
      };
  }
  if (requirements.length === 0) return { ok: false, problem: 'the selector is empty' };
  return { ok: true, selector: requirements };
}

export function matchesSelector(
  selector: LabelSelector,
  labels: Readonly<Record<string, string>> | undefined,
): boolean {
  return selector.every((r) => {
    const has = labels !== undefined && Object.hasOwn(labels, r.key) && typeof labels[r.key] === 'string';
    switch (r.op) {
      case 'exists':
        return has;
      case 'absent':
        return !has;
      case 'in':
        return has && r.values.has(labels[r.key]!);
      case 'notin':
        return !has || !r.values.has(labels[r.key]!);
    }
  });
}

/**
 * Splits a label selector in kubectl syntax into its requirements (`app=web, tier in (a,b), !x`
 * → `app=web`, `tier in (a,b)`, `!x`): the commas that separate requirements are those outside
 * parentheses. `ctopo explain` asks the API server about each requirement alone to say which one
 * a pod fails, so the selector's meaning stays the server's; parseLabelSelector reads each one.
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
