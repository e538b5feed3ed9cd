/**
 * The fast tier (`pnpm test:unit`): only the `*.spec.ts` files, which need no server, so no
 * global set-up (no tool check, no RabbitMQ, no database). `pnpm test` runs these and the rest.
 */
const base = require('./jest.config');

const { globalSetup: _setup, globalTeardown: _teardown, ...rest } = base;

module.exports = { ...rest, testMatch: ['**/*.spec.ts'] };
