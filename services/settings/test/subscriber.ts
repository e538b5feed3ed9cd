import { Broker } from '@pack/broker';
import { createLogger } from '@pack/logging';
import { createMetrics } from '@pack/metrics';
import { SettingsCache } from '@pack/settings-client';
import { TEST_INTERNAL_SECRET, uniqueName, waitFor } from '@pack/testkit';

/**
 * A service that uses the settings, as other services do: its own broker connection and a
 * settings cache (revalidation polling off, so only events refresh it). Its queue is a
 * broadcast queue, removed by the broker when the connection closes.
 */
export async function startSubscriber(
  settingsUrl: string,
  namespace: string,
  amqpUrl: string,
  service = uniqueName('subscriber'),
) {
  const logger = createLogger({ service, version: 'test', level: 'silent' });
  const broker = new Broker({ url: amqpUrl, namespace, service, logger, metrics: createMetrics(service) });
  const cache = new SettingsCache({
    settingsUrl,
    internalSecret: TEST_INTERNAL_SECRET,
    service,
    logger,
    pollMs: 0,
  });
  broker.consume(cache.consumer());
  broker.start();
  cache.start();
  await waitFor(() => broker.isReady() && cache.isLoaded(), { what: 'subscriber ready' });
  return {
    cache,
    async stop() {
      cache.stop();
      await broker.close();
    },
  };
}
