/**
 * The single definition of the ClusterTopology API. From it come:
 * - the CRD (`crds/clustertopologies.cluster.netzlive.io.yaml`, by `npm run generate`),
 * - the TypeScript types (`types.generated.ts`, same generator),
 * - the ajv validators used by the operator and the CLI (`validate.ts`).
 * A unit test fails when the checked-in CRD or types differ from what this file generates.
 *
 * The schema is structural (every field typed) and strict: `kubectl apply` refuses unknown
 * fields, and each bad value is refused by the API server with a message naming the field.
 */

import { defaultFailureDomainLevels } from './failure-domain-settings.js';

export const GROUP = 'cluster.netzlive.io';
export const VERSION = 'v1alpha1';
export const KIND = 'ClusterTopology';
export const PLURAL = 'clustertopologies';
export const API_VERSION = `${GROUP}/${VERSION}`;
/** On each generated CRD: the release it comes from (`ctopo check` compares it with its own). */
export const RELEASE_ANNOTATION = `${GROUP}/release`;

export const DEFAULT_HOSTNAME_ANNOTATION = 'netzlive/hostname-naming-jsonpath';
export const DEFAULT_NODENAME_ANNOTATION = 'netzlive/nodename-naming-jsonpath';
export const DEFAULT_POLLING_INTERVAL = '10s';
export const DEFAULT_CLUSTER_DOMAIN = 'cluster.local';
/** Where the host part comes from when a pod has no hostname annotation. */
export const HOST_FALLBACKS = ['PodIP', 'PodDNS', 'Hostname'] as const;
/** Which running pods are peers. */
export const MEMBERSHIP_PEERS = ['Running', 'Ready'] as const;
/** What becomes of a terminating pod. */
export const MEMBERSHIP_TERMINATING = ['Keep', 'Drop'] as const;
export const DEFAULT_FAILURE_DOMAIN_LEVELS = defaultFailureDomainLevels.map((l) => ({ ...l }));
/** The pod annotation that gives a voter its number of votes (an integer >= 0). */
export const VOTES_ANNOTATION = 'netzlive/votes';

/** Why a selected pod is not a peer; every excluded pod carries exactly one. The names are API. */
export const EXCLUSION_REASONS = [
  'NoPodIP',
  'PodFinished',
  'InvalidJSONPath',
  'NoMatch',
  'AmbiguousMatch',
  'NotAString',
  'InvalidNodeName',
  'DuplicateNodeName',
  'ExpressionTooCostly',
  'NoNamespace',
  'NoSubdomain',
  'PodTerminating',
  'PodNotReady',
] as const;

/**
 * Why a member is not connected to a listed peer, in its report (ClusterTopologyMember) and in
 * the mesh's broken links. The names are API (docs/status-protocol.md §8).
 */
export const LINK_REASONS = ['Refused', 'Timeout', 'NodeDown', 'NotTried', 'Invalid'] as const;
/** Lists in the mesh aggregate and in a member report hold at most this many entries, then a count. */
export const MESH_LIST_CAP = 20;

// A Go duration as Kubernetes writes them (`10s`, `1m30s`, `500ms`).
const DURATION_PATTERN = '^([0-9]+(\\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$';
// A label key / annotation key: optional DNS-subdomain prefix, then a name of at most 63 characters.
const QUALIFIED_NAME_PATTERN =
  '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$';
const DNS_LABEL_PATTERN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$';

export type JSONSchema = {
  type?: 'object' | 'array' | 'string' | 'integer' | 'boolean' | 'number';
  description?: string;
  properties?: Record<string, JSONSchema>;
  required?: string[];
  items?: JSONSchema;
  enum?: readonly (string | number)[];
  default?: unknown;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  maxItems?: number;
  minItems?: number;
  format?: string;
  nullable?: boolean;
  'x-kubernetes-validations'?: { rule: string; message: string; messageExpression?: string }[];
  'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  'x-kubernetes-list-map-keys'?: string[];
  /** Generator-only: the TypeScript type name to emit for this object (stripped from the CRD). */
  'x-ts-type'?: string;
};

