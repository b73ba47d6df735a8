/**
 * The definition of the ClusterTopologyMember API: one report per member pod, written by the
 * member's own reader (the OTP library, the sidecar, watchPeers), read by the operator and the
 * CLI. The same generator as the ClusterTopology's (`npm run generate`) makes its CRD
 * (`crds/clustertopologymembers.cluster.netzlive.io.yaml` and the chart's copy) and its types.
 *
 * `spec` is who reports (the admission policy checks it against the writer's token); `status`
 * is what it sees. The CRD has no status subresource, so one request — a server-side apply —
 * creates or replaces the whole report: a member's write costs one request, not two.
 */

import { GROUP, LINK_REASONS, MESH_LIST_CAP, int, kindSchema, str, type JSONSchema } from './schema.js';

export const MEMBER_KIND = 'ClusterTopologyMember';
export const MEMBER_PLURAL = 'clustertopologymembers';
export const MEMBER_SHORT_NAMES = ['ctm'];
/** The API server's full name of the resource, as RBAC and kubectl write it. */
export const MEMBER_RESOURCE = `${MEMBER_PLURAL}.${GROUP}`;

/** The self check: does the node run under the name the status lists for its pod? */
export const SELF_CHECK_RESULTS = ['Match', 'Mismatch', 'NotListed', 'Unknown'] as const;

// An object name (RFC 1123 subdomain), as the API server takes pod and ClusterTopology names.
const SUBDOMAIN_PATTERN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$';
const NODE_NAME_MAX = 255;

const nodeName = (description: string): JSONSchema =>
  str(description, { minLength: 1, maxLength: NODE_NAME_MAX });
const count = (description: string): JSONSchema => int(description, { minimum: 0, maximum: 1_000_000 });

export const memberSpecSchema: JSONSchema = {
  type: 'object',
  'x-ts-type': 'ClusterTopologyMemberSpec',
  description:
    'Who reports: the member pod and its ClusterTopology. The admission policy lets a pod write only a report whose pod is itself.',
  required: ['topology', 'pod'],
  properties: {
    topology: str('The ClusterTopology (in this namespace) the member belongs to.', {
      pattern: SUBDOMAIN_PATTERN,
      maxLength: 253,
    }),
    pod: {
      type: 'object',
      'x-ts-type': 'MemberPod',
      description: 'The member pod.',
      required: ['name', 'uid'],
      properties: {
        name: str('The pod name.', { pattern: SUBDOMAIN_PATTERN, maxLength: 253 }),
        uid: str('The pod uid (status.peers[].uid, or the downward API metadata.uid).', {
          minLength: 1,
          maxLength: 128,
        }),
      },
    },
  },
};

