import { randomBytes } from 'node:crypto';
import { ownerTag } from './owner';

export const TEST_INTERNAL_SECRET = 'test-internal-secret-0123456789abcdef';
/** A fixed encryption key (32 bytes, base64) for tests only; deployments bring their own. */
export const TEST_ENCRYPTION_KEY = Buffer.from('pack-test-only-encryption-key-32').toString('base64');

/**
 * A name no other test (or earlier run) uses: databases, broker namespaces, usernames; hex after the
 * prefix, which no seeded secret's window reads as (suite-scan.ts): the time, the owner's pid
 * (owner.ts: a later run removes what a dead owner left) and random digits.
 */
export function uniqueName(prefix: string, owner = process.pid): string {
  return `${prefix}_${wallClock().toString(16)}${ownerTag(owner)}${randomBytes(3).toString('hex')}`.toLowerCase();
}

/**
 * The machine's time even while a test fakes Date (fakeDate, jest's fake timers): a name stamped
 * with a test's clock (a day in March) would look days old, and another run's start on the same
 * servers would remove its database and queues as leftovers while the test still uses them.
 */
const wallClock = Date.now.bind(Date);

/** Environment for a service under test: its own database and broker namespace, port 0. */
export function testEnv(service: string, overrides: Record<string, string> = {}): Record<string, string> {
  const mongoUrl = process.env.MONGO_URL;
  const amqpUrl = process.env.AMQP_URL;
  if (!mongoUrl || !amqpUrl)
    throw new Error('MONGO_URL and AMQP_URL are not set: run the tests through jest (globalSetup)');
  return {
    NODE_ENV: 'test',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    HOST: '127.0.0.1',
    PORT: '0',
    METRICS_PORT: '0',
    MONGO_URL: mongoUrl,
    AMQP_URL: amqpUrl,
    MONGO_DB: uniqueName(`t_${service.replace(/-/g, '_')}`),
    BROKER_NAMESPACE: uniqueName('t'),
    PACK_INTERNAL_SECRET: TEST_INTERNAL_SECRET,
    PACK_ENCRYPTION_KEYS: `test:${TEST_ENCRYPTION_KEY}`,
    PACK_ENCRYPTION_KEY_ID: 'test',
    // Stops at once: a test sends nothing to a service it stops, but keeps connections to it
    // alive, and the grace would add a second to every stop (graceful-shutdown.test.ts has it).
    SHUTDOWN_IDLE_GRACE_MS: '0',
    // A service a test starts as a child process copies its log lines for the suite-wide leak scan too.
    ...(process.env.PACK_LOG_COPY_DIR ? { PACK_LOG_COPY_DIR: process.env.PACK_LOG_COPY_DIR } : {}),
    ...overrides,
  };
}