export const str = (description: string, extra: Partial<JSONSchema> = {}): JSONSchema => ({
  type: 'string',
  description,
  ...extra,
});
export const int = (description: string, extra: Partial<JSONSchema> = {}): JSONSchema => ({
  type: 'integer',
  description,
  ...extra,
});

const failureDomainLevel: JSONSchema = {
  type: 'object',
  'x-ts-type': 'FailureDomainLevel',
  description: 'One level of failure domains: a Node label key whose values name the domains.',
  required: ['key'],
  properties: {
    key: str('Node label key, e.g. topology.kubernetes.io/zone.', {
      pattern: QUALIFIED_NAME_PATTERN,
      maxLength: 317,
    }),
    within: str(
      'Key of another level that qualifies this one: domains are named parent/child ("zone-a/rack-1"), so a child name reused under two parents is two domains.',
      { pattern: QUALIFIED_NAME_PATTERN, maxLength: 317 },
    ),
    transport: {
      type: 'boolean',
      description:
        'A shared link or concentrator (a VPN, an inter-site line): the label names the link a Node reaches the other sites through; a Node without the label depends on no such link. Its loss cuts the members behind it off from the rest; it is transport, never a vote.',
    },
  },
};

const votersSpec: JSONSchema = {
  type: 'object',
  'x-ts-type': 'VotersSpec',
  description: `Which peers vote. Default: every peer, one vote each. A voter's votes come from its pod annotation ${VOTES_ANNOTATION} (an integer >= 0; 0 makes it a learner), default 1.`,
  properties: {
    selector: str(
      'Label selector (kubectl syntax) of the peers that vote. Default: every peer. Peers matching neither this nor learnerSelector are not members of the quorum.',
      { minLength: 1, maxLength: 4096 },
    ),
    learnerSelector: str(
      'Label selector of the peers that replicate but do not vote (learners, observers): listed where they run, never counted. A peer matching both selectors is a learner.',
      { minLength: 1, maxLength: 4096 },
    ),
  },
};

