import { randomUUID } from 'node:crypto';
import type { Connection } from 'mongoose';
import type { Broker, ConsumerSpec } from '@pack/broker';
import {
  createEnvelope,
  generateResultEvent,
  maySeeCosts,
  type GeneralSettings,
  type Role,
} from '@pack/contracts';
import { NotFoundError } from '@pack/errors';
import type { AnyRoute } from '@pack/http-kit';
import { currentContext, type Logger } from '@pack/logging';
import type { LlmGatewayConfig } from './config';
import { CallRepository } from './data/call-repository';
import { RollupRepository } from './data/rollup-repository';
import { Dashboard } from './domain/dashboard';
import { Generation, type GenerationObserver } from './domain/generation';
import type { EffectiveModel } from './domain/llm-models';
import type { LlmModelStore } from './domain/model';
import type { OwnedProcessors } from './domain/model-usage';
import { forgettingStore, ModelProfiles } from './domain/model-profiles';
import { reliableAdapter, type CallObserver, type Dispatchers } from './domain/reliable-adapter';
import { DEFAULT_RETRY_POLICY, type Breakers } from './domain/reliability';
import { dashboardRoutes } from './http/dashboard-routes';
import { generateConsumer } from './messaging/generate-consumer';
import { RollupBatcher } from './domain/rollup-batch';

const SOURCE = 'llm-gateway';

/** A lookup of a model that is not there: null, not an error. */
export function orNullWhenMissing(error: unknown): null {
  if (error instanceof NotFoundError) return null;
  throw error;
}

export interface GenerationWiring {
  config: LlmGatewayConfig;
  connection: Connection;
  broker: Broker;
  logger: Logger;
  dispatchers: Dispatchers;
  breakers: Breakers;
  observer: CallObserver;
  generationObserver: GenerationObserver;
  settings: () => GeneralSettings;
  load: (id: number) => Promise<EffectiveModel | null>;
  /** Which processors a service owner's dashboard shows. */
  owned: OwnedProcessors;
}

/** Generation through the broker, its call records and rollups, and the dashboard. */
export function generationParts(w: GenerationWiring) {
  const calls = new CallRepository(w.connection);
  const rollups = new RollupRepository(w.connection);
  const profiles = new ModelProfiles(w.load, w.config.LLM_MODEL_CACHE_MS);
  const policy = DEFAULT_RETRY_POLICY;
  const generation = new Generation({
    calls,
    rollups: new RollupBatcher(rollups),
    profiles,
    leaseMs: w.config.LLM_CALL_LEASE_MS,
    owner: `${SOURCE}-${randomUUID().slice(0, 8)}`,
    adapterFor: (model) => reliableAdapter(model, w.dispatchers, w.breakers, w.observer, policy),
    publish: (result) =>
      w.broker.publish(
        // Each kind of result on its own routing key: its requester's queue alone receives it.
        createEnvelope(generateResultEvent(result.reply_kind), result, {
          source: SOURCE,
          // The same id on every republish: consumers that dedupe by event id drop repeats too.
          id: `llm-result-${result.request_id}`,
          correlationId: currentContext()?.correlationId ?? result.request_id,
        }),
      ),
    observer: w.generationObserver,
    unexpected: (requestId, error) =>
      w.logger.error({ err: error, request_id: requestId }, 'generate request failed unexpectedly'),
  });
  const routes: AnyRoute[] = dashboardRoutes(new Dashboard(rollups, w.settings, w.owned));
  const consumer: ConsumerSpec = generateConsumer(generation, w.config.LLM_GENERATE_PREFETCH);
  return {
    routes,
    consumer,
    store: (store: LlmModelStore) => forgettingStore(store, profiles),
    maySeeCosts: (role: Role) => maySeeCosts(role, w.settings().charges),
    ensureIndexes: () => rollups.ensureIndexes(),
  };
}
