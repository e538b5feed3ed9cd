import { loadConfig } from '@pack/config';
import { events, type LlmModelSnapshot, type Principal, type ServiceSnapshot } from '@pack/contracts';
import { startService, type RunningService } from '@pack/runtime';
import {
  FakeSettings,
  owner,
  startEmptyOwner,
  startHarness,
  waitFor,
  type CallResult,
  type Companions,
  type Harness,
  type HarnessOptions,
  type ServiceKind,
} from '@pack/testkit';
import {
  MODELS_COLLECTION,
  orchestratorEnvSchema,
  orchestratorService,
  SERVICES_COLLECTION,
  type OrchestratorConfig,
} from '../src/service';

export { admin, consumer, otherOwner, owner } from '@pack/testkit';
export const PROCESSORS = '/v1/ai/processors/';

interface OrchestratorHelpers {
  create(body: unknown, principal?: Principal): Promise<CallResult>;
  read(id: number, principal?: Principal): Promise<CallResult>;
  patch(id: number, body: unknown, principal?: Principal): Promise<CallResult>;
  remove(id: number, principal?: Principal): Promise<CallResult>;
  /** Publishes a Service snapshot as the catalog would and waits until this replica holds it. */
  knowService(snapshot: Partial<ServiceSnapshot> & { service_id: number }): Promise<void>;
  /** Publishes a model snapshot as the llm-gateway would and waits until this replica holds it. */
  knowModel(snapshot: Partial<LlmModelSnapshot> & { llm_model_id: number }): Promise<void>;
}

type Running = RunningService<OrchestratorConfig>;

/** The pipeline orchestrator in this process, on its own database and broker namespace. */
export const orchestratorKind: ServiceKind<Running, Companions, OrchestratorHelpers, HarnessOptions> = {
  name: 'pipeline-orchestrator',
  // The catalog and the llm-gateway, asked for what the projections lack, own nothing here
  // unless the test points them elsewhere: the projections alone decide.
  // The settings: a fake answering the defaults (the orchestrator acts on nothing before it read them).
  async companions({ env = {} }) {
    const settings = env.SETTINGS_URL ? undefined : await new FakeSettings().start();
    const owners = env.CATALOG_URL && env.LLM_GATEWAY_URL ? undefined : await startEmptyOwner();
    return {
      env: {
        ...(settings && { SETTINGS_URL: settings.url }),
        ...(owners && { CATALOG_URL: owners.url, LLM_GATEWAY_URL: owners.url }),
      },
      close: async () => {
        await owners?.close();
        await settings?.stop();
      },
    };
  },
  start: (env, options) => startService(orchestratorService, loadConfig(orchestratorEnvSchema, env), options),
  ready: (service) =>
    waitFor(async () => (await fetch(`${service.url}/readyz`)).status === 200, {
      what: 'orchestrator ready',
    }),
  extend: (orchestrator) => {
    const projected = (collection: string, id: number, version: number) =>
      waitFor(
        async () =>
          ((await orchestrator.collection(collection).findOne({ _id: id as never }))?.version ?? 0) >=
          version,
        { what: `${collection} ${id} at version ${version}` },
      );
    return {
      create: (body, principal = owner) => orchestrator.as(principal, 'POST', PROCESSORS, body),
      read: (id, principal = owner) => orchestrator.as(principal, 'GET', `${PROCESSORS}${id}/`),
      patch: (id, body, principal = owner) =>
        orchestrator.as(principal, 'PATCH', `${PROCESSORS}${id}/`, body),
      remove: (id, principal = owner) => orchestrator.as(principal, 'DELETE', `${PROCESSORS}${id}/`),
      async knowService(snapshot) {
        const full: ServiceSnapshot = {
          name: `Service ${snapshot.service_id}`,
          owner: { id: owner.id, name: owner.username },
          deleted: false,
          version: 1,
          ...snapshot,
        };
        await orchestrator.publish(events.serviceChanged, full);
        await projected(SERVICES_COLLECTION, full.service_id, full.version);
      },
      async knowModel(snapshot) {
        const full: LlmModelSnapshot = {
          name: `Model ${snapshot.llm_model_id}`,
          provider: 'vendor1',
          model_name: 'gpt-test',
          timeout: 60,
          deleted: false,
          version: 1,
          ...snapshot,
        };
        await orchestrator.publish(events.llmModelChanged, full);
        await projected(MODELS_COLLECTION, full.llm_model_id, full.version);
      },
    };
  },
};

export type OrchestratorHarness = Harness<Running, Companions, OrchestratorHelpers, HarnessOptions>;

export const startOrchestrator = (options: HarnessOptions = {}): Promise<OrchestratorHarness> =>
  startHarness(orchestratorKind, options);

/** A valid create body for a Service and model the test made known. */
export function processorBody(over: Record<string, unknown> = {}) {
  return {
    name: 'Config generator',
    service: 1,
    kind: 'config',
    llm_model: 1,
    prompt: 'Write the configuration.',
    ...over,
  };
}