export const specSchema: JSONSchema = {
  type: 'object',
  'x-ts-type': 'ClusterTopologySpec',
  description: 'Which pods form one cluster, and how their node names are computed.',
  required: ['selector'],
  properties: {
    selector: str(
      'Label selector of the pods that form the cluster, in kubectl syntax; set-based expressions work too (e.g. "netzlive/pod-type=cluster-service", "app in (web,api),tier!=cache").',
      {
        minLength: 1,
        maxLength: 4096,
        'x-kubernetes-validations': [
          { rule: "self.matches('\\\\S')", message: 'selector must not be blank' },
        ],
      },
    ),
    namespace: str(
      "Namespace of the pods. Default: this resource's own namespace. Another namespace is refused unless the operator is configured to allow it.",
      { pattern: DNS_LABEL_PATTERN, maxLength: 63 },
    ),
    pollingInterval: str(
      'How often the pods are re-listed at the latest (a Go duration, at least 1s). Changes seen on the watch arrive sooner.',
      {
        default: DEFAULT_POLLING_INTERVAL,
        pattern: DURATION_PATTERN,
        maxLength: 32,
        'x-kubernetes-validations': [
          // The guard leaves a malformed value to the pattern's message instead of a CEL conversion error.
          {
            rule: `!self.matches('${DURATION_PATTERN.replace(/\\/g, '\\\\')}') || duration(self) >= duration('1s')`,
            message: 'pollingInterval must be at least 1s',
          },
        ],
      },
    ),
    mode: str('Discovery mode. Only "auto" exists.', { enum: ['auto'], default: 'auto' }),
    ipLookupMode: str('Where addresses come from. Only "pods" exists.', { enum: ['pods'], default: 'pods' }),
    naming: {
      type: 'object',
      'x-ts-type': 'NamingSpec',
      description:
        "Which pod annotations hold the JSONPath expressions computing each pod's node name (name@host).",
      default: {},
      properties: {
        hostnameAnnotation: str(
          'Annotation whose value is a JSONPath evaluated against the pod; its single match is the host part. Pods without it use hostFallback (status.podIP by default).',
          { default: DEFAULT_HOSTNAME_ANNOTATION, pattern: QUALIFIED_NAME_PATTERN, maxLength: 317 },
        ),
        nodenameAnnotation: str(
          'Annotation whose value is a JSONPath evaluated against the pod; its single match is the name part. Pods without it use basename, or metadata.name when there is none.',
          { default: DEFAULT_NODENAME_ANNOTATION, pattern: QUALIFIED_NAME_PATTERN, maxLength: 317 },
        ),
        basename: str(
          "A fixed name part for pods without the nodename annotation (libcluster's kubernetes_node_basename): every such pod is <basename>@<host>. Without it, the pod name.",
          { pattern: '^[A-Za-z0-9_-]+$', minLength: 1, maxLength: 200 },
        ),
        hostFallback: str(
          'The host part of pods without the hostname annotation: PodIP (status.podIP), PodDNS (the pod A record, 10-1-2-3.<namespace>.pod.<clusterDomain>) or Hostname (<spec.hostname or pod name>.<spec.subdomain>.<namespace>.svc.<clusterDomain>: StatefulSet names, stable across restarts; a pod without spec.subdomain is excluded).',
          { enum: HOST_FALLBACKS, default: 'PodIP' },
        ),
        clusterDomain: str('The cluster DNS domain used by the PodDNS and Hostname fallbacks.', {
          default: DEFAULT_CLUSTER_DOMAIN,
          pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$',
          maxLength: 253,
        }),
      },
    },
    membership: {
      type: 'object',
      'x-ts-type': 'MembershipSpec',
      description: 'Which selected pods are peers, by their state.',
      default: {},
      properties: {
        peers: str(
          "Running (every running pod with an IP is a peer) or Ready (only pods whose Ready condition is True, as libcluster's endpoints lookup; others are excluded as PodNotReady). Beware: with Ready, an application whose readiness waits for its cluster never becomes ready.",
          { enum: MEMBERSHIP_PEERS, default: 'Running' },
        ),
        terminating: str(
          'Keep (a terminating pod stays a peer, flagged terminating, until it is gone) or Drop (it is excluded as PodTerminating at once).',
          { enum: MEMBERSHIP_TERMINATING, default: 'Keep' },
        ),
      },
    },
    onForbidden: str(
      'What the peers become when listing pods is refused (401/403): Retain keeps the last known list; Disconnect empties it, so every agent disconnects (the behaviour of libcluster-style discovery).',
      { enum: ['Retain', 'Disconnect'], default: 'Retain' },
    ),
    failureDomains: {
      type: 'object',
      'x-ts-type': 'FailureDomainsSpec',
      description:
        'Failure-domain (quorum) analysis of the peers, by the labels of the Nodes their pods run on.',
      default: {},
      properties: {
        analysis: str(
          'On: analyse the voters. Off: this cluster has no quorum (Phoenix, Horde, a cache): no analysis, no QuorumAtRisk warning; the Quorum column reads Off.',
          { enum: ['On', 'Off'], default: 'On' },
        ),
        voters: votersSpec,
        levels: {
          type: 'array',
          description:
            'Levels of failure domains, outermost first. Default: region, zone, hostname (the well-known Node labels).',
          items: failureDomainLevel,
          minItems: 1,
          maxItems: 10,
          default: DEFAULT_FAILURE_DOMAIN_LEVELS,
          'x-kubernetes-validations': [
            {
              rule: 'self.all(l, !has(l.within) || self.exists(p, p.key == l.within && p.key != l.key))',
              message: 'within must name the key of another level',
            },
            {
              rule: 'self.all(l, !(has(l.transport) && l.transport) || (!has(l.within) && !self.exists(c, has(c.within) && c.within == l.key)))',
              message: 'a transport level stands alone: no within on it, and no level within it',
            },
            { rule: 'self.all(l, self.exists_one(m, m.key == l.key))', message: 'level keys must be unique' },
          ],
        },
        partitionLevel: str(
          'Level whose domains are the sides of a network partition. Default: the first judged level whose voters sit in two or more domains. A name that is not a level is refused by the operator (InvalidSpec), not by kubectl apply.',
          {
            pattern: QUALIFIED_NAME_PATTERN,
            maxLength: 317,
          },
        ),
        expectedVoters: int(
          'Voters the application has when it knows more members than there are pods; the missing ones count as unknown placement, not ready.',
          {
            minimum: 1,
            maximum: 10000,
          },
        ),
      },
    },
  },
};

