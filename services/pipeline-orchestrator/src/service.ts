import {
  effectiveGenUiCatalogSchema,
  maySeeCosts,
  shownCurrency,
  type GeneralSettings,
  type JsonSchema,
} from '@pack/contracts';
import { DAY_MS } from '@pack/db';
import type { ServiceDefinition } from '@pack/runtime';
import { SettingsCache } from '@pack/settings-client';
import { ActiveSlotRepository } from './data/active-slot-repository';
import { BudgetRepository } from './data/budget-repository';
import { Budgets } from './domain/budgets/budgets';
import { budgetRoutes } from './http/budget-routes';
import { optimizerNoteRoutes } from './http/optimizer-note-routes';
import { OptimizerNotes } from './domain/side-processors/optimizer-notes';
import { DirectoryRepository } from './data/directory-repository';
import { PIPELINES_COLLECTION, PipelineRepository } from './data/pipeline-repository';
import { PROCESSORS_COLLECTION, ProcessorRepository } from './data/processor-repository';
import { PipelineRequestSender } from './data/request-sender';
import { ServiceItemRepository } from './data/service-item-repository';
import { PipelineNameRepository } from './data/pipeline-names';
import { PipelineReads } from './domain/pipelines/pipeline-reads';
import { ExecutionContextRepository } from './data/execution-context-repository';
import { ExecutionContext } from './domain/pipelines/execution-context';
import { ContextReads } from './domain/pipelines/context-reads';
import { PackDataPush } from './domain/pipelines/pack-data-push';
import { Retrigger } from './domain/pipelines/retrigger';
import { pipelineFlowRoutes } from './http/pipeline-flow-routes';
import { VALIDATIONS_COLLECTION, ValidationRepository } from './data/validation-repository';
import { PackOptimizer } from './domain/side-processors/optimizer';
import { ProcessorCache } from './domain/processors/processor-cache';
import { stageProcessors } from './domain/processors/stage-processors';
import { ChangeInstanceValidator } from './domain/side-processors/validator';
import { sideProcessorConsumer } from './messaging/side-processor-consumer';
import { SweepRepository } from './data/sweep-repository';
import { ActiveSlots } from './domain/processors/active-slots';
import { Pipelines } from './domain/pipelines/pipelines';
import { Processors } from './domain/processors/processors';
import { StageSweeper } from './domain/sweeping/sweeper';
import { StageResend } from './domain/sweeping/stage-resend';
import { ownerReads } from './data/owner-reads';
import { pipelineRoutes } from './http/pipeline-routes';
import { processorRoutes } from './http/processor-routes';
import { pipelineConsumer } from './messaging/pipeline-consumer';
import { processorCacheConsumer } from './messaging/processor-cache-consumer';
import { projectionConsumer } from './messaging/projection-consumer';
import { SweeperLoop } from './messaging/sweeper-loop';
import { budgetMetrics, pipelineMetrics, sweepMetrics, validationMetrics } from './metrics';
import type { OrchestratorConfig } from './config';

export { orchestratorEnvSchema, type OrchestratorConfig } from './config';
export { PROCESSORS_COLLECTION } from './data/processor-repository';
export { ACTIVE_SLOTS_COLLECTION } from './data/active-slot-repository';
export { MODELS_COLLECTION, SERVICES_COLLECTION } from './data/directory-repository';
export { PACK_DATA_COLLECTION, PIPELINES_COLLECTION } from './data/pipeline-repository';
export { SERVICE_ITEMS_COLLECTION } from './data/service-item-repository';
export { EXECUTION_NOTES_COLLECTION } from './data/execution-context-repository';
export { VALIDATIONS_COLLECTION } from './data/validation-repository';
export {
  BUDGETS_COLLECTION,
  BUDGET_CALLS_COLLECTION,
  BUDGET_SPEND_COLLECTION,
} from './data/budget-repository';

const SERVICE = 'pipeline-orchestrator';
/** How often each replica removes budget ledger entries past the retention (idempotent). */
const LEDGER_SWEEP_MS = 3_600_000;

