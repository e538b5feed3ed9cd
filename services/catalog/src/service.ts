import { ID_CLAIMS, oncePerEvent, whileUnavailable } from '@pack/db';
import type { ServiceDefinition } from '@pack/runtime';
import { SettingsCache } from '@pack/settings-client';
import { CatalogRepository } from './data/catalog-repository';
import { catalogModels, ensureIndexes, OUTBOX_COLLECTIONS, TRANSITIONS } from './data/models';
import { ChangeInstanceQueries } from './domain/change-instances/change-instance-queries';
import { ChangeInstanceMoves } from './domain/change-instances/move-change-instance';
import { ChangeInstanceViews } from './domain/change-instances/roll-forward';
import {
  ItemPointerUpdates,
  POINTER_SOURCE_FIELDS,
  type PointerSource,
} from './domain/change-instances/item-pointer-updates';
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
import { ValidationOutcomes } from './domain/change-instances/validation-outcomes';
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
    const settings = () => cache.confirmed();
    const eventsWritten = () => outbox.kick();
    const owners = new ServiceOwners(repository, settings);
    const queries = new ChangeInstanceQueries(repository);
    const pointers = new ItemPointerUpdates(repository, logger);
    // A writer that died after a record's insert: its item's pointers are set before its events go.
    outbox.beforePublishing(TRANSITIONS, {
      fields: POINTER_SOURCE_FIELDS,
      run: (record) => pointers.beforePublishing(record as unknown as PointerSource),
    });
    const moves = new ChangeInstanceMoves(repository, eventsWritten, logger, pointers);

    return {
      routes: [
        ...serviceRoutes(new ServiceCatalog(repository, owners, eventsWritten)),
        ...submissionRoutes(new SubmitDeclaration(repository, settings, eventsWritten, logger, pointers)),
        ...serviceItemRoutes(queries),
        ...changeInstanceRoutes(queries, moves, settings),
        ...serviceOwnerRoutes(owners, settings),
      ],
      // Id claims only matter while their number is handed out.
      retained: [ID_CLAIMS],
      consumers: [
        cache.consumer(),
        validationConsumer(oncePerEvent(mongo.connection), moves, new ValidationOutcomes(repository, logger)),
        pipelineProgressConsumer(new PipelineProgress(repository, eventsWritten, logger)),
        projectionConsumer(new ChangeInstanceViews(repository, logger)),
      ],
      // Nothing is consumed or started on default settings: the first fetch comes first.
      before: cache.firstLoadStep(),
      async onStart() {
        await ensureIndexes(models);
        // Items stored before the pointers were kept on them; ready only once they have them.
        await whileUnavailable(() => pointers.backfill(), 0);
        return () => {
          cache.stop();
          return Promise.resolve();
        };
      },
    };
  },
};
