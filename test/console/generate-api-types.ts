/**
 * `pnpm console:api-types`: starts every service in this process (test/stack.ts, on the local
 * infrastructure as the tests use it), reads /v1/openapi.json from its gateway and writes the
 * console's client types. No running platform is needed.
 */
import { writeFileSync } from 'node:fs';
import { resolveInfra } from '@pack/testkit';
import { startStack } from '../stack';
import { API_TYPES_FILE, apiTypesOf } from './api-types';

async function main() {
  const infra = await resolveInfra();
  process.env.MONGO_URL = infra.mongoUrl;
  process.env.AMQP_URL = infra.amqpUrl;
  const stack = await startStack();
  try {
    writeFileSync(API_TYPES_FILE, await apiTypesOf(stack));
    process.stdout.write(`wrote ${API_TYPES_FILE}\n`);
  } finally {
    await stack.stop();
    await infra.stop?.();
  }
}

// The command ends when the file is written and the stack stopped: handles that in-process
// services leave behind (client sockets closing lazily) must not keep it waiting.
main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${String(error)}\n`);
    process.exit(1);
  },
);
