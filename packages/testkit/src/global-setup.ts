import { LOG_COPY_DIR_ENV } from '@pack/logging';
import { ensureTools, resolveInfra } from './infra';
import { ownedTempDir } from './leftover-files';
import { removeLeftovers } from './leftovers';
import { removeLeftoverNetworks } from './partitions';
import { buildServiceBundles } from './service-bundles';
import { LEAK_SCAN_DIR_ENV } from './suite-scan';

/**
 * jest globalSetup: the system tools first (installed when root, else the run stops with the
 * command to run), then the bundles of the services whose sources changed, once for the run and
 * before any worker starts (service-bundles.ts: the tests that start services as processes run
 * them), then the servers; workers inherit the URLs through the environment. What killed runs
 * left there and on this machine goes first (leftovers.ts). Then the directory of the
 * suite-wide leak scan (suite-scan.ts): workers and the services they start, in-process or as
 * child processes, inherit it too.
 */
export default async function globalSetup(): Promise<void> {
  ensureTools();
  const built = await buildServiceBundles();
  if (built.length > 0) process.stderr.write(`\nservice bundles built: ${built.join(', ')}\n`);
  const infra = await resolveInfra({ throwaway: true });
  process.env.MONGO_URL = infra.mongoUrl;
  process.env.AMQP_URL = infra.amqpUrl;
  (globalThis as { __packInfraStop?: () => Promise<void> }).__packInfraStop = infra.stop;
  const removed = {
    ...(await removeLeftovers({ mongoUrl: infra.mongoUrl, amqpUrl: infra.amqpUrl })),
    ...removeLeftoverNetworks(),
  };
  const counts = (Object.entries(removed) as [string, unknown[]][]).filter(([, found]) => found.length > 0);
  if (counts.length > 0)
    process.stderr.write(
      `\nleftovers of earlier runs removed: ${counts.map(([kind, found]) => `${found.length} ${kind}`).join(', ')}\n`,
    );
  if (process.env.PACK_LEAK_SCAN === 'off') return; // to measure what the scan costs
  const scanDir = ownedTempDir('leak-scan');
  process.env[LEAK_SCAN_DIR_ENV] = scanDir;
  process.env[LOG_COPY_DIR_ENV] = scanDir;
}
