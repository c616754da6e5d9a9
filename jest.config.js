/**
 * Jest runs every test in test/: unit/ with fakes for speed, integration/ against a real Keystone, e2e/ against the real
 * API server, OpenBao and Pulumi CLI. The global setup starts only the components the selected test files declare with a
 * `@needs` line (see test/support/global-setup.ts and docs/testing.md).
 */
/** @type {import('jest').Config} */
module.exports = {
  // Node's environment, plus a control plane of the run's cluster pool for each file that needs an API server.
  testEnvironment: '<rootDir>/test/support/environment.ts',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2023' } }] },
  // The package's own name resolves to the sources, as tsconfig.json's `paths` do for tsc (the examples import it by name).
  moduleNameMapper: {
    '^keystone-appcred$': '<rootDir>/src/index.ts',
    '^keystone-appcred/pulumi$': '<rootDir>/src/pulumi/index.ts',
    '^keystone-appcred/pulumi/kubernetes$': '<rootDir>/src/pulumi/kubernetes.ts',
    '^keystone-appcred/cdk8s$': '<rootDir>/constructs/index.ts',
  },
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  testTimeout: 120000,
  // Three workers on CI's two cores: the e2e files spend much of their time waiting on grace periods, sweeps and scrapes
  // (a third of the CPU idle with two), so a third worker cut the warm run's Jest time from 1,382 s to 1,070 s; each
  // worker has a control plane of its own (the cluster pool).
  maxWorkers: 3,
};
