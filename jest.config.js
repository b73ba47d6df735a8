/* global process */
// Tests are compiled by `tsc` (npm's pretest) and jest runs the emitted ESM, so what is tested
// is exactly what ships. Integration and end-to-end tests share one real control plane per run
// (globalSetup); they use real processes and real timeouts (a hung request is given up after 30 s).
const withControlPlane = {
  testEnvironment: 'node',
  transform: {},
  globalSetup: '<rootDir>/dist/test/support/global-setup.js',
  globalTeardown: '<rootDir>/dist/test/support/global-teardown.js',
  setupFilesAfterEnv: ['<rootDir>/dist/test/support/cleanup.js'],
};

// The real node's tests need root and build images: a developer's `npm test` leaves them out,
// `.ci/run` (CI) sets CTOPO_REAL_NODE=1 and runs them with the rest.
const realNode = process.env.CTOPO_REAL_NODE === '1';

export default {
  testTimeout: 120_000,
  projects: [
    {
      displayName: 'unit',
      testEnvironment: 'node',
      transform: {},
      testMatch: ['<rootDir>/dist/test/unit/**/*.test.js'],
    },
    {
      displayName: 'integration',
      ...withControlPlane,
      testMatch: ['<rootDir>/dist/test/integration/**/*.test.js'],
    },
    { displayName: 'e2e', ...withControlPlane, testMatch: ['<rootDir>/dist/test/e2e/**/*.test.js'] },
    // Pods that really run, on a real node (needs root; docs/real-node.md): with CTOPO_REAL_NODE=1.
    ...(realNode
      ? [
          {
            displayName: 'node',
            testEnvironment: 'node',
            transform: {},
            globalSetup: '<rootDir>/dist/test/support/node-setup.js',
            globalTeardown: '<rootDir>/dist/test/support/node-teardown.js',
            setupFilesAfterEnv: ['<rootDir>/dist/test/support/cleanup.js'],
            testMatch: ['<rootDir>/dist/test/node/**/*.test.js'],
          },
        ]
      : []),
  ],
};
