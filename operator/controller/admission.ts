import { validateSpec, type ResolvedSpec } from '../api/validate.js';

/**
 * Whether a topology may be served, and if so which namespace's pods it lists: a pure
 * function of its spec, its own namespace and the operator's cross-namespace policy.
 * A refusal names the reason the status and its events carry.
 */

export type Admission =
  | { ok: true; spec: ResolvedSpec; target: string }
  | { ok: false; spec: ResolvedSpec | undefined; refusal: { reason: Refusal; message: string } };

export type Refusal = 'InvalidSpec' | 'CrossNamespaceDenied';

export function admit(
  spec: unknown,
  ownNamespace: string,
  allowTargetNamespaces: readonly string[],
): Admission {
  const check = validateSpec(spec);
  if (!check.ok)
    return {
      ok: false,
      spec: undefined,
      refusal: { reason: 'InvalidSpec', message: check.problems.join('; ') },
    };
  const target = check.spec.namespace ?? ownNamespace;
  if (!targetAllowed(ownNamespace, target, allowTargetNamespaces))
    return {
      ok: false,
      spec: check.spec,
      refusal: {
        reason: 'CrossNamespaceDenied',
        message: `spec.namespace "${target}" is not this topology's own namespace "${ownNamespace}", and the operator is not configured to allow it (--allow-target-namespaces). Publishing another namespace's pods would show them to whoever may read this object.`,
      },
    };
  return { ok: true, spec: check.spec, target };
}

function targetAllowed(own: string, target: string, allowed: readonly string[]): boolean {
  return target === own || allowed.includes('*') || allowed.includes(target);
}
