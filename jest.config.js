/** One jest run for the whole workspace: pure specs, component tests and end-to-end tests. */
const { availableParallelism } = require('node:os');

// The test kit finds the repository's scripts (scripts/infra.sh, deps.sh) here: the root hands
// its place down (workers inherit it) instead of the kit reaching above its own package.
process.env.PACK_REPO_ROOT = __dirname;

module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/packages', '<rootDir>/services', '<rootDir>/test'],
  testMatch: ['**/*.spec.ts', '**/*.test.ts'],
  transform: {
    '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022' } }],
    // ESM-only libraries of the OpenID Connect relying party, compiled to CommonJS for jest.
    '/node_modules/.+\\.js$': ['@swc/jest', { jsc: { target: 'es2022' }, module: { type: 'commonjs' } }],
  },
  transformIgnorePatterns: ['/node_modules/\\.pnpm/(?!(openid-client|oauth4webapi|jose)@)'],
  globalSetup: '<rootDir>/packages/testkit/src/global-setup.ts',
  globalTeardown: '<rootDir>/packages/testkit/src/global-teardown.ts',
  // Records every response test code receives for the suite-wide leak scan (testkit suite-scan.ts).
  setupFilesAfterEnv: [
    '<rootDir>/packages/testkit/src/capture-responses.ts',
    // Every test's time-out: the test kit's ceiling (ceilings.ts), scaled by PACK_TEST_TIME_SCALE.
    '<rootDir>/packages/testkit/src/ceiling-setup.ts',
  ],
  // Half a worker more than the cores: with one a core the machine is a fifth idle (files wait on
  // heartbeats, partitions, browsers and processes starting), with one and a half it is busy
  // (2 cores: 738 s with two workers, 600 s with three, the same files). At most 8: the test
  // kit's port slices (packages/testkit/src/ports.ts).
  maxWorkers: Math.min(8, Math.ceil(availableParallelism() * 1.5)),
  // Known-heavy files first when jest has no timings of an earlier run (a fresh clone, CI).
  testSequencer: '<rootDir>/scripts/jest-sequencer.js',
  reporters: ['default', '<rootDir>/scripts/jest-summary-reporter.js'],
};
