import type { ServiceDefinition } from '@pack/runtime';
import { SettingsCache } from '@pack/settings-client';
import { CatalogRepository } from './data/catalog-repository';
import { catalogModels, ensureIndexes, OUTBOX_COLLECTIONS } from './data/models';
import { ServiceCatalog } from './domain/catalog-services';
import { ChangeInstances } from './domain/change-instances';
import { changeInstanceRoutes } from './http/change-instance-routes';
import { serviceItemRoutes } from './http/service-item-routes';
import { serviceOwnerRoutes } from './http/service-owner-routes';
import { serviceRoutes } from './http/service-routes';
import { submissionRoutes } from './http/submission-routes';
import { projectionConsumer } from './messaging/projection-consumer';
import { validationConsumer } from './messaging/validation-consumer';
import type { CatalogConfig } from './config';

export { catalogEnvSchema, type CatalogConfig } from './config';
export { TRANSITIONS } from './domain/transitions';

export const catalogService: ServiceDefinition<CatalogConfig> = {
  name: 'catalog',
  version: '0.1.0',
  outboxCollections: OUTBOX_COLLECTIONS,
  setup({ config, mongo, logger, metrics, outbox }) {
    const models = catalogModels(mongo.connection);
    const repository = new CatalogRepository(mongo.connection, models);
    const cache = new SettingsCache({
      settingsUrl: config.SETTINGS_URL,
      internalSecret: config.PACK_INTERNAL_SECRET,
      service: 'catalog',
      logger,
    });
    const settingsApplied = metrics.counter(
      'settings_applied_total',
      'General settings documents this replica has applied',
    );
    cache.onChange(() => settingsApplied.inc());
    const settings = () => cache.get();
    const services = new ServiceCatalog(repository, settings);
    const changeInstances = new ChangeInstances(repository, settings, () => outbox.kick(), logger);

    return {
      routes: [
        ...serviceRoutes(services),
        ...submissionRoutes(changeInstances),
        ...serviceItemRoutes(changeInstances),
        ...changeInstanceRoutes(changeInstances, settings),
        ...serviceOwnerRoutes(services, settings),
      ],
      consumers: [
        cache.consumer(),
        validationConsumer(mongo.connection, changeInstances),
        projectionConsumer(changeInstances),
      ],
      async onStart() {
        await ensureIndexes(models);
        cache.start();
        return () => {
          cache.stop();
          return Promise.resolve();
        };
      },
    };
  },
};
