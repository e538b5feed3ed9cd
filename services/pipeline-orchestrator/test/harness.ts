import { loadConfig } from '@pack/config';
import { events, type LlmModelSnapshot, type Principal, type ServiceSnapshot } from '@pack/contracts';
import { startService, type RunningService, type StartOptions } from '@pack/runtime';
import {
  call,
  publishEvent,
  startEmptyOwner,
  stopAndClean,
  testEnv,
  waitFor,
  type CallResult,
} from '@pack/testkit';
import {
  MODELS_COLLECTION,
  orchestratorEnvSchema,
  orchestratorService,
  SERVICES_COLLECTION,
  type OrchestratorConfig,
} from '../src/service';

export const PROCESSORS = '/v1/ai/processors/';
export const admin: Principal = { id: 1, username: 'ada', role: 'admin' };
export const owner: Principal = { id: 10, username: 'olivia', role: 'service_owner' };
export const otherOwner: Principal = { id: 11, username: 'oscar', role: 'service_owner' };
export const consumer: Principal = { id: 20, username: 'carla', role: 'consumer' };

/** The pipeline orchestrator in this process, on its own database and broker namespace. */
export class OrchestratorHarness {
  private constructor(
    readonly service: RunningService<OrchestratorConfig>,
    readonly env: Record<string, string>,
    private readonly owners?: { close(): Promise<void> },
  ) {}

  /** `env` of another harness makes a second replica on the same database and namespace. */
  static async start(
    overrides: Record<string, string> = {},
    options: StartOptions = {},
  ): Promise<OrchestratorHarness> {
    // The catalog and the llm-gateway, asked for what the projections lack, own nothing here
    // unless the test points them elsewhere: the projections decide, as before issue 21.
    const owners = overrides.CATALOG_URL && overrides.LLM_GATEWAY_URL ? undefined : await startEmptyOwner();
    const env = testEnv('pipeline-orchestrator', {
      ...(owners && { CATALOG_URL: owners.url, LLM_GATEWAY_URL: owners.url }),
      ...overrides,
    });
    const service = await startService(orchestratorService, loadConfig(orchestratorEnvSchema, env), options);
    await service.started;
    await waitFor(async () => (await fetch(`${service.url}/readyz`)).status === 200, {
      what: 'orchestrator ready',
    });
    return new OrchestratorHarness(service, env, owners);
  }

  call(principal: Principal | null, method: string, path: string, body?: unknown): Promise<CallResult> {
    return call(this.service.url, method, path, { principal, body });
  }

  create = (body: unknown, principal: Principal = owner) => this.call(principal, 'POST', PROCESSORS, body);
  read = (id: number, principal: Principal = owner) => this.call(principal, 'GET', `${PROCESSORS}${id}/`);
  patch = (id: number, body: unknown, principal: Principal = owner) =>
    this.call(principal, 'PATCH', `${PROCESSORS}${id}/`, body);
  remove = (id: number, principal: Principal = owner) =>
    this.call(principal, 'DELETE', `${PROCESSORS}${id}/`);

  collection(name: string) {
    return this.service.context.mongo.connection.collection(name);
  }

  /** Publishes a Service snapshot as the catalog would and waits until this replica holds it. */
  async knowService(snapshot: Partial<ServiceSnapshot> & { service_id: number }): Promise<void> {
    const full: ServiceSnapshot = {
      name: `Service ${snapshot.service_id}`,
      owner: { id: owner.id, name: owner.username },
      deleted: false,
      version: 1,
      ...snapshot,
    };
    await publishEvent(process.env.AMQP_URL!, this.env.BROKER_NAMESPACE!, events.serviceChanged, full);
    await this.projected(SERVICES_COLLECTION, full.service_id, full.version);
  }

  /** Publishes a model snapshot as the llm-gateway would and waits until this replica holds it. */
  async knowModel(snapshot: Partial<LlmModelSnapshot> & { llm_model_id: number }): Promise<void> {
    const full: LlmModelSnapshot = {
      name: `Model ${snapshot.llm_model_id}`,
      provider: 'vendor1',
      model_name: 'gpt-test',
      timeout: 60,
      deleted: false,
      version: 1,
      ...snapshot,
    };
    await publishEvent(process.env.AMQP_URL!, this.env.BROKER_NAMESPACE!, events.llmModelChanged, full);
    await this.projected(MODELS_COLLECTION, full.llm_model_id, full.version);
  }

  private async projected(collection: string, id: number, version: number): Promise<void> {
    await waitFor(
      async () =>
        ((await this.collection(collection).findOne({ _id: id as never }))?.version ?? 0) >= version,
      { what: `${collection} ${id} at version ${version}` },
    );
  }

  async stop(): Promise<void> {
    await this.service.stop();
    await this.owners?.close();
  }

  async stopAndClean(): Promise<void> {
    await stopAndClean(this.service);
    await this.owners?.close();
  }
}

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
