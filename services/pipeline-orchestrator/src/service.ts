import type { ServiceDefinition } from '@pack/runtime';
import { ActiveSlotRepository } from './data/active-slot-repository';
import { DirectoryRepository } from './data/directory-repository';
import { PROCESSORS_COLLECTION, ProcessorRepository } from './data/processor-repository';
import { ActiveSlots } from './domain/active-slots';
import { Processors } from './domain/processors';
import { processorRoutes } from './http/processor-routes';
import { projectionConsumer } from './messaging/projection-consumer';
import type { OrchestratorConfig } from './config';

export { orchestratorEnvSchema, type OrchestratorConfig } from './config';
export { PROCESSORS_COLLECTION } from './data/processor-repository';
export { ACTIVE_SLOTS_COLLECTION } from './data/active-slot-repository';
export { MODELS_COLLECTION, SERVICES_COLLECTION } from './data/directory-repository';

export const orchestratorService: ServiceDefinition<OrchestratorConfig> = {
  name: 'pipeline-orchestrator',
  version: '0.1.0',
  outboxCollections: [PROCESSORS_COLLECTION],
  setup({ mongo, outbox }) {
    const processorsRepository = new ProcessorRepository(mongo.connection);
    const directory = new DirectoryRepository(mongo.connection);
    const slots = new ActiveSlots(new ActiveSlotRepository(mongo.connection), processorsRepository);
    const processors = new Processors(processorsRepository, directory, slots, () => outbox.kick());
    return {
      routes: processorRoutes(processors),
      consumers: [projectionConsumer(directory)],
      async onStart() {
        await Promise.all([processorsRepository.ensureIndexes(), directory.ensureIndexes()]);
      },
    };
  },
};