export const memberStatusSchema: JSONSchema = {
  type: 'object',
  'x-ts-type': 'ClusterTopologyMemberStatus',
  description:
    "The member's own view: its node name, the peer list it acts on, what it is connected to and what not, its self check and its trouble. Counts are of the listed peers other than the member itself.",
  required: [
    'reportedAt',
    'node',
    'listed',
    'connected',
    'invalid',
    'connectedOfListed',
    'notConnected',
    'selfCheck',
  ],
  properties: {
    reportedAt: str('When the member wrote this report (also renewed, unchanged, every 5 minutes).', {
      format: 'date-time',
    }),
    node: nodeName("The name the member's node runs as (node() in Erlang)."),
    observed: {
      type: 'boolean',
      default: true,
      description:
        'true: connected and notConnected are what the member sees (nodes()). false: the connector cannot see connections (exec, file); the counts say what it was given, and the mesh leaves its links unknown.',
    },
    topologyResourceVersion: str(
      'metadata.resourceVersion of the ClusterTopology the member had last read when it wrote this report (absent before its first read). For people; listedDigest says which list.',
      { maxLength: 64 },
    ),
    listedDigest: str(
      'Which peer list the view is of: CRC-32 (as zlib and erlang:crc32/1 compute it) of every status.peers[].nodeName, the member itself included, sorted in byte order, each followed by a line feed; 8 lowercase hex digits. Absent while the member has no list.',
      { pattern: '^[0-9a-f]{8}$' },
    ),
    connectedDigest: str(
      "Whom it is connected to, for members beyond the notConnected cap: the same CRC-32 as listedDigest over node plus every listed node name it is connected to. Two members with equal digests are connected to each other (each one's set holds the other), whatever the lists left out. Absent while the member has no list.",
      { pattern: '^[0-9a-f]{8}$' },
    ),
    listed: count('Listed peers other than the member itself.'),
    connected: count('Of those, the peers it is connected to.'),
    invalid: count('Of those, the peers whose names it refuses (never dialled); each is also not connected.'),
    connectedOfListed: str('connected/listed, e.g. 2/3: the CONNECTED column.', {
      pattern: '^[0-9]+/[0-9]+$',
      maxLength: 16,
    }),
    notConnected: {
      type: 'array',
      description: `The listed peers it is not connected to, with the last reason, sorted by node name in byte order: the first ${MESH_LIST_CAP} only.`,
      maxItems: MESH_LIST_CAP,
      'x-kubernetes-list-type': 'atomic',
      items: {
        type: 'object',
        'x-ts-type': 'NotConnectedPeer',
        required: ['node', 'reason'],
        properties: {
          node: nodeName('The listed node name.'),
          reason: str(
            'Refused (the connection attempt failed: a different cookie, nobody listening), Timeout (it timed out), NodeDown (it was connected and went down), NotTried (not tried yet), Invalid (the name is refused, never dialled).',
            { enum: LINK_REASONS },
          ),
        },
      },
    },
    notConnectedOmitted: count(
      `Listed peers it is not connected to beyond the first ${MESH_LIST_CAP} (their names sort after the last entry).`,
    ),
    selfCheck: {
      type: 'object',
      'x-ts-type': 'SelfCheck',
      description: 'Whether the node runs under the name the status lists for its pod.',
      required: ['result', 'actual'],
      properties: {
        result: str(
          'Match; Mismatch (it runs under another name: its peers dial a name nobody answers); NotListed (its pod is not in the list: excluded, or not listed yet); Unknown (no list yet).',
          { enum: SELF_CHECK_RESULTS },
        ),
        expected: nodeName('The name listed for its pod (absent unless listed).'),
        actual: nodeName('The name it runs as (the same as node).'),
      },
    },
    trouble: {
      type: 'object',
      'x-ts-type': 'ReaderTroubleReport',
      description:
        "The reader's trouble with the status (docs/status-protocol.md §5), absent when none. A reader in trouble keeps its connections.",
      required: ['cause', 'since'],
      properties: {
        cause: str(
          'NoStatusYet, Forbidden, ApiUnreachable, ObjectGone, StatusStale, or another CamelCase word.',
          {
            pattern: '^[A-Z][A-Za-z0-9]*$',
            maxLength: 64,
          },
        ),
        message: str('What the reader saw.', { maxLength: 1024 }),
        since: str('Since when.', { format: 'date-time' }),
      },
    },
  },
  'x-kubernetes-validations': [
    {
      rule: 'self.connected + size(self.notConnected) + (has(self.notConnectedOmitted) ? self.notConnectedOmitted : 0) == self.listed',
      message:
        'listed must equal connected plus the peers not connected (notConnected and notConnectedOmitted)',
    },
    {
      // string(int) has no size bound the cost estimator knows; split of a 16-character string has.
      rule: "int(self.connectedOfListed.split('/')[0]) == self.connected && int(self.connectedOfListed.split('/')[1]) == self.listed",
      message: 'connectedOfListed must be connected/listed',
    },
    {
      rule: `!has(self.notConnectedOmitted) || self.notConnectedOmitted == 0 || size(self.notConnected) == ${MESH_LIST_CAP}`,
      message: `notConnectedOmitted counts peers beyond the first ${MESH_LIST_CAP}: notConnected must then hold ${MESH_LIST_CAP}`,
    },
    {
      rule: 'self.invalid <= self.listed - self.connected',
      message: 'invalid peers are among those not connected',
    },
    { rule: 'self.selfCheck.actual == self.node', message: 'selfCheck.actual must be node' },
  ],
};

export const memberPrinterColumns = [
  { name: 'Node', type: 'string', jsonPath: '.status.node', description: 'The name the member runs as' },
  {
    name: 'Connected',
    type: 'string',
    jsonPath: '.status.connectedOfListed',
    description: 'Listed peers it is connected to, of the listed peers other than itself',
  },
  {
    name: 'Self Check',
    type: 'string',
    jsonPath: '.status.selfCheck.result',
    description: 'Whether it runs under the name listed for its pod',
  },
  { name: 'Trouble', type: 'string', jsonPath: '.status.trouble.cause', description: "Its reader's trouble" },
  { name: 'Reported', type: 'date', jsonPath: '.status.reportedAt', priority: 1 },
  { name: 'Topology', type: 'string', jsonPath: '.spec.topology', priority: 1 },
  { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
];

export const memberSchema: JSONSchema = {
  ...kindSchema(
    "ClusterTopologyMember: one member pod's report of what it sees — its node name, whom it is connected to and whom not, its self check and trouble. Named <pod>.<topology>, owned by the pod.",
    memberSpecSchema,
    memberStatusSchema,
  ),
  'x-kubernetes-validations': [
    {
      rule: "self.metadata.name == self.spec.pod.name + '.' + self.spec.topology",
      message: 'metadata.name must be <spec.pod.name>.<spec.topology>',
    },
  ],
};
