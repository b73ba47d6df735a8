/**
 * Naming: from pods to Erlang-style node names `name@host`.
 *
 * - resolvePeers(pods, settings) → { peers, excluded }: the engine (resolve.ts has the spec);
 *   resolvePod + settlePeers are its two halves, for a cache that keeps verdicts, not pods.
 * - parsePodInput(text): pods from `kubectl get pods -o json|yaml` output, for `ctopo resolve -f`.
 * - compileJsonPath / selectValue: the checked JSONPath subset naming annotations may use.
 * - checkNodeName and friends: the node-name grammar every peer satisfies.
 */
export {
  DEFAULT_HOSTNAME_ANNOTATION,
  DEFAULT_NODENAME_ANNOTATION,
  DEFAULT_NAMING_SETTINGS,
  DEFAULT_CLUSTER_DOMAIN,
  DEFAULT_MEMBERSHIP,
  EXCLUSION_REASONS,
  HOST_FALLBACKS,
  MEMBERSHIP_PEERS,
  MEMBERSHIP_TERMINATING,
  type ExclusionReason,
  type HostFallback,
  type MembershipSettings,
  type ResolveSettings,
  type Excluded,
  type HostSource,
  type NameSource,
  type NamingSettings,
  type Peer,
  type PodVerdict,
  type ResolveResult,
} from './types.js';
export { resolvePeers, resolvePod, settlePeers } from './resolve.js';
export { parsePodInput, type PodInput } from './pod-input.js';
export { dashedIP } from './fallbacks.js';
export {
  compileJsonPath,
  selectValue,
  classifyMatches,
  jsonPathCacheStats,
  clearJsonPathCache,
  MAX_EXPRESSION_BYTES,
  COMPILE_CACHE_CAPACITY,
  type Compilation,
  type CompiledJsonPath,
  type Selection,
} from './jsonpath.js';
export {
  checkNodeName,
  checkNamePart,
  checkHostPart,
  isValidNodeName,
  isDnsName,
  MAX_NODE_NAME_LENGTH,
  type NodeNameCheck,
} from './node-name.js';
