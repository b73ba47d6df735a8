import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { layersRule } from './tools/lint/layers.js';

// The layers (docs/architecture.md), by folder: each folder of operator/ imports itself and the
// folders named here, nothing else — so nothing shipped imports dev/, bench/ or test/, and the
// folders form no cycle. A new file is covered by its folder's rule the moment it exists.
export const LAYERS = {
  'operator/api': [], // the resource: schema, generated types, validation
  'operator/observability': [], // logs, metrics, health
  'operator/naming': ['operator/api'],
  'operator/failure-domains': ['operator/api'],
  'operator/config': ['operator/api'], // process configuration
  'operator/kube': ['operator/api', 'operator/observability'], // the Kubernetes runtime
  'operator/protocol': ['operator/api', 'operator/naming', 'operator/kube'], // the status protocol
  'operator/mesh': ['operator/api', 'operator/protocol'], // the mesh from the members' reports
  'operator/controller': [
    'operator/api',
    'operator/naming',
    'operator/failure-domains',
    'operator/protocol',
    'operator/mesh',
    'operator/kube',
    'operator/observability',
  ],
  'operator/manager': [
    'operator/api',
    'operator/config',
    'operator/controller',
    'operator/kube',
    'operator/observability',
  ],
  'operator/agent': [
    'operator/api',
    'operator/naming',
    'operator/config',
    'operator/protocol',
    'operator/kube',
    'operator/observability',
  ],
  'operator/cli': [
    'operator/api',
    'operator/naming',
    'operator/failure-domains',
    'operator/config',
    'operator/protocol',
    'operator/mesh',
    'operator/kube',
    'operator/agent',
    'operator/manager',
    'operator/observability',
  ],
  operator: ['operator/api', 'operator/naming', 'operator/failure-domains', 'operator/agent'], // index.ts, the library
};
LAYERS.dev = [...Object.keys(LAYERS)]; // the dev tools use any of it; nothing uses them

// The pure core: functions of their input. Whole folders, but for the shell files each names (a new
// file there is pure until it is named here), and single files of shell folders. A pure file imports
// only pure files and no I/O module, so no I/O is reachable from it, however deep.
export const PURE = {
  folders: {
    'operator/api': [],
    'operator/naming': [],
    'operator/failure-domains': [],
    'operator/protocol': ['get.ts', 'liveness-writer.ts', 'member-report-writer.ts', 'subscription.ts'],
    'operator/mesh': [],
    'operator/controller': [
      'controller.ts',
      'apply.ts',
      'topology-cache.ts',
      'node-cache.ts',
      'pod-source.ts',
      'shared-pod-sources.ts',
      'selector-pod-sources.ts',
      'namespace-pods.ts',
      'cluster-probe.ts',
      'earliest-timer.ts',
      'member-reports.ts',
    ],
    'operator/kube': [
      'client.ts',
      'credentials.ts',
      'reflector.ts',
      'list-watch.ts',
      'work-queue.ts',
      'leader-election.ts',
      'event-recorder.ts',
      'slim-client-node.ts',
    ],
  },
  files: [
    'operator/agent/round.ts',
    'operator/agent/step.ts',
    'operator/agent/observe.ts',
    'operator/agent/trouble-report.ts',
    'operator/agent/member-view.ts',
    'operator/config/schema-check.ts',
    'operator/config/usage-error.ts',
  ],
  io: ['node:fs', 'node:child_process', 'node:http', 'node:https', 'node:dgram', 'node:worker_threads'],
};

const clientNode = {
  group: ['@kubernetes/client-node', '@kubernetes/client-node/*'],
  message: 'Only operator/kube/client.ts imports @kubernetes/client-node: use operator/kube/.',
};

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'coverage/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    plugins: { layers: { rules: { imports: layersRule } } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-imports': ['error', { patterns: [clientNode] }],
    },
  },
  {
    files: ['operator/**/*.ts', 'dev/**/*.ts'],
    rules: { 'layers/imports': ['error', { layers: LAYERS, pure: PURE }] },
  },
  // The one module that talks to the Kubernetes client.
  { files: ['operator/kube/client.ts'], rules: { 'no-restricted-imports': 'off' } },
  { files: ['bin/**/*.js'], languageOptions: { globals: { process: 'readonly', console: 'readonly' } } },
);
