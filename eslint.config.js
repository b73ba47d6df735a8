import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// The layers, and what each may not import (docs/architecture.md). One rule, no-restricted-imports,
// per set of files: a later block replaces the rule for its files, so each block lists all of its
// restrictions.

const clientNode = {
  group: ['@kubernetes/client-node', '@kubernetes/client-node/*'],
  message: 'Only operator/kube/client.ts imports @kubernetes/client-node: use operator/kube/.',
};
const cli = {
  group: ['**/cli/*', '!**/test/**'],
  message: 'A lower layer never imports the CLI (tables, colours and exit codes live there).',
};
/** The shell: I/O, timers, processes, the API server. */
const shell = {
  group: [
    '**/kube/client.js',
    '**/kube/reflector.js',
    '**/kube/list-watch.js',
    '**/kube/work-queue.js',
    '**/kube/leader-election.js',
    '**/kube/event-recorder.js',
    '**/kube/slim-client-node.js',
    '**/observability/*',
    '**/manager/run.js',
    '**/manager/config.js',
    '**/agent/*',
    '**/config/load.js',
    '**/dev/cluster/*',
    '**/dev/demo/*',
    '**/controller/controller.js',
    '**/controller/apply.js',
    '**/controller/topology-cache.js',
    '**/controller/node-cache.js',
    '**/controller/pod-sources.js',
    './client.js',
    './reflector.js',
    './list-watch.js',
    './work-queue.js',
    './leader-election.js',
    './event-recorder.js',
    './slim-client-node.js',
    './controller.js',
    './apply.js',
    './topology-cache.js',
    './node-cache.js',
    './pod-sources.js',
  ],
  message:
    'The pure core (naming, failure domains, status planning, the reflector machine) never imports the shell.',
};
const io = {
  group: [
    'node:fs',
    'node:fs/*',
    'node:child_process',
    'node:http',
    'node:https',
    'node:dgram',
    'node:worker_threads',
  ],
  message: 'The pure core does no I/O.',
};
const controller = {
  group: ['**/controller/*'],
  message:
    'The agent reads the status through the protocol module and uses the runtime layer (operator/kube/), never the controller.',
};

const restrict = (...patterns) => ['error', { patterns }];

/** Pure functions only: planning, naming, analysis, the reflector's state machine, backoff. */
const PURE_CORE = [
  'operator/naming/**/*.ts',
  'operator/failure-domains/**/*.ts',
  'operator/api/schema.ts',
  'operator/api/validate.ts',
  'operator/controller/status.ts',
  'operator/controller/conditions.ts',
  'operator/controller/admission.ts',
  'operator/controller/announce.ts',
  'operator/controller/plan.ts',
  'operator/controller/readiness.ts',
  'operator/kube/reflector-machine.ts',
  'operator/kube/backoff.ts',
  'operator/kube/paths.ts',
];

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'coverage/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-imports': restrict(clientNode),
    },
  },
  // Below the CLI: everything the commands are built from.
  {
    files: ['operator/**/*.ts'],
    ignores: ['operator/cli/**'],
    rules: { 'no-restricted-imports': restrict(clientNode, cli) },
  },
  // The agent: the runtime layer and the protocol, not the controller's internals. observe.ts still takes the
  // status heartbeat's period from the controller until the status protocol module replaces it.
  {
    files: ['operator/agent/**/*.ts'],
    ignores: ['operator/agent/observe.ts'],
    rules: { 'no-restricted-imports': restrict(clientNode, cli, controller) },
  },
  { files: PURE_CORE, rules: { 'no-restricted-imports': restrict(clientNode, cli, shell, io) } },
  // The one module that talks to the Kubernetes client.
  { files: ['operator/kube/client.ts'], rules: { 'no-restricted-imports': restrict(cli) } },
  { files: ['bin/**/*.js'], languageOptions: { globals: { process: 'readonly', console: 'readonly' } } },
);