const condition: JSONSchema = {
  type: 'object',
  'x-ts-type': 'Condition',
  description: 'A condition in the Kubernetes convention.',
  required: ['type', 'status', 'lastTransitionTime', 'reason', 'message'],
  properties: {
    type: str('Ready, Degraded, QuorumAtRisk, ReadinessDeadlockRisk or Meshed.', { maxLength: 316 }),
    status: str('True, False or Unknown.', { enum: ['True', 'False', 'Unknown'] }),
    observedGeneration: int('The .metadata.generation this condition was computed from.', { minimum: 0 }),
    lastTransitionTime: str('When status last changed.', { format: 'date-time' }),
    reason: str('CamelCase reason.', { maxLength: 1024 }),
    message: str('What happened, for a person.', { maxLength: 32768 }),
  },
};

/** Above this many peers a status lists each with the fields readers use only (docs/status-protocol.md §2). */
export const LIGHT_PEERS_ABOVE = 1000;

const peer: JSONSchema = {
  type: 'object',
  'x-ts-type': 'Peer',
  required: ['nodeName', 'pod', 'uid'],
  description: `A pod that is a member of the cluster. Above ${LIGHT_PEERS_ABOVE} peers only what readers use is written (nodeName, pod, uid, terminating, ready, serving), and terminating, ready and serving only where they differ from status.peerDefaults: the status of a large topology stays small enough to write and to send to every reader.`,
  properties: {
    nodeName: str('The node name agents connect to (name@host).'),
    pod: str('Pod name.'),
    uid: str('Pod UID: peers are keyed by it, so a reused IP never aliases another pod.'),
    podIP: str(
      `status.podIP (may be empty when the host came from an annotation). Left out above ${LIGHT_PEERS_ABOVE} peers.`,
    ),
    node: str(
      `The Kubernetes Node the pod runs on (empty while unscheduled). Left out above ${LIGHT_PEERS_ABOVE} peers.`,
    ),
    hostSource: str(`Where the host part came from. Left out above ${LIGHT_PEERS_ABOVE} peers.`, {
      enum: ['Annotation', ...HOST_FALLBACKS],
    }),
    nameSource: str(`Where the name part came from. Left out above ${LIGHT_PEERS_ABOVE} peers.`, {
      enum: ['Annotation', 'PodName', 'Basename'],
    }),
    terminating: {
      type: 'boolean',
      description:
        'The pod is being deleted (EndpointSlice terminating); with membership.terminating Keep it stays a peer until it is gone. Absent: status.peerDefaults.terminating.',
    },
    ready: {
      type: 'boolean',
      description:
        'EndpointSlice ready: the Ready condition is True and the pod is not terminating. Absent: status.peerDefaults.ready, or unknown without it.',
    },
    serving: {
      type: 'boolean',
      description:
        'EndpointSlice serving: the Ready condition is True, terminating or not. Absent: status.peerDefaults.serving, or unknown without it.',
    },
  },
};

const excluded: JSONSchema = {
  type: 'object',
  'x-ts-type': 'ExcludedPod',
  required: ['pod', 'reason', 'message'],
  description: 'A selected pod that is not a peer, and why.',
  properties: {
    pod: str('Pod name.'),
    reason: str('Why it is not a peer.', { enum: EXCLUSION_REASONS }),
    message: str('What to do about it.'),
  },
};

const verdict = ['Survives', 'AtRisk', 'Breaks'] as const;
const canCommit = (description: string): JSONSchema => str(description, { enum: ['Yes', 'No', 'Maybe'] });
const partitionResult = (description: string): JSONSchema =>
  str(description, { enum: ['MajoritySide', 'NoMajority', 'Unknown'] });
