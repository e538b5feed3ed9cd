import { randomUUID } from 'node:crypto';
import { maySeeCosts, type Role } from '@pack/contracts';
import { ID_CLAIMS } from '@pack/db';
import type { ServiceDefinition } from '@pack/runtime';
import { fieldSecretCodec, keyRingFromEnv } from '@pack/secrets';
import { createTargetDispatcher, targetUrlCheck } from '@pack/net-guard';
import { SettingsCache } from '@pack/settings-client';
import { TokenCache } from '@pack/llm-providers';
import { CallRepository, LLM_CALL_CLAIMS_COLLECTION } from './data/call-repository';
import { LLM_MODELS_COLLECTION, LlmModelRepository } from './data/llm-model-repository';
import { ModelUsageRepository } from './data/model-usage-repository';
import { RollupRepository } from './data/rollup-repository';
import { ConnectionTester } from './domain/providers/connection-test';
import { Dashboard } from './domain/calls/dashboard';
import { Generation } from './domain/generation/generation';
import { LlmModels } from './domain/models/llm-models';
import { forgettingStore, ModelProfiles } from './domain/models/model-profiles';
import { reliableAdapter } from './domain/providers/reliable-adapter';
import { Breakers, DEFAULT_RETRY_POLICY } from './domain/providers/reliability';
import { RollupBatcher } from './domain/calls/rollup-batch';
import { ConnectionTestCalls } from './domain/calls/test-calls';
import { dashboardRoutes } from './http/dashboard-routes';
import { llmModelRoutes } from './http/routes';
import { generateConsumer, resultPublisher } from './messaging/generate-consumer';
import { processorConsumer } from './messaging/processor-consumer';
import { llmMetrics } from './metrics';
import { modelTargetPolicy, type LlmGatewayConfig } from './config';

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
    const calls = new CallRepository(mongo.connection, config.RECORD_LINGER_MS);
    const rollups = new RollupRepository(mongo.connection);
    const targets = modelTargetPolicy(config);
    const dispatchers = {
      dispatcher: createTargetDispatcher(targets),
      insecureDispatcher: createTargetDispatcher({ ...targets, rejectUnauthorized: false }),
      // genai access tokens, shared by every adapter of this replica (generation and connection tests).
      tokenCache: new TokenCache(),
    };
    const { observer, breakerState, generation: generationObserver } = llmMetrics(metrics);
    const breakers = new Breakers(undefined, breakerState);
    const settings = new SettingsCache({
      settingsUrl: config.SETTINGS_URL,
      internalSecret: config.PACK_INTERNAL_SECRET,
      service: SERVICE,
      logger,
    });

    // Generation reads profiles through LlmModels: the same decryption, cached.
    const profiles: ModelProfiles = new ModelProfiles(
      (id) => models.forGeneration(id),
      config.LLM_MODEL_CACHE_MS,
    );
    const models = new LlmModels(
      forgettingStore(repository, profiles),
      fieldSecretCodec(keyRingFromEnv(config), {
        context: llmSecretContext,
        logFields: (modelId: number, field) => ({ model_id: modelId, field: `extra_data.${field}` }),
        plaintext: 'refused',
        logger,
      }),
      usage,
      targetUrlCheck(targets),
      () => outbox.kick(),
    );
    const rollupBatcher = new RollupBatcher(rollups, config.ROLLUP_LINGER_MS);
    // Connection tests answer once their share is stored: no linger for an admin's answer.
    const testRollups = new RollupBatcher(rollups);
    // The currency the calls' prices and costs are in, recorded with each call.
    const currency = () => settings.confirmed().currency.currency;
    const generation = new Generation({
      calls,
      rollups: rollupBatcher,
      currency,
      profiles,
      leaseMs: config.LLM_CALL_LEASE_MS,
      owner: `${SERVICE}-${randomUUID().slice(0, 8)}`,
      adapterFor: (model) => reliableAdapter(model, dispatchers, breakers, observer, DEFAULT_RETRY_POLICY),
      publish: resultPublisher(broker, SERVICE),
      observer: generationObserver,
      unexpected: (requestId, error) =>
        logger.error({ err: error, request_id: requestId }, 'generate request failed unexpectedly'),
      rollupLost: (requestId, error) =>
        logger.error(
          { err: error, request_id: requestId },
          'rollup not stored: the call is in the records only',
        ),
    });
    const testCalls = new ConnectionTestCalls({ calls, rollups: testRollups, currency });
    const tester = new ConnectionTester(dispatchers, breakers, observer, testCalls);
    const costsFor = (role: Role) => maySeeCosts(role, settings.confirmed().charges);
    // Which processors a service owner's dashboard shows: `usage`.
    const dashboard = new Dashboard(rollups, () => settings.confirmed(), usage);
    return {
      routes: [
        ...llmModelRoutes(models, tester, costsFor, () => settings.confirmed().currency.ENABLED),
        ...dashboardRoutes(dashboard),
      ],
      // Id claims and call claims only matter while a copy of their request may come.
      retained: [ID_CLAIMS, { collection: LLM_CALL_CLAIMS_COLLECTION, key: 'claimed_at' }],
      consumers: [
        settings.consumer(),
        generateConsumer(generation, config.LLM_GENERATE_PREFETCH),
        processorConsumer(usage),
      ],
      // Nothing is consumed or started on default settings: the first fetch comes first.
      before: settings.firstLoadStep(),
      async onStart() {
        await Promise.all([repository.ensureIndexes(), usage.ensureIndexes(), rollups.ensureIndexes()]);
        const sweep = () =>
          repository
            .sweepTombstones()
            .catch((error: unknown) => logger.warn({ err: error }, 'tombstone sweep failed'));
        const sweeper = setInterval(() => void sweep(), TOMBSTONE_SWEEP_MS).unref();
        return async () => {
          clearInterval(sweeper);
          // The consumers have stopped: the rollups of the calls they answered go now.
          await rollupBatcher.flush();
          settings.stop();
          breakers.shutdown();
          await Promise.all([dispatchers.dispatcher.close(), dispatchers.insecureDispatcher.close()]);
        };
      },
    };
  },
};
