// Tests are compiled by `tsc` (npm's pretest) and jest runs the emitted ESM, so what is tested
// is exactly what ships. Integration tests share one real control plane per run (globalSetup).
export default {
  testEnvironment: 'node',
  transform: {},
  projects: [
    {
      displayName: 'unit',
      testEnvironment: 'node',
      transform: {},
      testMatch: ['<rootDir>/dist/test/unit/**/*.test.js'],
    },
    {
      displayName: 'integration',
      testEnvironment: 'node',
      transform: {},
      testMatch: ['<rootDir>/dist/test/integration/**/*.test.js'],
      globalSetup: '<rootDir>/dist/test/support/global-setup.js',
      globalTeardown: '<rootDir>/dist/test/support/global-teardown.js',
    },
  ],
};