const partitionSide: JSONSchema = {
  type: 'object',
  'x-ts-type': 'PartitionSide',
  required: ['domain', 'votingWeight', 'canCommit'],
  properties: {
    domain: str('Domain.'),
    votingWeight: int('Votes on this side.'),
    canCommit: canCommit('Whether writes still commit on this side.'),
  },
};
const failureDomainsStatus: JSONSchema = {
  type: 'object',
  'x-ts-type': 'FailureDomainsStatus',
  description:
    'Which single failure would cost the peers their majority (quorum), per failure domain. With spec.failureDomains.analysis Off only verdict is set (Off); otherwise every count, levels, domains and warnings are.',
  required: ['verdict'],
  properties: {
    voters: int('Voting members.'),
    votingWeight: int('W: total votes.'),
    learners: int('Members without a vote.'),
    quorum: int('Q = floor(W/2)+1.'),
    faultTolerance: int('f = W - Q: votes that may be lost.'),
    unknownPlacementWeight: int(
      'Votes whose placement is unknown at one level or more (no Node label, unscheduled, Node gone).',
    ),
    missingVoters: int(
      'Voters that expectedVoters adds beyond the peers found: unknown placement, not ready.',
    ),
    readyVotingWeight: int('Votes of ready members.'),
    currentFaultTolerance: int('Ready votes minus Q (negative: quorum is lost now).'),
    ignoredPeers: int(
      'Peers outside spec.failureDomains.voters (neither selector matches): not members of the quorum.',
    ),
    verdict: str(
      'Breaks if any single loss breaks quorum, AtRisk if one may, else Survives; NoVoters when W = 0; Off when the analysis is off.',
      {
        enum: [...verdict, 'NoVoters', 'Off'],
      },
    ),
    levels: {
      type: 'array',
      items: {
        type: 'object',
        'x-ts-type': 'FailureDomainLevelStatus',
        required: [
          'key',
          'state',
          'domains',
          'survivesAnySingle',
          'maxSimultaneousFailures',
          'unknownPlacementWeight',
          'unknownPlacementMembers',
        ],
        properties: {
          key: str('Level (Node label key).'),
          within: str('The level this one is qualified by.'),
          transport: {
            type: 'boolean',
            description: 'A level of shared links: its losses cut, never remove votes.',
          },
          state: str(
            "Judged: counts toward the verdict. NotLabelled: no voter's Node carries the label; not judged. SharedByAll: with the default levels, every placed voter shares one domain of it (sharedDomain) above the first level that separates them; not judged.",
            { enum: ['Judged', 'NotLabelled', 'SharedByAll'] },
          ),
          sharedDomain: str('The one domain every placed voter shares (state SharedByAll).'),
          domains: int('Domains holding members.'),
          survivesAnySingle: str('Whether every single domain of this level may be lost.', {
            enum: ['True', 'False', 'Unknown'],
          }),
          maxSimultaneousFailures: int(
            'Largest number of domains of this level that may be lost at once, worst case (a transport level: 1 if every single link may be lost, else 0).',
          ),
          unknownPlacementWeight: int('Votes whose placement at this level is unknown.'),
          unknownPlacementMembers: {
            type: 'array',
            items: str('Member.'),
            description: 'Those members (at most 20).',
          },
          unknownPlacementMembersNotListed: int('Members of unknown placement left out of the list.'),
          advisory: str('What to change.'),
        },
      },
    },
    domains: {
      type: 'array',
      items: {
        type: 'object',
        'x-ts-type': 'FailureDomainStatus',
        required: [
          'level',
          'domain',
          'voters',
          'votingWeight',
          'learners',
          'votesLeftIfLost',
          'verdict',
          'verdictNow',
          'members',
        ],
        properties: {
          level: str('Level key.'),
          domain: str('Domain name (parent/child with within).'),
          voters: int('Members inside.'),
          votingWeight: int('Votes inside.'),
          learners: int('Members without a vote inside.'),
          votesLeftIfLost: int('Votes left if this domain disappears.'),
          mayAlsoHold: int(
            "Votes of unknown placement that could be inside, when fewer than the level's (a nested level whose known labels rule some out).",
          ),
          verdict: str('With every member ready.', { enum: verdict }),
          verdictNow: str('Counting members not ready now as lost.', { enum: verdict }),
          members: { type: 'array', items: str('Member.'), description: 'Members inside (at most 20).' },
          membersNotListed: int('Members left out of the list.'),
        },
      },
    },
    partition: {
      type: 'object',
      'x-ts-type': 'PartitionStatus',
      required: ['level', 'result', 'sides'],
      properties: {
        level: str('Level whose domains are the sides.'),
        result: partitionResult(
          'With every domain cut off from every other: whether one side still commits.',
        ),
        sides: { type: 'array', items: partitionSide },
        isolations: {
          type: 'array',
          description: 'With three or more sides: each domain cut off from the rest, which stay connected.',
          items: {
            type: 'object',
            'x-ts-type': 'PartitionIsolation',
            required: ['domain', 'votingWeight', 'canCommit', 'restVotingWeight', 'restCanCommit'],
            properties: {
              domain: str('The domain cut off.'),
              votingWeight: int('Votes inside it.'),
              canCommit: canCommit('Whether writes commit inside it.'),
              restVotingWeight: int('Votes placed in the rest.'),
              restCanCommit: canCommit('Whether writes commit in the rest.'),
            },
          },
        },
      },
    },
    links: {
      type: 'array',
      description: 'Per link of a transport level: what its loss alone leaves on each side.',
      items: {
        type: 'object',
        'x-ts-type': 'LinkStatus',
        required: [
          'level',
          'link',
          'members',
          'cutOff',
          'restVotingWeight',
          'restCanCommit',
          'unknownPlacementWeight',
          'result',
          'verdict',
        ],
        properties: {
          level: str('The transport level.'),
          link: str('The link (the label value).'),
          members: { type: 'array', items: str('Member.'), description: 'Members behind it (at most 20).' },
          membersNotListed: int('Members left out of the list.'),
          cutOff: {
            type: 'array',
            description: 'The groups cut off when it is lost: the members behind it, one group per site.',
            items: partitionSide,
          },
          restVotingWeight: int('Votes not behind it: they stay connected.'),
          restCanCommit: canCommit('Whether writes commit among them.'),
          unknownPlacementWeight: int('Votes that may or may not be behind it, or whose site is unknown.'),
          result: partitionResult('Whether one side still commits.'),
          verdict: str('Survives if one side still commits, Breaks if none can, else AtRisk.', {
            enum: verdict,
          }),
        },
      },
    },
    warnings: { type: 'array', items: str('Warning.') },
  },
};

