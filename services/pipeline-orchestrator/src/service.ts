import { effectiveGenUiCatalogSchema, maySeeCosts } from '@pack/contracts';
import type { ServiceDefinition } from '@pack/runtime';
import { SettingsCache } from '@pack/settings-client';
import { ActiveSlotRepository } from './data/active-slot-repository';
import { DirectoryRepository } from './data/directory-repository';
import { PIPELINES_COLLECTION, PipelineRepository } from './data/pipeline-repository';
import { PROCESSORS_COLLECTION, ProcessorRepository } from './data/processor-repository';
import { ServiceItemRepository } from './data/service-item-repository';
import { ExecutionContextRepository } from './data/execution-context-repository';
import { ExecutionContext } from './domain/execution-context';
import { PackDataPush } from './domain/pack-data-push';
import { Retrigger } from './domain/retrigger';
import { pipelineFlowRoutes } from './http/pipeline-flow-routes';
import { VALIDATIONS_COLLECTION, ValidationRepository } from './data/validation-repository';
import { PackOptimizer } from './domain/optimizer';
import { stageProcessors } from './domain/stage-processors';
import { ChangeInstanceValidator } from './domain/validator';
import { sideProcessorConsumer } from './messaging/side-processor-consumer';
import { ActiveSlots } from './domain/active-slots';
import { Pipelines } from './domain/pipelines';
import { Processors } from './domain/processors';
import { pipelineRoutes } from './http/pipeline-routes';
import { processorRoutes } from './http/processor-routes';
import { pipelineConsumer } from './messaging/pipeline-consumer';
import { projectionConsumer } from './messaging/projection-consumer';
import { pipelineMetrics } from './metrics';
import type { OrchestratorConfig } from './config';

export { orchestratorEnvSchema, type OrchestratorConfig } from './config';
export { PROCESSORS_COLLECTION } from './data/processor-repository';
export { ACTIVE_SLOTS_COLLECTION } from './data/active-slot-repository';
export { MODELS_COLLECTION, SERVICES_COLLECTION } from './data/directory-repository';
export { PACK_DATA_COLLECTION, PIPELINES_COLLECTION } from './data/pipeline-repository';
export { SERVICE_ITEMS_COLLECTION } from './data/service-item-repository';
export { EXECUTION_NOTES_COLLECTION } from './data/execution-context-repository';
export { VALIDATIONS_COLLECTION } from './data/validation-repository';

const SERVICE = 'pipeline-orchestrator';

export const orchestratorService: ServiceDefinition<OrchestratorConfig> = {
  name: SERVICE,
  version: '0.1.0',
  outboxCollections: [PROCESSORS_COLLECTION, PIPELINES_COLLECTION, VALIDATIONS_COLLECTION],
  setup({ config, mongo, outbox, logger, metrics }) {
    const processorsRepository = new ProcessorRepository(mongo.connection);
    const directory = new DirectoryRepository(mongo.connection);
    const pipelineRepository = new PipelineRepository(mongo.connection);
    const slots = new ActiveSlots(new ActiveSlotRepository(mongo.connection), processorsRepository);
    const processors = new Processors(processorsRepository, directory, slots, () => outbox.kick());
    const settings = new SettingsCache({
      settingsUrl: config.SETTINGS_URL,
      internalSecret: config.PACK_INTERNAL_SECRET,
      service: SERVICE,
      logger,
    });
    const contextRepository = new ExecutionContextRepository(mongo.connection);
    const observer = pipelineMetrics(metrics, () => pipelineRepository.countRunning());
    const optimizer = new PackOptimizer({
      processors: processorsRepository,
      pipelines: pipelineRepository,
      context: contextRepository,
      logger,
    });
    const validator = new ChangeInstanceValidator(
      new ValidationRepository(mongo.connection),
      processorsRepository,
      () => outbox.kick(),
      logger,
    );
    const stages = stageProcessors(processorsRepository);
    const pipelines = new Pipelines({
      context: new ExecutionContext(contextRepository),
      finishing: (pipeline, outcome, reasons) => optimizer.finishing(pipeline, outcome, reasons),
      store: pipelineRepository,
      items: new ServiceItemRepository(mongo.connection),
      directory,
      processors: stages,
      catalogSchema: () => effectiveGenUiCatalogSchema(settings.get()),
      observer,
      eventsWritten: () => outbox.kick(),
    });
    const costs = (principal: { role: Parameters<typeof maySeeCosts>[0] }) => ({
      show: maySeeCosts(principal.role, settings.get().charges),
      currency: settings.get().currency.currency,
    });
    const flowDeps = { pipelines, store: pipelineRepository, processors: stages };
    const flows = {
      retrigger: new Retrigger({ ...flowDeps, context: contextRepository }),
      push: new PackDataPush({ ...flowDeps, observer }),
    };
    return {
      routes: [
        ...processorRoutes(processors),
        ...pipelineRoutes(pipelines, costs),
        ...pipelineFlowRoutes(flows, costs),
      ],
      consumers: [
        projectionConsumer(directory),
        pipelineConsumer(pipelines),
        sideProcessorConsumer(validator, optimizer),
        settings.consumer(),
      ],
      async onStart() {
        await Promise.all([
          processorsRepository.ensureIndexes(),
          directory.ensureIndexes(),
          pipelineRepository.ensureIndexes(),
          contextRepository.ensureIndexes(),
        ]);
        settings.start();
        return async () => settings.stop();
      },
    };
  },
};
