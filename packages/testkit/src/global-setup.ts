import { resolveInfra } from './infra';

/** jest globalSetup: workers inherit the URLs through the environment. */
export default async function globalSetup(): Promise<void> {
  const infra = await resolveInfra();
  process.env.MONGO_URL = infra.mongoUrl;
  process.env.AMQP_URL = infra.amqpUrl;
  (globalThis as { __packInfraStop?: () => Promise<void> }).__packInfraStop = infra.stop;
}