/** Why a listed member's view is not part of the mesh aggregate (docs/status-protocol.md §8). */
export const UNREPORTED_REASONS = ['NoReport', 'OtherList', 'NotObserved'] as const;

const omitted = (what: string): JSONSchema =>
  int(`${what} left out of the list (it holds at most ${MESH_LIST_CAP}).`);
const podList = (description: string): JSONSchema => ({
  type: 'array',
  description: `${description} (at most ${MESH_LIST_CAP}).`,
  items: str('Pod name.'),
});

const meshStatus: JSONSchema = {
  type: 'object',
  'x-ts-type': 'MeshStatus',
  description:
    "What formed, from the members' own reports (ClusterTopologyMember objects): who reports, who is connected to whom, the groups, the broken links. Readers ignore it; the operator writes it only when it changes, at most once per 15 s.",
  required: ['members', 'reporting', 'fullyConnected', 'largestGroup', 'summary'],
  properties: {
    members: int('Listed members (status.peers).'),
    reporting: int(
      'Listed members whose report is current: not stale, of the current peer list, and observed by the member itself.',
    ),
    fullyConnected: int('Members whose current report says they are connected to every other listed member.'),
    largestGroup: int(
      'Members in the largest group connected to each other: a connected component of the links confirmed by the reports of both ends.',
    ),
    summary: str(
      'largestGroup/members, the MESH column: 3/3 whole, 2/3 one member cut off (a wrong cookie), 2/4 a split into 2 + 2; ?/N while no report is current (none of the current list, or all stale). Absent while no member has a report.',
    ),
    groups: {
      type: 'array',
      description: `When the reporting members fall into more than one group: the groups, largest first (at most ${MESH_LIST_CAP}).`,
      items: {
        type: 'object',
        'x-ts-type': 'MeshGroup',
        required: ['size', 'members'],
        properties: {
          size: int('Members in the group.'),
          members: podList('Its members, sorted'),
          membersOmitted: omitted('Members'),
        },
      },
    },
    groupsOmitted: omitted('Groups'),
    brokenLinks: {
      type: 'array',
      description: `Links a current report says are not connected, sorted by from and to (at most ${MESH_LIST_CAP}).`,
      items: {
        type: 'object',
        'x-ts-type': 'BrokenLink',
        required: ['from', 'to', 'reason'],
        properties: {
          from: str('The member (pod) that reports it.'),
          to: str('The member (pod) it is not connected to.'),
          reason: str("The reporting member's last reason.", { enum: LINK_REASONS }),
        },
      },
    },
    brokenLinksOmitted: omitted('Broken links'),
    selfCheckFailures: {
      type: 'array',
      description: `Members that run under another name than the one listed for their pod (at most ${MESH_LIST_CAP}).`,
      items: {
        type: 'object',
        'x-ts-type': 'SelfCheckFailure',
        required: ['pod', 'expected', 'actual'],
        properties: {
          pod: str('The member (pod).'),
          expected: str('The name listed for it (status.peers[].nodeName).'),
          actual: str('The name its node runs as, by its report.'),
        },
      },
    },
    selfCheckFailuresOmitted: omitted('Self-check failures'),
    inTrouble: {
      type: 'array',
      description: `Members whose current report names a trouble (at most ${MESH_LIST_CAP}).`,
      items: {
        type: 'object',
        'x-ts-type': 'MemberTrouble',
        required: ['pod', 'cause', 'since'],
        properties: {
          pod: str('The member (pod).'),
          cause: str('Its trouble (NoStatusYet, Forbidden, ApiUnreachable, ObjectGone, StatusStale, …).'),
          since: str('Since when.', { format: 'date-time' }),
        },
      },
    },
    inTroubleOmitted: omitted('Members in trouble'),
    stale: {
      type: 'array',
      description: `Members whose last report is older than the renewal limit (at most ${MESH_LIST_CAP}): silent, frozen or gone.`,
      items: {
        type: 'object',
        'x-ts-type': 'StaleReport',
        required: ['pod', 'reportedAt'],
        properties: {
          pod: str('The member (pod).'),
          reportedAt: str('When it last reported.', { format: 'date-time' }),
        },
      },
    },
    staleOmitted: omitted('Stale reports'),
    unreported: {
      type: 'array',
      description: `Members without a current view, other than stale ones (at most ${MESH_LIST_CAP}).`,
      items: {
        type: 'object',
        'x-ts-type': 'UnreportedMember',
        required: ['pod', 'reason'],
        properties: {
          pod: str('The member (pod).'),
          reason: str(
            'NoReport: none for this pod; OtherList: its report reflects another peer list (it has not caught up yet); NotObserved: its connector cannot see connections (exec, file).',
            { enum: UNREPORTED_REASONS },
          ),
        },
      },
    },
    unreportedOmitted: omitted('Members without a current view'),
  },
};

