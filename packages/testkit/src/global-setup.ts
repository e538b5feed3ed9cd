import { ensureTools, resolveInfra } from './infra';

/**
 * jest globalSetup: the system tools first (installed when root, else the run stops with the
 * command to run), then the servers; workers inherit the URLs through the environment.
 */
export default async function globalSetup(): Promise<void> {
  ensureTools();
  const infra = await resolveInfra();
  process.env.MONGO_URL = infra.mongoUrl;
  process.env.AMQP_URL = infra.amqpUrl;
  (globalThis as { __packInfraStop?: () => Promise<void> }).__packInfraStop = infra.stop;
}
