import { oncePerEvent } from '@pack/db';
import type { ServiceDefinition } from '@pack/runtime';
import { SettingsCache } from '@pack/settings-client';
import { CatalogRepository } from './data/catalog-repository';
import { catalogModels, ensureIndexes, OUTBOX_COLLECTIONS } from './data/models';
import { ChangeInstanceQueries } from './domain/change-instances/change-instance-queries';
import { ChangeInstanceMoves } from './domain/change-instances/move-change-instance';
import { ChangeInstanceViews } from './domain/change-instances/roll-forward';
import { ServiceOwners } from './domain/services/service-owners';
import { ServiceCatalog } from './domain/services/services';
import { SubmitDeclaration } from './domain/declarations/submit-declaration';
import { changeInstanceRoutes } from './http/change-instance-routes';
import { serviceItemRoutes } from './http/service-item-routes';
import { serviceOwnerRoutes } from './http/service-owner-routes';
import { serviceRoutes } from './http/service-routes';
import { submissionRoutes } from './http/submission-routes';
import { projectionConsumer } from './messaging/projection-consumer';
import { validationConsumer } from './messaging/validation-consumer';
import { pipelineProgressConsumer } from './messaging/pipeline-progress-consumer';
import { PipelineProgress } from './domain/change-instances/pipeline-progress';
import { catalogMetrics } from './metrics';
import type { CatalogConfig } from './config';

export { catalogEnvSchema, type CatalogConfig } from './config';

export const catalogService: ServiceDefinition<CatalogConfig> = {
  name: 'catalog',
  version: '0.1.0',
  outboxCollections: OUTBOX_COLLECTIONS,
  setup({ config, mongo, logger, metrics, outbox }) {
    const models = catalogModels(mongo.connection);
    const repository = new CatalogRepository(mongo.connection);
    const cache = new SettingsCache({
      settingsUrl: config.SETTINGS_URL,
      internalSecret: config.PACK_INTERNAL_SECRET,
      service: 'catalog',
      logger,
    });
    cache.onChange(catalogMetrics(metrics).settingsApplied);
    const settings = () => cache.get();
    const eventsWritten = () => outbox.kick();
    const owners = new ServiceOwners(repository, settings);
    const queries = new ChangeInstanceQueries(repository);
    const moves = new ChangeInstanceMoves(repository, eventsWritten, logger);

    return {
      routes: [
        ...serviceRoutes(new ServiceCatalog(repository, owners, eventsWritten)),
        ...submissionRoutes(new SubmitDeclaration(repository, settings, eventsWritten, logger)),
        ...serviceItemRoutes(queries),
        ...changeInstanceRoutes(queries, moves, settings),
        ...serviceOwnerRoutes(owners, settings),
      ],
      consumers: [
        cache.consumer(),
        validationConsumer(oncePerEvent(mongo.connection), moves),
        pipelineProgressConsumer(new PipelineProgress(repository, eventsWritten, logger)),
        projectionConsumer(new ChangeInstanceViews(repository, logger)),
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