export const statusSchema: JSONSchema = {
  type: 'object',
  'x-ts-type': 'ClusterTopologyStatus',
  description:
    'What the operator sees: the peers, the pods left out and why, the last API response and the failure-domain analysis.',
  properties: {
    observedGeneration: int('The .metadata.generation this status was computed from.'),
    peerCount: int('Number of peers.'),
    excludedCount: int('Number of excluded pods.'),
    peers: { type: 'array', items: peer, description: 'The resolved peers, sorted by node name.' },
    peerDefaults: {
      type: 'object',
      'x-ts-type': 'PeerDefaults',
      description: `Above ${LIGHT_PEERS_ABOVE} peers: the value of terminating, ready and serving for every entry of peers that leaves it out (each entry writes them only where they differ). Absent at ${LIGHT_PEERS_ABOVE} peers or fewer, where every entry writes all three.`,
      properties: {
        terminating: { type: 'boolean', description: 'An entry without terminating is this.' },
        ready: { type: 'boolean', description: 'An entry without ready is this.' },
        serving: { type: 'boolean', description: 'An entry without serving is this.' },
      },
    },
    excluded: {
      type: 'array',
      items: excluded,
      description: 'Selected pods that are not peers, sorted by pod name.',
    },
    lastResponse: {
      type: 'object',
      'x-ts-type': 'LastResponse',
      description: 'The outcome of the last list of pods.',
      required: ['code', 'reason', 'since'],
      properties: {
        code: str('HTTP status code ("200", "403", …) or "TransportError".', {
          pattern: '^([1-5][0-9][0-9]|TransportError)$',
        }),
        reason: str('Reason (OK, Forbidden, ServiceUnavailable, TransportError, …).'),
        message: str('What the API server or the transport said.'),
        since: str('When this outcome began.', { format: 'date-time' }),
      },
    },
    lastFailure: {
      type: 'object',
      'x-ts-type': 'LastFailure',
      description:
        'The latest time the list of pods failed: the first failed answer of that run of failures, when it began and when a list succeeded again. Kept after recovery (until the next failure), so a failure that could not be written while it lasted — the API server itself was down — is still seen.',
      required: ['code', 'reason', 'since'],
      properties: {
        code: str('HTTP status code ("403", "503", …) or "TransportError" of the first failed answer.', {
          pattern: '^([1-5][0-9][0-9]|TransportError)$',
        }),
        reason: str('Reason (Forbidden, ServiceUnavailable, TransportError, …).'),
        message: str('What the API server or the transport said.'),
        since: str('When the lists began to fail.', { format: 'date-time' }),
        until: str('When a list succeeded again; absent while they still fail.', { format: 'date-time' }),
      },
    },
    lastPollTime: str(
      'The poll that produced the current content: the status is written only when it changes, so this is not a liveness signal (the liveness Lease is).',
      { format: 'date-time' },
    ),
    conditions: {
      type: 'array',
      description:
        'Ready (the peers are current: the last list succeeded and the spec is valid), Degraded (the last list failed or the spec is refused; reason and message say why), QuorumAtRisk (a single failure-domain loss would cost the voters their majority) and Meshed (every listed member reports a current view connected to every other; False names the first mismatch, split or broken link; Unknown while reports are missing).',
      items: condition,
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['type'],
    },
    failureDomains: failureDomainsStatus,
    mesh: meshStatus,
  },
};

