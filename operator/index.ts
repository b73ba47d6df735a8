/**
 * The package's library surface, for Node.js applications and tools:
 * - watchPeers: follow one ClusterTopology's peers with the agent's semantics;
 * - resolvePeers: the naming engine (what the operator would compute for some pods);
 * - analyzeFailureDomains: the quorum analysis of a layout;
 * - the resource's types.
 */
export { watchPeers, type PeerMember, type PeerWatch, type WatchPeersOptions } from './agent/watch-peers.js';
export {
  resolvePeers,
  type Peer,
  type Excluded,
  type ResolveResult,
  type NamingSettings,
} from './naming/index.js';
export { analyzeFailureDomains, type FailureDomainAnalysis, type Member } from './failure-domains/index.js';
export type { ClusterTopologySpec, ClusterTopologyStatus } from './api/types.generated.js';
export { API_VERSION, GROUP, KIND, PLURAL, VERSION } from './api/schema.js';