export const orchestratorService: ServiceDefinition<OrchestratorConfig> = {
  name: SERVICE,
  version: '0.1.0',
  outboxCollections: [PROCESSORS_COLLECTION, PIPELINES_COLLECTION, VALIDATIONS_COLLECTION],
  setup({ config, mongo, outbox, broker, logger, metrics }) {
    const processorsRepository = new ProcessorRepository(mongo.connection);
    const owners = ownerReads({
      catalogUrl: config.CATALOG_URL,
      llmGatewayUrl: config.LLM_GATEWAY_URL,
      internalSecret: config.PACK_INTERNAL_SECRET,
      service: SERVICE,
    });
    const directory = new DirectoryRepository(mongo.connection, owners);
    const pipelineRepository = new PipelineRepository(mongo.connection);
    const slots = new ActiveSlots(new ActiveSlotRepository(mongo.connection), processorsRepository);
    const stages = stageProcessors(processorsRepository);
    const nextProcessors = new ProcessorCache(stages, config.PIPELINE_PROCESSOR_CACHE_MS);
    // Broadcast queues live with the connection: events missed while it was down are unknown.
    broker.onReady(() => nextProcessors.clear());
    const processors = new Processors(processorsRepository, directory, slots, (serviceId) => {
      nextProcessors.forget(serviceId);
      outbox.kick();
    });
    const settings = new SettingsCache({
      settingsUrl: config.SETTINGS_URL,
      internalSecret: config.PACK_INTERNAL_SECRET,
      service: SERVICE,
      logger,
    });
    // Read on every decision, so a settings.changed applies on every replica without a restart (0040).
    const switches = {
      processors: () => settings.confirmed().ai_integration.show_ai_processor,
      validator: () => settings.confirmed().ai_integration.show_ai_validator,
    };
    // Limits and spend read from the database on every decision: a change applies on every replica (0046).
    const budgetStore = new BudgetRepository(mongo.connection, config.RECORD_LINGER_MS);
    const budgets = new Budgets({
      store: budgetStore,
      directory,
      processorService: async (id) => (await processorsRepository.findAny(id))?.service_id ?? null,
      currency: () => settings.confirmed().currency.currency,
    });
    budgetMetrics(metrics, () => budgets.ratios());
    const contextRepository = new ExecutionContextRepository(
      mongo.connection,
      config.PIPELINE_PROCESSOR_CACHE_MS,
    );
    const observer = pipelineMetrics(metrics, () => pipelineRepository.countRunning());
    const optimizer = new PackOptimizer({
      processors: processorsRepository,
      pipelines: pipelineRepository,
      context: contextRepository,
      switches,
      budget: budgets,
      logger,
    });
    const validator = new ChangeInstanceValidator(
      new ValidationRepository(mongo.connection),
      processorsRepository,
      () => outbox.kick(),
      logger,
      switches,
      budgets,
      validationMetrics(metrics),
    );
    // Built once per settings version: it was a measurable share of a stage's CPU (bench/pipeline).
    let catalog: { from: GeneralSettings; schema: JsonSchema } | undefined;
    const catalogSchema = (current: GeneralSettings) => {
      if (catalog?.from !== current)
        catalog = { from: current, schema: effectiveGenUiCatalogSchema(current) };
      return catalog.schema;
    };
    const requests = new PipelineRequestSender(mongo.connection, pipelineRepository, broker, () =>
      outbox.kick(),
    );
    const executionContext = new ExecutionContext(contextRepository);
    const pipelines = new Pipelines({
      context: executionContext,
      finishing: (pipeline, outcome, reasons, known) =>
        optimizer.finishing(pipeline, outcome, reasons, known),
      store: pipelineRepository,
      items: new ServiceItemRepository(mongo.connection, owners),
      directory,
      processors: stages,
      nextProcessors,
      approvalProcessors: { active: (serviceId, kind) => nextProcessors.activeOrRead(serviceId, kind) },
      findProcessor: (id) => processorsRepository.findAny(id),
      catalogSchema: () => catalogSchema(settings.confirmed()),
      observer,
      requests,
      switches,
      budget: budgets,
    });
    const sweepRepository = new SweepRepository(mongo.connection, PIPELINES_COLLECTION);
    const sweeper = new SweeperLoop(
      new StageSweeper({
        store: sweepRepository,
        failer: pipelines,
        resender: new StageResend({
          store: pipelineRepository,
          catalogSchema: () => catalogSchema(settings.confirmed()),
          requests,
          processor: (id) => processorsRepository.findAny(id),
        }),
        observer: sweepMetrics(metrics),
        budget: {
          marginMs: config.PIPELINE_STAGE_TIMEOUT_MARGIN_MS,
          callAttempts: config.PIPELINE_STAGE_CALL_ATTEMPTS,
          backoffMs: config.PIPELINE_STAGE_BACKOFF_MS,
          resendAfterMs: config.PIPELINE_STAGE_RESEND_MS,
          maxResends: config.PIPELINE_STAGE_MAX_RESENDS,
        },
      }),
      { intervalMs: config.PIPELINE_SWEEP_INTERVAL_MS, logger, kickOutbox: () => outbox.kick() },
    );
    const costs = (principal: { role: Parameters<typeof maySeeCosts>[0] }) => ({
      show: maySeeCosts(principal.role, settings.confirmed().charges),
      currency: shownCurrency(settings.confirmed().currency),
    });
    const names = new PipelineNameRepository(mongo.connection);
    const reads = new PipelineReads({
      store: pipelineRepository,
      names,
      directory,
      costs,
    });
    const flowDeps = { pipelines, store: pipelineRepository, processors: stages };
    const flows = {
      retrigger: new Retrigger({ ...flowDeps, context: contextRepository }),
      push: new PackDataPush({ ...flowDeps, observer, switches, budget: budgets }),
    };
    return {
      routes: [
        ...processorRoutes(processors),
        ...pipelineRoutes(
          pipelines,
          reads,
          new ContextReads({ items: pipelines, processors: stages, context: executionContext }),
        ),
        ...pipelineFlowRoutes(flows, reads),
        ...budgetRoutes(budgets),
        ...optimizerNoteRoutes(new OptimizerNotes({ store: contextRepository, directory, names })),
      ],
      consumers: [
        projectionConsumer(
          {
            applyService: (snapshot) => directory.applyService(snapshot),
            applyModel: async (snapshot) => {
              const applied = await directory.applyModel(snapshot);
              contextRepository.forgetModel(snapshot.llm_model_id);
              return applied;
            },
          },
          (serviceId) => processors.retireService(serviceId),
        ),
        pipelineConsumer(pipelines, pipelines.results, budgets, (envelope) => broker.publish(envelope)),
        sideProcessorConsumer(validator, optimizer, budgets),
        settings.consumer(),
        processorCacheConsumer(nextProcessors),
      ],
      // Nothing is consumed or started on default settings: the first fetch comes first.
      before: settings.firstLoadStep(),
      async onStart() {
        await Promise.all([
          processorsRepository.ensureIndexes(),
          directory.ensureIndexes(),
          pipelineRepository.ensureIndexes(),
          contextRepository.ensureIndexes(),
          sweepRepository.ensureIndexes(),
          budgetStore.ensureIndexes(),
        ]);
        sweeper.start();
        // The budget ledger keeps an entry as long as a copy of its result may come (0046).
        const sweepLedger = () =>
          budgetStore
            .sweepLedger(new Date(Date.now() - config.PROCESSED_EVENTS_RETENTION_DAYS * DAY_MS))
            .catch((error: unknown) => logger.warn({ err: error }, 'budget ledger sweep failed'));
        void sweepLedger();
        const ledgerSweeper = setInterval(() => void sweepLedger(), LEDGER_SWEEP_MS).unref();
        return async () => {
          clearInterval(ledgerSweeper);
          await sweeper.stop();
          await budgetStore.flush().catch(() => undefined);
          settings.stop();
        };
      },
    };
  },
};
