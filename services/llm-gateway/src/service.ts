import type { ServiceDefinition } from '@pack/runtime';
import { fieldSecretCodec, keyRingFromEnv } from '@pack/secrets';
import { createTargetDispatcher, targetUrlCheck } from '@pack/net-guard';
import { SettingsCache } from '@pack/settings-client';
import { ConnectionTester } from './domain/connection-test';
import { Breakers } from './domain/reliability';
import { llmMetrics } from './metrics';
import { LLM_MODELS_COLLECTION, LlmModelRepository } from './data/llm-model-repository';
import { ModelUsageRepository } from './data/model-usage-repository';
import { processorConsumer } from './messaging/processor-consumer';
import { LlmModels } from './domain/llm-models';
import { llmModelRoutes } from './http/routes';
import { generationParts, orNullWhenMissing } from './generation-parts';
import type { LlmGatewayConfig } from './config';

export { llmGatewayEnvSchema, type LlmGatewayConfig } from './config';
export { LLM_MODELS_COLLECTION } from './data/llm-model-repository';
export { PROCESSOR_MODELS_COLLECTION } from './data/model-usage-repository';
export { GENERATE_CONSUMER } from './messaging/generate-consumer';

const SERVICE = 'llm-gateway';

/** Each secret is bound to its model and key, so a ciphertext copied elsewhere does not decrypt. */
export function llmSecretContext(modelId: number, field: string): string {
  return `llm_models:${modelId}.extra_data.${field}`;
}

/** How often published deletions' tombstones are dropped. */
const TOMBSTONE_SWEEP_MS = 60_000;

export const llmGatewayService: ServiceDefinition<LlmGatewayConfig> = {
  name: SERVICE,
  version: '0.1.0',
  outboxCollections: [LLM_MODELS_COLLECTION],
  setup({ config, mongo, logger, metrics, broker, outbox }) {
    const repository = new LlmModelRepository(mongo.connection);
    const usage = new ModelUsageRepository(mongo.connection);
    const allowed = config.PACK_ALLOWED_TARGET_CIDRS;
    const dispatcher = createTargetDispatcher({ allowed });
    const insecureDispatcher = createTargetDispatcher({ allowed, rejectUnauthorized: false });
    const { observer, breakerState, generation } = llmMetrics(metrics);
    const breakers = new Breakers(undefined, breakerState);
    const settings = new SettingsCache({
      settingsUrl: config.SETTINGS_URL,
      internalSecret: config.PACK_INTERNAL_SECRET,
      service: SERVICE,
      logger,
    });
    const gen = generationParts({
      config,
      connection: mongo.connection,
      broker,
      logger,
      dispatchers: { dispatcher, insecureDispatcher },
      breakers,
      observer,
      generationObserver: generation,
      settings: () => settings.get(),
      // Generation reads profiles through LlmModels: the same decryption, cached.
      load: (id) => models.withOverrides(id, {}).catch(orNullWhenMissing),
      owned: usage,
    });
    const models = new LlmModels(
      gen.store(repository),
      fieldSecretCodec(keyRingFromEnv(config), {
        context: llmSecretContext,
        logFields: (modelId: number, field) => ({ model_id: modelId, field: `extra_data.${field}` }),
        plaintext: 'refused',
        logger,
      }),
      usage,
      targetUrlCheck(allowed),
      () => outbox.kick(),
    );
    const tester = new ConnectionTester({ dispatcher, insecureDispatcher }, breakers, observer);
    return {
      routes: [...llmModelRoutes(models, tester, gen.maySeeCosts), ...gen.routes],
      consumers: [settings.consumer(), gen.consumer, processorConsumer(usage)],
      async onStart() {
        await Promise.all([repository.ensureIndexes(), usage.ensureIndexes(), gen.ensureIndexes()]);
        settings.start();
        const sweep = () =>
          repository
            .sweepTombstones()
            .catch((error: unknown) => logger.warn({ err: error }, 'tombstone sweep failed'));
        const sweeper = setInterval(() => void sweep(), TOMBSTONE_SWEEP_MS).unref();
        return async () => {
          clearInterval(sweeper);
          settings.stop();
          breakers.shutdown();
          await Promise.all([dispatcher.close(), insecureDispatcher.close()]);
        };
      },
    };
  },
};