export const printerColumns = [
  { name: 'Peers', type: 'integer', jsonPath: '.status.peerCount', description: 'Resolved peers' },
  {
    name: 'Excluded',
    type: 'integer',
    jsonPath: '.status.excludedCount',
    description: 'Selected pods that are not peers',
  },
  {
    name: 'API',
    type: 'string',
    jsonPath: '.status.lastResponse.code',
    description: 'Last Kubernetes API response to the list of pods',
  },
  {
    name: 'Ready',
    type: 'string',
    jsonPath: '.status.conditions[?(@.type=="Ready")].status',
    description: 'Whether the peers are current',
  },
  {
    name: 'Reason',
    type: 'string',
    jsonPath: '.status.conditions[?(@.type=="Ready")].reason',
    description: 'Why the topology is (not) ready; kubectl describe shows the message',
  },
  {
    name: 'Quorum',
    type: 'string',
    jsonPath: '.status.failureDomains.verdict',
    description: 'Failure-domain verdict',
  },
  {
    name: 'Mesh',
    type: 'string',
    jsonPath: '.status.mesh.summary',
    description:
      "Members in the largest group connected to each other, by the members' reports, over the listed members",
  },
  { name: 'Last Poll', type: 'date', jsonPath: '.status.lastPollTime' },
  {
    name: 'Last Failure',
    type: 'string',
    jsonPath: '.status.lastFailure.code',
    description: 'The first answer of the latest run of failed lists of pods (kubectl describe shows when)',
    priority: 1,
  },
  { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
];

/** A kind's whole schema, as its CRD's openAPIV3Schema: the usual top-level fields, spec and status. */
export const kindSchema = (description: string, spec: JSONSchema, status: JSONSchema): JSONSchema => ({
  type: 'object',
  description,
  required: ['spec'],
  properties: {
    apiVersion: { type: 'string' },
    kind: { type: 'string' },
    metadata: { type: 'object' },
    spec,
    status,
  },
});

export const clusterTopologySchema: JSONSchema = kindSchema(
  'ClusterTopology: which pods form one cluster of distributed nodes (Erlang/Elixir first); its status holds the peers that agents connect.',
  specSchema,
  statusSchema,
);
