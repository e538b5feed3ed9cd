import { loadConfig } from '@pack/config';
import type { Principal } from '@pack/contracts';
import { startService, type RunningService, type StartOptions } from '@pack/runtime';
import {
  call,
  seededSecret,
  seedSecret,
  stopAndClean,
  storedDocuments,
  testEnv,
  waitFor,
  type CallResult,
} from '@pack/testkit';
import { llmGatewayEnvSchema, llmGatewayService, type LlmGatewayConfig } from '../src/service';

export const MODELS = '/v1/ai/llm_models/';
export const admin: Principal = { id: 1, username: 'alice', role: 'admin' };
export const owner: Principal = { id: 2, username: 'olivia', role: 'service_owner' };
export const consumer: Principal = { id: 3, username: 'carl', role: 'consumer' };

/** One valid model per provider, with secrets long enough that an admin sees their last four characters. */
export const examples = {
  vendor1: {
    name: 'Chat model',
    provider: 'vendor1',
    model_name: 'gpt-4o-mini',
    prompt: 'You are a careful infrastructure assistant.',
    timeout: 30,
    input_price_per_1m_tokens: '0.15',
    output_price_per_1m_tokens: 0.6,
    extra_data: {
      api_key: seededSecret('vendor1 api_key', { prefix: 'sk-vendor1-PLAINTEXT-', suffix: '1111' }),
      base_url: 'https://api.example.com/v1',
    },
  },
  vendor1_assistant: {
    name: 'Assistant model',
    provider: 'vendor1_assistant',
    model_name: 'gpt-4o',
    prompt: '',
    input_price_per_1m_tokens: '2.5',
    output_price_per_1m_tokens: '10',
    extra_data: {
      VENDOR1_API_KEY: seededSecret('assistant key', { prefix: 'sk-assistant-PLAINTEXT-', suffix: '2222' }),
      VENDOR1_ASSISTANT_ID: 'asst_abc123',
    },
  },
  vendor2: {
    name: 'Messages model',
    provider: 'vendor2',
    model_name: 'claude-sonnet',
    prompt: 'Answer briefly.',
    input_price_per_1m_tokens: 3,
    output_price_per_1m_tokens: 15,
    extra_data: {
      api_key: seededSecret('vendor2 api_key', { prefix: 'sk-vendor2-PLAINTEXT-', suffix: '3333' }),
      base_url: 'https://messages.example.com/',
    },
  },
  vendor3: {
    name: 'Gemini model',
    provider: 'vendor3',
    model_name: 'gemini-flash',
    prompt: 'Answer briefly.',
    input_price_per_1m_tokens: '0.075',
    output_price_per_1m_tokens: '0.3',
    extra_data: {
      api_key: seededSecret('vendor3 api_key', { prefix: 'key-vendor3-PLAINTEXT-', suffix: '4444' }),
      base_url: null,
    },
  },
  genai: {
    name: 'Enterprise gateway',
    provider: 'genai',
    model_name: 'corp-llm',
    prompt: 'Follow the corporate policy.',
    timeout: 120,
    extra_data: {
      token_url: 'https://auth.example.com/oauth/token',
      request_url: 'https://llm.example.com/v1/chat',
      credentials: `Basic ${seedSecret('genai credentials', 'Z2VuYWktUExBSU5URVhULTU1NTU=')}`,
      verify_ssl: false,
      request_payload: { temperature: 0.2, $schema: 'x', 'a.b': [[1]] },
    },
  },
} as const;

/** The llm-gateway service in this process, on its own database and broker namespace. */
export class LlmGatewayHarness {
  private constructor(
    readonly service: RunningService<LlmGatewayConfig>,
    readonly env: Record<string, string>,
  ) {}

  static async start(
    overrides: Record<string, string> = {},
    options: StartOptions = {},
  ): Promise<LlmGatewayHarness> {
    // Nothing answers there: the settings cache keeps the defaults unless a test points it elsewhere.
    const env = testEnv('llm-gateway', { SETTINGS_URL: 'http://127.0.0.1:1', ...overrides });
    const service = await startService(llmGatewayService, loadConfig(llmGatewayEnvSchema, env), options);
    await service.started;
    // Consumers' queues are bound once the broker is ready: an event published earlier is lost.
    await waitFor(() => service.context.broker.isReady(), { what: 'the llm-gateway broker' });
    return new LlmGatewayHarness(service, env);
  }

  call(principal: Principal | null, method: string, path: string, body?: unknown): Promise<CallResult> {
    return call(this.service.url, method, path, { principal, body });
  }

  create = (body: unknown, principal: Principal = admin) => this.call(principal, 'POST', MODELS, body);
  read = (id: number, principal: Principal = admin) => this.call(principal, 'GET', `${MODELS}${id}/`);
  patch = (id: number, body: unknown, principal: Principal = admin) =>
    this.call(principal, 'PATCH', `${MODELS}${id}/`, body);

  /** Every stored live LLM model document, as the database holds it. */
  async storedModels(): Promise<Record<string, unknown>[]> {
    return (await this.allStoredModels()).filter((model) => model.deleted !== true);
  }

  /** Live models and the tombstones of deleted ones (kept until their deletion is published). */
  async allStoredModels(): Promise<Record<string, unknown>[]> {
    return (await storedDocuments(this.service)).llm_models ?? [];
  }

  /** Every document of every collection of the service's database. */
  rawDatabase(): Promise<Record<string, Record<string, unknown>[]>> {
    return storedDocuments(this.service);
  }

  /** Another replica: the same database and broker namespace, so the two compete for requests. */
  async replica(): Promise<LlmGatewayHarness> {
    return LlmGatewayHarness.start(this.env);
  }

  /** Stops the service and removes its database and queues. */
  stopAndDrop(): Promise<void> {
    return stopAndClean(this.service);
  }
}
